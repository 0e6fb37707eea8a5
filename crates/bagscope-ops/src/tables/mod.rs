//! Messages as tables and files: [`export`] (to a ROS 1 bag, MCAP, rosbag2, Parquet; ROS 1 ↔
//! ROS 2), [`csv`], [`arrow`] (typed Arrow columns) and [`catalog`] (a fleet's recordings in
//! one table).

pub mod arrow;
pub mod catalog;
pub mod csv;
pub mod export;
pub mod lerobot;

/// `work(item)` for every item on up to `threads` threads (each takes the next item left),
/// `progress(done, total)` after each; the results in the items' order.
pub(crate) fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: &(dyn Fn(&T) -> R + Sync),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> bagscope_reader::error::Result<Vec<R>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1).min(items.len().max(1)) {
            sc.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(k) else { break };
                let r = work(item);
                if let Ok(mut v) = results.lock() {
                    v.push((k, r));
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, items.len());
            });
        }
    });
    let mut v = results
        .into_inner()
        .map_err(|_| bagscope_reader::error::Error::ThreadPanicked("a worker thread"))?;
    v.sort_by_key(|(k, _)| *k);
    Ok(v.into_iter().map(|(_, r)| r).collect())
}
