//! bagscope: see, replay and analyse robot recordings (ROS 1 bags of every format, rosbag2
//! directories with SQLite or MCAP storage, standalone MCAP).
//!
//! This crate is the `bagscope` executable: the desktop app and the command line ([`cli`],
//! [`cli::main`] the executable's whole body, which the Python package's `bagscope` command
//! calls too). The library is in the crates under it, each used by its own name
//! (`ARCHITECTURE.md` is the map):
//!
//! - `bagscope_reader`: storage, definitions, encodings, the open recording (`Bag`), several
//!   recordings as one;
//! - `bagscope_ops`: operations over an open recording, and the demo recording;
//! - `bagscope_live`: playing onto and recording from live ROS 1 and ROS 2 systems, serving
//!   to Foxglove clients;
//! - `bagscope_app` (feature `gui`): the desktop app.

#![forbid(unsafe_code)]

pub mod cli;
