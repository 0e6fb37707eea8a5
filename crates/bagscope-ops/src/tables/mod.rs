//! Messages as tables and files: [`export`] (to a ROS 1 bag, MCAP, rosbag2, Parquet; ROS 1 ↔
//! ROS 2), [`csv`], [`arrow`] (typed Arrow columns) and [`catalog`] (a fleet's recordings in
//! one table).

pub mod arrow;
pub mod catalog;
pub mod csv;
pub mod export;
pub mod lerobot;
