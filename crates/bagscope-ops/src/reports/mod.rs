//! What a recording says: [`info`], [`log`] (rosout), [`diagnostics`], [`timing`] (periods,
//! gaps, stamp delays), [`find`] (messages where a field meets a condition), [`compare`]
//! (runs side by side), [`state_rows`] (a field's values as bands over time) and [`expect`]
//! (a recording checked against a rules file).

pub mod compare;
pub mod diagnostics;
pub mod expect;
pub mod find;
pub mod info;
pub mod log;
pub mod state_rows;
pub mod timing;
