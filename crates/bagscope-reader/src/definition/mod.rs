//! Message definition languages and where definitions come from.
//!
//! - [`msg`]: the `.msg` language in its two dialects, `ros1msg` and `ros2msg`
//!   ([`msg::Dialect`]), parsed into a tree of types; the ROS 1 md5sum.
//! - [`hash`]: the ROS 2 type hash of REP 2011 (`RIHS01_…`) of a parsed definition.
//! - [`idl`]: OMG IDL schemas (`ros2idl`, `omgidl`) compiled into the same tree.
//! - [`sources`]: definitions a recording does not store, from `.msg` search paths or the
//!   standard interfaces bagscope ships.

pub mod hash;
pub mod idl;
pub mod msg;
pub mod sources;
