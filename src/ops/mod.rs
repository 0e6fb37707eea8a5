//! Operations over any open recording, through [`crate::Bag`] alone: `check` (read and
//! verify everything), `series` (one field over time), `csv`, `export`, `info`, `gen`
//! (typed code from a recording's definitions).

pub mod check;
pub mod csv;
pub mod export;
pub mod gen;
pub mod info;
pub mod series;
