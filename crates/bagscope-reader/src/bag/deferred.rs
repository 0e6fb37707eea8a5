//! A rosbag2 SQLite recording opened from its metadata before its rows are read: the
//! summary and the tables completed on first need, the rows of the connections about to be
//! read kept on the way.

use std::sync::Arc;

use super::Bag;
use crate::error::Result;
use crate::storage::rosbag2::Completed;
use crate::storage::{Filter, MessageTables, Summary};

impl Bag {
    /// Completes a summary whose row scan is deferred, keeping on the way the rows of
    /// connections `conns` (about to be read: they are then not read a second time). Not for
    /// every connection: that is the whole file, which the first read already is.
    pub(super) fn complete_capturing(&self, conns: &[usize]) {
        if self.inner.summary.get().is_some() || !self.quick_summary().rows_pending {
            return;
        }
        let mut c = conns.to_vec();
        c.sort_unstable();
        c.dedup();
        if c.len() < self.quick_summary().connections.len() {
            self.inner
                .summary
                .get_or_init(|| self.complete_summary(Some(&c)));
        }
    }

    /// The block of rows `idx` kept by the row scan for exactly connections `conns`, taken:
    /// `None` when it was not kept.
    pub(super) fn take_captured(&self, idx: u32, conns: &[usize]) -> Option<Vec<u8>> {
        self.inner.pending.take_captured(idx, conns)
    }

    /// Runs the deferred row scan: the complete summary, and the tables (or why not).
    pub(super) fn complete_summary(&self, capture: Option<&[usize]>) -> Summary {
        let quick = self.inner.quick.clone().unwrap_or_default();
        match self
            .inner
            .pending
            .complete(self.inner.files.first(), &quick, capture)
        {
            Completed::Nothing => quick,
            Completed::Done(s, t, Some(conns)) => {
                // Tables of those connections only: the scan is kept for the rest.
                if let Ok(mut p) = self.inner.partial.lock() {
                    *p = Some((conns, Arc::new(t)));
                }
                *s
            }
            Completed::Done(s, t, None) => {
                let _ = self.inner.tables.set(Arc::new(t));
                *s
            }
            Completed::Failed(e) => {
                let mut s = quick;
                s.rows_pending = false;
                s.warnings.push(format!("the rows could not be read: {e}"));
                let _ = self.inner.scan_error.set(e);
                s
            }
        }
    }

    /// A time window of a rosbag2 SQLite recording whose rows are not read yet, read through
    /// the database's timestamp index instead of a scan of every row: `None` where that does
    /// not apply (see [`crate::storage::rosbag2::window_rows`]).
    pub(crate) fn sqlite_window(
        &self,
        filter: &Filter,
    ) -> Option<crate::storage::rosbag2::WindowRows> {
        if self.inner.summary.get().is_some() || !self.quick_summary().rows_pending {
            return None;
        }
        self.inner.pending.window(self.inner.files.first(), filter)
    }

    /// The whole tables of a recording whose summary a scan for some connections completed:
    /// its rows read again. `None` where that is not the case.
    pub(super) fn complete_tables(&self) -> Option<Result<Arc<MessageTables>>> {
        let s = self.summary();
        let t =
            self.inner
                .pending
                .complete_tables(self.inner.files.first(), s, &self.inner.tables)?;
        if t.is_ok() {
            if let Ok(mut p) = self.inner.partial.lock() {
                *p = None;
            }
        }
        Some(t)
    }
}
