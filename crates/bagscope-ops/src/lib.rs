//! Operations over any open recording, through [`bagscope_reader::Bag`] alone (reading and
//! verifying everything, and a field over time, are the reader's own `check` and `series`):
//!
//! - [`spatial`]: the transform tree, robot models, the 3D scene;
//! - [`media`]: images and compressed video;
//! - [`tables`]: export and conversion, csv, Arrow and Parquet, the fleet catalog;
//! - [`reports`]: info, log, diagnostics, timing, find, compare, state rows;
//! - [`script`]: Lua scripts (series scripts, PlotJuggler's custom functions);
//! - [`open`]: a recording as the app and the command line open it (MP4 files, the virtual
//!   topics of message scripts);
//! - [`gen`]: typed code (C++, Python, Rust) from a recording's definitions;
//! - [`demo`]: the demo recording;
//! - and what those share: [`geom`] (poses and boxes), [`timefmt`] (times, sizes and counts for
//!   people, and as typed), [`bookmarks`] (kept in recordings), [`decoded`] (the messages of
//!   some connections, decoded), [`Error`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod media;
pub mod reports;
pub mod spatial;
pub mod tables;

pub mod demo;
pub mod gen;
pub mod open;
pub mod script;

pub mod bookmarks;
pub mod decoded;
pub mod geom;
pub mod timefmt;

mod error;
mod xml;
pub mod yaml;
pub use error::{Error, Result};
