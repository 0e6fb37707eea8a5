//! Integration tests that need nothing beyond the repository: fixtures are written by bagscope or
//! made in the test (`cargo xtask test unit`).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod crates;
mod deferred;
mod docs;
mod expr;
mod play;
mod undecodable;
