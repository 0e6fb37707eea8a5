//! Live ROS graphs: Debian's ROS 1 (roscore, rosbag, rostopic) and ROS 2 through rclpy and Cyclone
//! DDS, each DDS test in a network namespace of its own with only loopback (`cargo xtask test
//! live`).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod ros1_live;
mod ros1_peer;
mod ros2_live;
mod serve;
