//! bagscope: see, replay and analyse robot recordings (ROS 1 bags of every format, rosbag2
//! directories with SQLite or MCAP storage, standalone MCAP).
//!
//! This crate is the `bagscope` executable (the desktop app and the command line) and one
//! name for the crates under it, each of which can be used alone (`ARCHITECTURE.md` is the
//! map):
//!
//! - [`bagscope_reader`]: storage, definitions, encodings, the open recording ([`Bag`]),
//!   several recordings as one; re-exported here module by module ([`storage`], [`bag`], ...);
//! - [`ops`] (`bagscope-ops`): operations over an open recording, and [`demo`];
//! - [`live`] (`bagscope-live`): playing onto and recording from live ROS 1 and ROS 2 systems;
//! - `app` (`bagscope-app`, feature `gui`): the desktop app;
//! - [`cli`]: the command line, [`cli::main`] the executable's whole body (the Python
//!   package's `bagscope` command calls it too).

#![forbid(unsafe_code)]

// The command line's files name this crate `bagscope`, as they did inside the executable.
extern crate self as bagscope;

pub mod cli;

#[cfg(feature = "gui")]
pub use bagscope_app as app;
pub use bagscope_live as live;
pub use bagscope_ops as ops;
pub use bagscope_ops::demo;
pub use bagscope_reader;
pub use bagscope_reader::{
    bag, definition, encoding, error, expr, iter, merge, settings, storage, timefmt,
};
pub use bagscope_reader::{
    Bag, BagWriter, Bytes, Chunk, ChunkKind, Compression, Connection, ConnectionSpec, Error,
    Filter, IndexEntry, Message, MessageRef, MessageTables, Result, Summary, Topic, Version,
    WriteOptions,
};
