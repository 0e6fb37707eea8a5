//! Integration tests over the shared corpora (`../shared/bags`, `../shared/bags2`) and the peer
//! readers and writers `.ci/run` installs (rosbags, the mcap package, protobuf, the Foxglove SDK,
//! an HTTP server on loopback) (`cargo xtask test corpus`).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod bookmarks;
mod camera;
mod cli_small;
mod compare;
mod convert;
mod convert_ros;
mod damaged_mcap_rosbag2;
mod damaged_other_storages;
mod decode;
mod diagnostics;
mod encodings;
mod expect;
mod export;
mod foxglove_paths;
mod gen;
mod idl;
mod images;
mod log;
mod mcap;
mod merge;
mod migrate;
mod peer_rosbags;
mod remote;
mod robot;
mod robot_mesh;
mod ros1_corpus;
mod ros2_mcap_corpus;
mod rosbag2_layout;
mod scene;
mod scene_more;
mod scene_steps;
mod scripts;
mod tf;
mod track;
mod video;
mod video_mp4;
mod virtual_topics;
