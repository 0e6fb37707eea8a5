//! The timeline's density strips: per-topic message counts in bins over the recording, first
//! estimated from the chunks, refined as each chunk's index is read, exact once the tables
//! are built.

use bagscope_reader::Summary;

/// Bins of the coarse per-topic density kept while the tables are being built.
pub const HIST_BINS: usize = 4096;

/// Per-topic message counts in [`HIST_BINS`] equal bins over the bag's time range.
pub type Histogram = Vec<Vec<u32>>;

/// Maps a time to its histogram bin.
pub fn bin_of(s: &Summary, t: u64) -> usize {
    let (Some(a), Some(b)) = (s.start_ns, s.end_ns) else {
        return 0;
    };
    let span = (b - a).max(1) as f64;
    let x = (t.saturating_sub(a)) as f64 / span * HIST_BINS as f64;
    (x as usize).min(HIST_BINS - 1)
}

pub(crate) fn topic_of_connection(s: &Summary) -> Vec<usize> {
    let mut v = vec![0; s.connections.len()];
    for (ti, t) in s.topics.iter().enumerate() {
        for &c in &t.connections {
            if let Some(x) = v.get_mut(c) {
                *x = ti;
            }
        }
    }
    v
}

/// A density from the chunk infos alone: each chunk's counts spread over its time range.
pub(crate) fn chunk_histogram(s: &Summary) -> Histogram {
    let topic_of = topic_of_connection(s);
    let mut h = vec![vec![0u32; HIST_BINS]; s.topics.len()];
    for ch in &s.chunks {
        chunk_estimate(&mut h, s, &topic_of, ch, u32::saturating_add);
    }
    h
}

/// Adds (or with `u32::saturating_sub`, takes back) a chunk's messages per topic spread evenly
/// over its time range: the density the timeline shows before the chunk's index is read.
pub(super) fn chunk_estimate(
    h: &mut Histogram,
    s: &Summary,
    topic_of: &[usize],
    ch: &bagscope_reader::Chunk,
    op: fn(u32, u32) -> u32,
) {
    let (b0, b1) = (
        bin_of(s, ch.start_ns),
        bin_of(s, ch.end_ns.max(ch.start_ns)),
    );
    let nb = (b1 - b0 + 1) as u64;
    for &(ci, n) in &ch.counts {
        let Some(&ti) = topic_of.get(ci as usize) else {
            continue;
        };
        let per = u64::from(n) / nb;
        let mut rest = u64::from(n) % nb;
        for x in &mut h[ti][b0..=b1] {
            let extra = u64::from(rest > 0);
            rest = rest.saturating_sub(1);
            *x = op(*x, u32::try_from(per + extra).unwrap_or(u32::MAX));
        }
    }
}

/// The density while the tables build: chunk `entries.chunk`'s estimate replaced by where its
/// messages really are, so the strip covers the whole recording from the first frame and
/// sharpens chunk by chunk.
pub(crate) fn refine_histogram(
    h: &mut Histogram,
    s: &Summary,
    topic_of: &[usize],
    entries: &bagscope_reader::storage::ChunkEntries,
) {
    if let Some(ch) = s.chunks.get(entries.chunk) {
        chunk_estimate(h, s, topic_of, ch, u32::saturating_sub);
    }
    for (ci, e) in &entries.entries {
        if let Some(&ti) = topic_of.get(*ci) {
            let b = bin_of(s, e.time_ns);
            h[ti][b] = h[ti][b].saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bagscope_reader::Bag;

    /// While the tables build, the density starts as the chunks' estimate over the whole
    /// recording and ends, chunk by chunk, as the exact count of every message.
    #[test]
    fn density_refined_chunk_by_chunk_ends_exact() {
        let dir = std::env::temp_dir().join(format!("bagscope-hist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("demo.bag");
        bagscope_ops::demo::write_demo(&path, 20).unwrap();
        let bag = Bag::open(&path).unwrap();
        let s = bag.summary().clone();
        assert!(s.chunks.len() > 3, "{} chunks", s.chunks.len());
        let topic_of = topic_of_connection(&s);
        let estimate = chunk_histogram(&s);
        let total = |h: &Histogram| h.iter().flatten().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(total(&estimate), s.message_count);
        let mut hist = estimate.clone();
        let mut halfway = None;
        bag.build_tables(&mut |p, entries| {
            refine_histogram(&mut hist, &s, &topic_of, entries);
            // Every message counted once at each step: estimated or placed.
            assert_eq!(total(&hist), s.message_count);
            if p.chunks_done == p.chunks_total / 2 {
                halfway = Some(hist.clone());
            }
            true
        })
        .unwrap();
        let mut exact: Histogram = vec![vec![0u32; HIST_BINS]; s.topics.len()];
        let tables = bag.tables().unwrap();
        for (ci, t) in tables.per_connection.iter().enumerate() {
            for e in t {
                exact[topic_of[ci]][bin_of(&s, e.time_ns)] += 1;
            }
        }
        assert_eq!(hist, exact);
        let halfway = halfway.unwrap();
        assert_ne!(halfway, exact);
        assert_ne!(halfway, estimate);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
