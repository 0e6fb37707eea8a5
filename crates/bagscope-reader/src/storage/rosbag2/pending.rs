//! The state an open recording keeps while a rosbag2 SQLite recording's rows are not read
//! yet: the deferred row scan and the blocks of rows it kept for the connections about to be
//! read. Owned here, so that the open recording holds no format's state of its own; it asks
//! [`Pending`] to complete, and keeps what comes back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::{complete, complete_tables, window_rows, Captured, Deferred, WindowRows};
use crate::error::{Error, Result};
use crate::storage::{Filter, MessageTables, Source, Summary};

/// A recording's deferred row scan, until it is complete.
pub(crate) struct Pending {
    /// The deferred row scan, taken by the call that completes the summary for every
    /// connection (or that fails).
    deferred: Mutex<Option<Deferred>>,
    /// Blocks of rows the scan kept for the connections about to be read, each taken once.
    captured: Mutex<Option<Captured>>,
}

/// What completing the deferred row scan gave.
pub(crate) enum Completed {
    /// Nothing to complete: done already (or a lock poisoned by a panic elsewhere).
    Nothing,
    /// The complete summary and the tables: of every connection (`None`), or of the
    /// connections given (sorted), the scan then kept for the rest.
    Done(Box<Summary>, MessageTables, Option<Vec<usize>>),
    /// The rows could not be read.
    Failed(Error),
}

/// `conns` sorted, each once.
fn sorted(conns: &[usize]) -> Vec<usize> {
    let mut c = conns.to_vec();
    c.sort_unstable();
    c.dedup();
    c
}

impl Pending {
    /// The state of a recording opened with its row scan `deferred` (or none).
    pub(crate) fn new(deferred: Option<Deferred>) -> Pending {
        Pending {
            deferred: Mutex::new(deferred),
            captured: Mutex::new(None),
        }
    }

    /// Runs the deferred row scan of `src` over the summary `quick`, keeping on the way the
    /// rows of connections `capture` (then the tables are of those only).
    pub(crate) fn complete(
        &self,
        src: Option<&Source>,
        quick: &Summary,
        capture: Option<&[usize]>,
    ) -> Completed {
        let Ok(mut deferred) = self.deferred.lock() else {
            return Completed::Nothing;
        };
        let (Some(d), Some(src)) = (deferred.as_ref(), src) else {
            return Completed::Nothing;
        };
        match complete(d, src, quick, capture) {
            Ok((s, mut t, captured)) => {
                t.sort();
                let some = capture.map(sorted);
                if some.is_none() {
                    *deferred = None;
                }
                if let Ok(mut c) = self.captured.lock() {
                    *c = captured;
                }
                Completed::Done(Box::new(s), t, some)
            }
            Err(e) => {
                *deferred = None;
                Completed::Failed(e)
            }
        }
    }

    /// The block of rows `idx` kept by the row scan for exactly connections `conns`, taken:
    /// `None` when it was not kept.
    pub(crate) fn take_captured(&self, idx: u32, conns: &[usize]) -> Option<Vec<u8>> {
        let mut c = self.captured.lock().ok()?;
        let (kept, blocks): &mut (Vec<usize>, HashMap<u32, Vec<u8>>) = c.as_mut()?;
        if *kept != sorted(conns) {
            return None;
        }
        let b = blocks.remove(&idx);
        if blocks.is_empty() {
            *c = None;
        }
        b
    }

    /// A time window of the rows through the database's timestamp index (see
    /// [`window_rows`]): `None` where that does not apply or the scan is done.
    pub(crate) fn window(&self, src: Option<&Source>, filter: &Filter) -> Option<WindowRows> {
        let deferred = self.deferred.lock().ok()?;
        window_rows(deferred.as_ref()?, src?, filter)
    }

    /// The whole tables of a recording whose summary (`summary`) a scan for some connections
    /// completed: the rows read again, into `built` (what is there already where another
    /// call was first). `None` where the scan is done.
    pub(crate) fn complete_tables(
        &self,
        src: Option<&Source>,
        summary: &Summary,
        built: &OnceLock<Arc<MessageTables>>,
    ) -> Option<Result<Arc<MessageTables>>> {
        let mut deferred = self.deferred.lock().ok()?;
        if let Some(t) = built.get() {
            return Some(Ok(t.clone()));
        }
        let d = deferred.as_ref()?;
        Some(complete_tables(d, src?, summary).map(|mut t| {
            t.sort();
            *deferred = None;
            built.get_or_init(|| Arc::new(t)).clone()
        }))
    }
}
