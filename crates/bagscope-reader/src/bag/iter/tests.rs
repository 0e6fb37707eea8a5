use std::sync::atomic::Ordering;

use super::*;

/// A message read (connection, time, bytes) or the error in its place.
type Read = std::result::Result<(usize, u64, Vec<u8>), String>;

/// Asserts that the messages read from `p`, `got`, are `want` (saying how many of each if
/// not).
fn same<T: PartialEq>(p: &std::path::Path, got: &[T], want: &[T]) {
    assert!(
        got == want,
        "{}: {} vs {}",
        p.display(),
        got.len(),
        want.len()
    );
}

fn collect(it: Messages) -> Vec<Read> {
    it.map(|m| {
        m.map(|m| (m.conn, m.time_ns, m.data.to_vec()))
            .map_err(|e| e.to_string())
    })
    .collect()
}

/// Every message, as read with `threads` read-ahead threads (0: inline).
fn read(path: &std::path::Path, threads: usize) -> Vec<Read> {
    let Ok(bag) = Bag::open(path) else {
        return Vec::new();
    };
    Messages::new(bag, &Filter::default(), threads).map_or_else(|_| Vec::new(), collect)
}

/// The messages of a topic that is one of eight in its chunks are copied out of them
/// (inline and on read-ahead threads), and read as the tables read them, in every
/// compression.
#[test]
fn a_rare_topic_copied_out_of_its_chunks_reads_as_the_tables_read_it() {
    use crate::storage::mcap::writer::{McapOptions, McapWriter};
    let dir = std::env::temp_dir().join(format!("bagscope-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for compression in [
        crate::Compression::None,
        crate::Compression::Lz4,
        crate::Compression::Zstd,
    ] {
        let path = dir.join(format!("{compression:?}.mcap"));
        let opts = McapOptions {
            compression,
            chunk_size: 4096,
            profile: String::new(),
            ..McapOptions::default()
        };
        let mut w = McapWriter::create(&path, opts).unwrap();
        let ids: Vec<u16> = (0..8)
            .map(|k| w.add_channel(0, &format!("/t{k}"), "raw", &[]).unwrap())
            .collect();
        for i in 0..4000u32 {
            let data: Vec<u8> = (0..(i % 97) as u8).map(|b| b ^ i as u8).collect();
            let t = 1_000_000_000 + u64::from(i) * 1_000_000;
            w.write(ids[i as usize % 8], i, t, t, &data).unwrap();
        }
        w.finish().unwrap();
        let bag = Bag::open(&path).unwrap();
        let f = Filter {
            start_ns: Some(1_500_000_000),
            end_ns: Some(4_000_000_000),
            connections: Some(vec![3]),
        };
        let want = collect(Messages::new(bag.clone(), &f, 0).unwrap());
        assert_eq!(want.len(), 2500 / 8, "{compression:?}");
        for threads in [0, 2] {
            let w = Messages::window_stream(&bag, &f, threads).expect("a stream");
            let ix = w.loader.index.as_ref().expect("a stream's index");
            assert!(ix.sparse.iter().filter(|&&s| s).count() > 30);
            assert!(collect(w) == want, "{compression:?}, {threads} threads");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A recording of 1 MiB chunks where one topic of eight is wanted, some of its messages
/// longer than what [`read_pieces`] reads at a time: what the messages `(channel, time,
/// bytes)` written were, and the channel ids.
fn long_and_short(
    path: &std::path::Path,
    compression: crate::Compression,
) -> Vec<(u16, u64, Vec<u8>)> {
    use crate::storage::mcap::writer::{McapOptions, McapWriter};
    let opts = McapOptions {
        compression,
        chunk_size: 1 << 20,
        profile: String::new(),
        ..McapOptions::default()
    };
    let mut w = McapWriter::create(path, opts).unwrap();
    let ids: Vec<u16> = (0..8)
        .map(|k| w.add_channel(0, &format!("/t{k}"), "raw", &[]).unwrap())
        .collect();
    let mut written = Vec::new();
    for i in 0..20_000u32 {
        let ch = ids[i as usize % 8];
        // Every 500th message of /t3 is 150 KB: it spans pieces.
        let n = if i % 4000 == 3 {
            150_000
        } else {
            (i % 97) as usize * 3
        };
        let data: Vec<u8> = (0..n).map(|b| (b as u32 ^ i) as u8).collect();
        let t = 1_000_000_000 + u64::from(i) * 1_000_000;
        w.write(ch, i, t, t, &data).unwrap();
        written.push((ch, t, data));
    }
    w.finish().unwrap();
    written
}

/// `f` on the recording [`long_and_short`] writes, in uncompressed chunks and in zstd ones
/// (its path, its chunks' compression, the messages written), in a temporary directory.
fn each_long_and_short(
    name: &str,
    f: impl Fn(&std::path::Path, crate::Compression, Vec<(u16, u64, Vec<u8>)>),
) {
    let dir = std::env::temp_dir().join(format!("bagscope-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for compression in [crate::Compression::None, crate::Compression::Zstd] {
        let path = dir.join(format!("{compression:?}.mcap"));
        let written = long_and_short(&path, compression);
        f(&path, compression, written);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The window `f` read as a stream, inline and on read-ahead threads, gives `want`, with
/// `walked` sparse chunks walked record by record.
fn window_reads(bag: &Bag, f: &Filter, want: &[Read], walked: usize, what: &str) {
    for threads in [0, 2] {
        let w = Messages::window_stream(bag, f, threads).expect("a stream");
        let loader = w.loader.clone();
        assert!(collect(w) == want, "{what}, {threads} threads");
        let ix = loader.index.as_ref().expect("a stream's index");
        assert_eq!(ix.walked.load(Ordering::Relaxed), walked, "{what}");
    }
}

/// A window of one topic read through the chunks' message indexes (uncompressed chunks
/// in pieces, records longer than a piece among them; compressed ones decompressed
/// whole) gives the messages written, as the tables give them, and no chunk is walked.
#[test]
fn a_topic_found_by_its_message_index_reads_as_written() {
    each_long_and_short("indexed", |path, compression, written| {
        let bag = Bag::open(path).unwrap();
        let (lo, hi) = (3_000_000_000u64, 17_000_000_000u64);
        let conn = bag
            .summary()
            .connections
            .iter()
            .position(|c| c.topic == "/t3")
            .unwrap();
        let f = Filter {
            start_ns: Some(lo),
            end_ns: Some(hi),
            connections: Some(vec![conn]),
        };
        let id = bag.summary().connections[conn].id as u16;
        let want: Vec<Read> = written
            .iter()
            .filter(|(c, t, _)| *c == id && *t >= lo && *t < hi)
            .map(|(_, t, d)| Ok((conn, *t, d.clone())))
            .collect();
        assert_eq!(want.len(), 1750);
        assert!(collect(Messages::new(bag.clone(), &f, 2).unwrap()) == want);
        window_reads(&bag, &f, &want, 0, &format!("{compression:?}"));
    });
}

/// A message index that points where its message is not (one offset moved by a byte, one
/// time changed, one offset a few bytes before the chunk's end) is set aside: those chunks
/// are walked, and the window still gives the messages written.
#[test]
fn a_message_index_that_disagrees_with_its_chunk_is_set_aside() {
    each_long_and_short("badindex", |path, compression, written| {
        let (conn, id, spots) = {
            let bag = Bag::open(path).unwrap();
            let s = bag.summary();
            let conn = s.connections.iter().position(|c| c.topic == "/t3").unwrap();
            // The first entry of /t3's MessageIndex in each of the first three chunks, and
            // the third one's size.
            let spots: Vec<(u64, u32)> = s.chunks[..3]
                .iter()
                .map(|ch| {
                    let k = ch
                        .counts
                        .iter()
                        .position(|&(c, _)| c as usize == conn)
                        .unwrap();
                    (ch.index_pos + u64::from(ch.index_at[k]) + 15, ch.size)
                })
                .collect();
            (conn, s.connections[conn].id as u16, spots)
        };
        let mut bytes = std::fs::read(path).unwrap();
        // Chunk 0: the entry's offset moved a byte; chunk 1: its time changed; chunk 2: its
        // offset 5 bytes before the chunk's end.
        let off = spots[0].0 as usize + 8;
        let o = u64::from_le_bytes(bytes[off..off + 8].try_into().unwrap()) + 1;
        bytes[off..off + 8].copy_from_slice(&o.to_le_bytes());
        let at = spots[1].0 as usize;
        let t = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) + 1;
        bytes[at..at + 8].copy_from_slice(&t.to_le_bytes());
        let off = spots[2].0 as usize + 8;
        bytes[off..off + 8].copy_from_slice(&(u64::from(spots[2].1) - 5).to_le_bytes());
        let bad = path.with_extension("bad.mcap");
        std::fs::write(&bad, &bytes).unwrap();
        let bag = Bag::open(&bad).unwrap();
        let f = Filter {
            start_ns: Some(0),
            end_ns: Some(u64::MAX),
            connections: Some(vec![conn]),
        };
        let want: Vec<Read> = written
            .iter()
            .filter(|(c, _, _)| *c == id)
            .map(|(_, t, d)| Ok((conn, *t, d.clone())))
            .collect();
        window_reads(&bag, &f, &want, 3, &format!("{compression:?}"));
    });
}

/// The tests over the shared corpora (`../shared`): the corpus tier (`cargo xtask test corpus`).
mod shared_corpus {
    use super::*;

    /// The files of the corpus `dir` (`../shared/DIR`) with extension `ext`, below 64 MiB;
    /// panics when the corpus is missing.
    fn corpus(dir: &str, ext: &str) -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared")
            .join(dir);
        assert!(root.is_dir(), "the corpus is missing: {}", root.display());
        let (mut stack, mut out) = (vec![root], Vec::new());
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == ext)
                    && std::fs::metadata(&p).map_or(0, |m| m.len()) < 64 << 20
                {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// `next_ref` lends what `next` gives (every field, and the error where there is one) on
    /// the MCAP corpus (read as a stream) and the ROS 1 corpus (read through the tables), with
    /// read-ahead threads and without.
    #[test]
    #[ignore = "needs ../shared (TESTING.md): cargo xtask test corpus"]
    fn a_lent_message_is_the_message_the_iterator_gives() {
        type Full = std::result::Result<(usize, u64, Vec<u8>, IndexEntry, u64, u32), String>;
        let (mut files, mut streamed, mut messages) = (0, 0, 0);
        for p in corpus("bags2", "mcap")
            .into_iter()
            .chain(corpus("bags", "bag"))
        {
            let Ok(bag) = Bag::open(&p) else { continue };
            for threads in [0, 2] {
                let (Ok(a), Ok(mut b)) = (
                    Messages::new(bag.clone(), &Filter::default(), threads),
                    Messages::new(bag.clone(), &Filter::default(), threads),
                ) else {
                    continue;
                };
                streamed += usize::from(b.stream.is_some());
                let full = |m: MessageRef<'_>| {
                    let d = m.data.to_vec();
                    (m.conn, m.time_ns, d, m.entry, m.publish_ns, m.sequence)
                };
                let want: Vec<Full> = a
                    .map(|m| m.map(|m| full(m.borrowed())).map_err(|e| e.to_string()))
                    .collect();
                let mut got: Vec<Full> = Vec::new();
                while let Some(m) = b.next_ref() {
                    got.push(m.map(full).map_err(|e| e.to_string()));
                }
                same(&p, &got, &want);
                files += 1;
                messages += got.len();
            }
        }
        assert!(
            files > 100 && streamed > 50 && messages > 10_000,
            "{files} files, {streamed} streamed, {messages} messages"
        );
    }

    /// A time window read chunk by chunk (no message index) gives what the tables give,
    /// message for message, on every MCAP file of the corpus it applies to: of every topic,
    /// and of the topic with fewest messages alone (whose messages are copied out of their
    /// chunks where they are few of them), inline and on read-ahead threads.
    #[test]
    #[ignore = "needs ../shared (TESTING.md): cargo xtask test corpus"]
    fn a_window_read_chunk_by_chunk_gives_what_the_tables_give_on_the_mcap_corpus() {
        let (mut files, mut messages, mut sparse) = (0, 0, 0);
        for p in corpus("bags2", "mcap") {
            let Ok(bag) = Bag::open(&p) else { continue };
            let s = bag.summary();
            let (Some(t0), Some(t1)) = (s.start_ns, s.end_ns) else {
                continue;
            };
            let fewest = (0..s.connections.len())
                .filter(|&c| s.connections[c].message_count > 0)
                .min_by_key(|&c| s.connections[c].message_count);
            for (connections, threads) in [(None, 0), (fewest.map(|c| vec![c]), 2)] {
                let one = connections.is_some();
                let f = Filter {
                    start_ns: Some(t0 + (t1 - t0) / 3),
                    end_ns: Some(t0 + 2 * (t1 - t0) / 3),
                    connections,
                };
                let Some(w) = Messages::window_stream(&bag, &f, threads) else {
                    continue;
                };
                if one {
                    let ix = w.loader.index.as_ref().expect("a stream's index");
                    sparse += ix.sparse.iter().filter(|&&s| s).count();
                }
                let got = collect(w);
                let want = collect(Messages::new(bag.clone(), &f, 2).unwrap());
                same(&p, &got, &want);
                files += usize::from(!one);
                messages += got.len();
            }
        }
        assert!(
            files > 50 && messages > 1_000 && sparse > 0,
            "{files} files, {messages} messages, {sparse} sparse chunks"
        );
    }

    /// Every message of each rosbag2 SQLite recording of the corpus, read as a stream of its
    /// blocks of rows (where they follow each other in time), is what the merge of the tables
    /// gives, inline and on read-ahead threads.
    #[test]
    #[ignore = "needs ../shared (TESTING.md): cargo xtask test corpus"]
    fn sqlite_rows_read_as_a_stream_give_what_the_merge_gives() {
        let (mut streamed, mut messages) = (0, 0);
        for p in corpus("bags2", "db3") {
            let Ok(bag) = Bag::open(&p) else { continue };
            let every = Filter {
                connections: Some((0..bag.summary().connections.len()).collect()),
                ..Filter::default()
            };
            let Ok(merged) = Messages::new(bag.clone(), &every, 2) else {
                continue;
            };
            assert!(merged.stream.is_none());
            let want = collect(merged);
            for threads in [0, 2] {
                let m = Messages::new(bag.clone(), &Filter::default(), threads).unwrap();
                streamed += usize::from(m.stream.is_some());
                let got = collect(m);
                same(&p, &got, &want);
                messages += got.len();
            }
        }
        assert!(
            streamed > 10 && messages > 1000,
            "{streamed} streamed, {messages} messages"
        );
    }

    /// Chunks decompressed inline (one core) and held until their last message give what the
    /// read-ahead threads give, message for message, errors included, on every ROS 1 bag of
    /// the corpus.
    #[test]
    #[ignore = "needs ../shared (TESTING.md): cargo xtask test corpus"]
    fn inline_reading_gives_what_read_ahead_gives_on_the_ros1_corpus() {
        let (mut files, mut messages) = (0, 0);
        for p in corpus("bags", "bag") {
            let inline = read(&p, 0);
            assert!(inline == read(&p, 2), "{}", p.display());
            files += 1;
            messages += inline.len();
        }
        assert!(
            files > 50 && messages > 10_000,
            "{files} bags, {messages} messages"
        );
    }
}
