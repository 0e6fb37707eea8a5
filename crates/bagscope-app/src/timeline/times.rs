//! A topic's message times as the timeline reads them, and what is worked out from them.

use std::sync::Arc;

use bagscope_reader::MessageTables;

/// The stride of [`crate::loader::Indexed::topic_skip`].
pub const SKIP: usize = 64;

/// A topic's message times, sorted: its one connection's table read in place (no copy: at 1 TB
/// the copies took 1.6 GB and most of a second), or the times of its several connections
/// merged.
#[derive(Clone)]
pub enum Times {
    /// Connection `.1` of the tables.
    Table(Arc<MessageTables>, usize),
    /// Merged times.
    Merged(Arc<Vec<u64>>),
}

impl Times {
    /// The times of `conns` (a topic's connections).
    pub fn of(tables: &Arc<MessageTables>, conns: &[usize]) -> Times {
        match conns {
            [c] if *c < tables.per_connection.len() => Times::Table(Arc::clone(tables), *c),
            _ => Times::Merged(Arc::new(bagscope_ops::reports::timing::connection_times(
                tables, conns,
            ))),
        }
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c].len(),
            Times::Merged(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th time.
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            Times::Table(t, c) => t.per_connection[*c].get(i).map(|e| e.time_ns),
            Times::Merged(v) => v.get(i).copied(),
        }
    }

    /// The number of leading times for which `pred` holds (`pred` true, then false).
    pub fn partition_point(&self, mut pred: impl FnMut(u64) -> bool) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c].partition_point(|e| pred(e.time_ns)),
            Times::Merged(v) => v.partition_point(|&x| pred(x)),
        }
    }

    /// Like [`Times::partition_point`], over the times `lo..hi` only (an index from `lo`).
    pub fn partition_point_in(
        &self,
        lo: usize,
        hi: usize,
        mut pred: impl FnMut(u64) -> bool,
    ) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c][lo..hi].partition_point(|e| pred(e.time_ns)),
            Times::Merged(v) => v[lo..hi].partition_point(|&x| pred(x)),
        }
    }

    /// Every `step`-th time, from the first.
    pub fn every(&self, step: usize) -> Vec<u64> {
        match self {
            Times::Table(t, c) => t.per_connection[*c]
                .iter()
                .step_by(step)
                .map(|e| e.time_ns)
                .collect(),
            Times::Merged(v) => v.iter().step_by(step).copied().collect(),
        }
    }

    /// The times as one vector (a copy for a table's).
    pub fn to_vec(&self) -> Arc<Vec<u64>> {
        match self {
            Times::Table(t, c) => {
                Arc::new(t.per_connection[*c].iter().map(|e| e.time_ns).collect())
            }
            Times::Merged(v) => Arc::clone(v),
        }
    }

    /// The median period and the gaps longer than `factor` times it, longest first: see
    /// [`bagscope_ops::reports::timing::gaps`].
    pub fn gaps(&self, factor: f64) -> (Option<u64>, Vec<bagscope_ops::reports::timing::Gap>) {
        match self {
            Times::Table(t, c) => {
                let tab = &t.per_connection[*c];
                bagscope_ops::reports::timing::gaps_by(tab.len(), |i| tab[i].time_ns, factor)
            }
            Times::Merged(v) => bagscope_ops::reports::timing::gaps_by(v.len(), |i| v[i], factor),
        }
    }

    /// The median time between two messages: see [`bagscope_ops::reports::timing::median_period`].
    pub fn median_period(&self) -> Option<u64> {
        match self {
            Times::Table(t, c) => {
                let tab = &t.per_connection[*c];
                bagscope_ops::reports::timing::median_period_by(tab.len(), |i| tab[i].time_ns)
            }
            Times::Merged(v) => bagscope_ops::reports::timing::median_period(v),
        }
    }
}
