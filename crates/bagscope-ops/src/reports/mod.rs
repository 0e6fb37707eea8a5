//! What a recording says: [`info`], [`log`] (rosout), [`diagnostics`], [`timing`] (periods,
//! gaps, stamp delays), [`find`] (messages where a field meets a condition), [`compare`]
//! (runs side by side) and [`state_rows`] (a field's values as bands over time).

pub mod compare;
pub mod diagnostics;
pub mod find;
pub mod info;
pub mod log;
pub mod state_rows;
pub mod timing;
