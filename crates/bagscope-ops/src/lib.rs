//! Operations over any open recording, through [`bagscope_reader::Bag`] alone: `check` (read and
//! verify everything), `series` (one field over time), `csv`, `export`, `info`, `gen`
//! (typed code from a recording's definitions), `image` (camera messages to pixels), `log` (rosout over a recording), `find` (messages where a field meets a condition), `timing` (periods, gaps, stamp delays).

#![forbid(unsafe_code)]

pub mod arrow;
pub mod bookmarks;
pub mod catalog;
pub mod compare;
pub mod csv;
pub mod decoded;
pub mod diagnostics;
mod error;
pub mod export;
pub mod find;
pub mod gen;
pub mod geom;
pub mod image;
pub mod info;
pub mod log;
pub mod robot;
pub mod scene;
pub mod state;
pub mod tf;
pub mod timefmt;
pub mod timing;
pub mod video;

pub mod demo;
pub use error::{Error, Result};
