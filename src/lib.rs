//! bagscope: read, recover and write ROS 1 bag files (format 2.0 and 1.2), decode their
//! messages from the definitions stored in the bag.
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

#[cfg(feature = "gui")]
pub mod app;
pub mod bag;
pub mod check;
pub mod chunk;
pub mod csv;
pub mod decode;
pub mod defs;
pub mod demo;
pub mod error;
pub mod export;
pub mod info;
pub mod iter;
pub mod mcap;
pub mod msgdef;
mod old;
pub mod record;
pub mod rosbag2;
mod scan;
pub mod series;
mod tables;
pub mod timefmt;
mod v12;
pub mod writer;

pub use bag::{
    Bag, Bytes, Chunk, ChunkKind, Connection, Filter, IndexEntry, Message, MessageTables, Summary,
    Topic, Version,
};
pub use error::{Error, Result};
pub use record::Compression;
pub use writer::{BagWriter, ConnectionSpec, WriteOptions};
