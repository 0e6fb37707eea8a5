//! Live systems: recorded messages played onto a running ROS graph, and live messages
//! recorded to a file (`bagscope play`, `bagscope record`). The transports speak the wire
//! protocols themselves (no ROS install); [`play`] and [`record`] hold what does not depend
//! on the transport: the schedule, the controls, the files written.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod foxglove;
pub mod play;
pub mod record;
pub mod ros1;
pub mod ros2;
mod source;

pub use error::{Error, Result};

/// Now, ns since the Unix epoch (a received message's time).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
