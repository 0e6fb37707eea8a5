//! The reader's integration tests: recordings written by the reader's own writers, read back,
//! cut and damaged (`cargo test -p bagscope-reader` runs them with the unit and doc tests;
//! nothing beyond this crate is built).
#![allow(clippy::unwrap_used)]

#[path = "../kit/mod.rs"]
mod kit;

mod damaged_ros1;
mod writer;
