//! Operations over any open recording, through [`crate::Bag`] alone: `check` (read and
//! verify everything), `series` (one field over time), `csv`, `export`, `info`, `gen`
//! (typed code from a recording's definitions), `image` (camera messages to pixels), `log` (rosout over a recording), `find` (messages where a field meets a condition), `timing` (periods, gaps, stamp delays).

pub mod arrow;
pub mod catalog;
pub mod check;
pub mod csv;
pub mod export;
pub mod find;
pub mod gen;
pub mod image;
pub mod info;
pub mod log;
pub mod scene;
pub mod series;
pub mod tf;
pub mod timing;
pub mod topdown;
