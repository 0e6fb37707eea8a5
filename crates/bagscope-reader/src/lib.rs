//! bagscope's reader: read and recover ROS recordings (ROS 1 bags of every format, rosbag2 directories
//! with SQLite or MCAP storage, standalone MCAP), decode their messages (ROS 1 serialization,
//! CDR, protobuf, JSON) from the definitions stored in them or found elsewhere, and write ROS 1
//! bags ([`BagWriter`]), MCAP ([`storage::mcap::writer::McapWriter`]) and rosbag2
//! ([`storage::rosbag2::writer`]).
//!
//! Layers (`ARCHITECTURE.md` is the map): [`error`] and [`OpenOptions`] → [`storage`] (formats,
//! one interface) → [`definition`] (message definitions) → [`encoding`] (bytes to values) and
//! [`expr`] (the expression language) → [`bag`] (an open recording: tables, cache, message and
//! range access, [`bag::iter`] in time order, [`bag::merge`] of several) → [`check`] (read and
//! verify everything) and [`series`] (a field or an expression over time). Nothing is global:
//! a recording is opened with its options ([`Bag::open_with`]) and reads by them.
//! The operations (`bagscope-ops`), the live transports (`bagscope-live`), the app
//! (`bagscope-app`) and the command line (`bagscope`) are crates of their own on top.
//!
//! Open a recording, list its topics, read one topic's messages in time order and decode
//! them (here a recording written with [`BagWriter`]):
//!
//! ```
//! # use bagscope_reader::{BagWriter, ConnectionSpec, WriteOptions};
//! # let dir = std::env::temp_dir().join(format!("bagscope-doc-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("speed.bag");
//! # let mut w = BagWriter::create(&path, WriteOptions::default())?;
//! # let c = w.add_connection(ConnectionSpec {
//! #     topic: "/speed".into(),
//! #     datatype: "std_msgs/Float64".into(),
//! #     md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
//! #     message_definition: "float64 data\n".into(),
//! #     ..Default::default()
//! # });
//! # for i in 0..100u64 {
//! #     w.write(c, 1_700_000_000_000_000_000 + i * 20_000_000, &(i as f64).to_le_bytes())?;
//! # }
//! # w.finish()?;
//! let bag = bagscope_reader::Bag::open(&path)?;
//! for t in &bag.summary().topics {
//!     println!("{} {} {}", t.name, t.datatype, t.message_count);
//! }
//! let speed = bag.connections_of_topics(&["/speed"])?;
//! let filter = bagscope_reader::Filter {
//!     connections: Some(speed),
//!     ..Default::default()
//! };
//! let mut n = 0;
//! for m in bag.messages(&filter)? {
//!     let m = m?;
//!     let (plan, _) = bag.plan(m.conn)?;
//!     let decoded = plan.decode(&m.data)?;
//!     assert_eq!(plan.def.root().name, "std_msgs/Float64");
//!     assert!(decoded.field(&plan.def, "data").is_some());
//!     n += 1;
//! }
//! assert_eq!(n, 100, "2 s of speed at 50 Hz");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// No unsafe code: memory safety rests on the compiler, which is also why the fuzz campaign
// may run without AddressSanitizer (scripts/dev/fuzz_campaign.sh).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bag;
pub mod check;
pub mod definition;
pub mod encoding;
pub mod error;
pub mod expr;
mod options;
pub mod series;
pub mod storage;

pub use bag::{
    Bag, Bytes, Chunk, ChunkKind, Connection, Filter, IndexEntry, Message, MessageRef,
    MessageTables, Summary, Topic, Version,
};
pub use error::{Error, Result};
pub use options::{machine_threads, IndexCache, OpenOptions};
pub use storage::compression::Compression;
pub use storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};
