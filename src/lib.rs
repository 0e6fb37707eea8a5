//! bagscope: read and recover ROS recordings (ROS 1 bags of every format, rosbag2 directories
//! with SQLite or MCAP storage, standalone MCAP), decode their messages (ROS 1 serialization,
//! CDR) from the definitions stored in them or found elsewhere, write ROS 1 bags.
//!
//! Layers: [`storage`] (formats, one interface) → [`bag`] (an open recording: tables, cache,
//! message and range access) → [`encoding`] with [`definition`] (bytes to values) →
//! [`ops`] (check, series, csv, export, info); the app and the command line sit on top.
//!
//! ```no_run
//! let bag = bagscope::Bag::open("run.bag")?;
//! for t in &bag.summary().topics {
//!     println!("{} {} {}", t.name, t.datatype, t.message_count);
//! }
//! for m in bag.messages(&bagscope::Filter::default())? {
//!     let m = m?;
//!     println!("{} {} bytes", m.time_ns, m.data.len());
//! }
//! # Ok::<(), bagscope::Error>(())
//! ```

// No unsafe code: memory safety rests on the compiler, which is also why the fuzz campaign
// may run without AddressSanitizer (scripts/fuzz_campaign.sh).
#![forbid(unsafe_code)]

#[cfg(feature = "gui")]
pub mod app;
pub mod bag;
pub mod definition;
pub mod demo;
pub mod encoding;
pub mod error;
pub mod iter;
pub mod merge;
pub mod ops;
pub mod settings;
pub mod storage;
pub mod timefmt;

pub use bag::{
    Bag, Bytes, Chunk, ChunkKind, Connection, Filter, IndexEntry, Message, MessageTables, Summary,
    Topic, Version,
};
pub use error::{Error, Result};
pub use storage::ros1::record::Compression;
pub use storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};
