//! bagscope: read and recover ROS recordings (ROS 1 bags of every format, rosbag2 directories
//! with SQLite or MCAP storage, standalone MCAP), decode their messages (ROS 1 serialization,
//! CDR) from the definitions stored in them or found elsewhere, write ROS 1 bags.
//!
//! Layers (`ARCHITECTURE.md` is the map): [`error`], [`settings`] → [`storage`] (formats, one
//! interface) → [`definition`] (message definitions) → [`encoding`] (bytes to values) →
//! [`bag`] (an open recording: tables, cache, message and range access) → [`ops`] (check,
//! series, csv, export, info, ...); the app and the command line sit on top.
//!
//! Open a recording, list its topics, read one topic's messages in time order and decode
//! them (here the demo recording bagscope writes):
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("bagscope-doc-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("demo.bag");
//! # bagscope::demo::write_demo(&path, 2)?;
//! let bag = bagscope::Bag::open(&path)?;
//! for t in &bag.summary().topics {
//!     println!("{} {} {}", t.name, t.datatype, t.message_count);
//! }
//! let odom = bag.connections_of_topics(&["/odom"])?;
//! let filter = bagscope::Filter {
//!     connections: Some(odom),
//!     ..Default::default()
//! };
//! let mut n = 0;
//! for m in bag.messages(&filter)? {
//!     let m = m?;
//!     let (plan, _) = bag.plan(m.conn)?;
//!     let decoded = plan.decode(&m.data)?;
//!     assert_eq!(plan.def.root().name, "nav_msgs/Odometry");
//!     assert!(decoded.field(&plan.def, "pose").is_some());
//!     n += 1;
//! }
//! assert_eq!(n, 100, "2 s of odometry at 50 Hz");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
pub mod live;
pub mod merge;
pub mod ops;
pub mod settings;
pub mod storage;
pub mod timefmt;

pub use bag::{
    Bag, Bytes, Chunk, ChunkKind, Connection, Filter, IndexEntry, Message, MessageRef,
    MessageTables, Summary, Topic, Version,
};
pub use error::{Error, Result};
pub use storage::ros1::record::Compression;
pub use storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};
