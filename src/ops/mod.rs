//! Operations over any open recording, through [`crate::Bag`] alone: `check` (read and
//! verify everything), `series` (one field over time), `csv`, `export`, `info`.

pub mod check;
pub mod csv;
pub mod export;
pub mod info;
pub mod series;
