//! Several recordings on one timeline: [`Bag::open_many`] opens each, builds its message
//! tables, and joins them into one [`Bag`] whose connections, chunks and tables are theirs side
//! by side. A split set (the same topics and types, one part after another: `run_0.bag`,
//! `run_1.bag`) keeps its topic names; unrelated recordings have their topics put under a
//! namespace named after each file (`/run1/odom`, `/run2/odom`), so the tree groups them and a
//! plot can show the same field of both. Each part can be shifted in time (to compare two runs
//! from the same start); the shift applies to every time the joined bag reports.
//!
//! [`Bag::open_many_with`] with [`TopicNames::Kept`] keeps every topic's name whatever the
//! parts are, as rosbags' `AnyReader` does: the connections of one topic in several recordings
//! are then that topic's connections side by side.

use std::path::{Path, PathBuf};

use crate::bag::Bag;
use crate::error::{Error, Result};
use crate::storage::{MessageTables, Summary, Topic};

/// One recording to join and its time shift (ns, added to its times).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The recording (anything [`Bag::open`] takes).
    pub path: PathBuf,
    /// Added to every time of this recording (ns).
    pub offset_ns: i64,
}

/// How the topics of several recordings that are not one split set are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TopicNames {
    /// Under a namespace named after each recording's file (`/run1/odom`): the app's rule.
    #[default]
    ByRecording,
    /// As recorded: one topic's connections of every recording under its one name.
    Kept,
    /// As recorded, the parts after the first being the caller's own additions to it (the
    /// virtual topics of message scripts): said in no warning.
    Overlaid,
}

fn shift(t: u64, off: i64) -> u64 {
    if off >= 0 {
        t.saturating_add(off as u64)
    } else {
        t.saturating_sub(off.unsigned_abs())
    }
}

/// A name for a recording's namespace: its file stem (its folder's name for rosbag2), made a
/// valid ROS name.
pub fn namespace_of(p: &Path) -> String {
    let base = if p.is_dir() {
        p.file_name()
    } else if p.file_name().is_some_and(|n| n == "metadata.yaml") {
        p.parent().and_then(|d| d.file_name())
    } else {
        p.file_stem()
    };
    let raw = base
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut s: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'r');
    }
    s
}

/// Each part's namespace on a joined timeline ([`namespace_of`], numbered where two files
/// have the same name: `run`, `run_2`).
pub fn namespaces(parts: &[Part]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in parts {
        let base = namespace_of(&p.path);
        let mut n = base.clone();
        let mut k = 2;
        while names.contains(&n) {
            n = format!("{base}_{k}");
            k += 1;
        }
        names.push(n);
    }
    names
}

/// Whether the parts are one recording split in files: the same topics and types, each part
/// starting after the one before ends, none shifted. A topic of one message a part (a latched
/// `/tf_static`, a robot description) may be missing from parts after the one it was recorded
/// in, as a recorder writes it once.
pub fn is_split_set(summaries: &[&Summary], parts: &[Part]) -> bool {
    if parts.iter().any(|p| p.offset_ns != 0) {
        return false;
    }
    let mut types: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for s in summaries {
        for t in &s.topics {
            if *types.entry(&t.name).or_insert(&t.datatype) != t.datatype.as_str() {
                return false;
            }
        }
    }
    for name in types.keys() {
        let counts: Vec<Option<u64>> = summaries
            .iter()
            .map(|s| s.topic(name).map(|t| t.message_count))
            .collect();
        let everywhere = counts.iter().all(Option::is_some);
        let once = counts.iter().all(|c| c.is_none_or(|n| n <= 1));
        if !everywhere && !once {
            return false;
        }
    }
    let mut ranges: Vec<(u64, u64)> = summaries
        .iter()
        .filter_map(|s| Some((s.start_ns?, s.end_ns?)))
        .collect();
    ranges.sort();
    ranges.windows(2).all(|w| w[1].0 >= w[0].1)
}

impl Bag {
    /// Opens several recordings as one (see the module's documentation). One part without a
    /// shift is simply [`Bag::open`]. The parts may be of different kinds of storage. The joined
    /// bag's message tables are built here.
    /// Each is opened with `opts` ([`Bag::open_with`]).
    pub fn open_many(parts: &[Part], opts: &crate::OpenOptions) -> Result<Bag> {
        Self::open_many_with(parts, TopicNames::ByRecording, opts)
    }

    /// [`Bag::open_many`], the topics of recordings that are not one split set named as
    /// `naming` says.
    pub fn open_many_with(
        parts: &[Part],
        naming: TopicNames,
        opts: &crate::OpenOptions,
    ) -> Result<Bag> {
        match parts {
            [] => return Err(Error::Invalid("no recording to open".into())),
            [p] if p.offset_ns == 0 => return Bag::open_with(&p.path, opts),
            _ => {}
        }
        let mut bags = Vec::with_capacity(parts.len());
        for p in parts {
            bags.push(Bag::open_with(&p.path, opts)?);
        }
        Self::join(bags, parts, naming, opts)
    }

    /// Joins recordings already opened (`bags[i]` opened from `parts[i]`, its tables built here
    /// where they are not yet), as [`Bag::open_many_with`] does: a recording whose tables were
    /// built while it was open alone is not read again. Each bag must be the only handle on it.
    pub fn join(
        bags: Vec<Bag>,
        parts: &[Part],
        naming: TopicNames,
        opts: &crate::OpenOptions,
    ) -> Result<Bag> {
        if bags.len() != parts.len() {
            return Err(Error::Invalid(format!(
                "{} recordings for {} parts",
                bags.len(),
                parts.len()
            )));
        }
        for b in &bags {
            b.tables()?;
        }
        // Kinds of storage may differ (a ROS 1 bag beside an MCAP file): every chunk says how it
        // is read, and the tables are built here; the joined bag reports the first part's kind.
        let v0 = bags[0].summary().version;
        let summaries: Vec<&Summary> = bags.iter().map(|b| b.summary()).collect();
        let split = is_split_set(&summaries, parts);
        let prefixed = !split && naming == TopicNames::ByRecording;
        let names = namespaces(parts);
        let mut s = Summary {
            path: parts[0].path.clone(),
            version: v0,
            indexed: true,
            ..Default::default()
        };
        let mut files = Vec::new();
        let mut tables = MessageTables::default();
        for (k, (bag, part)) in bags.into_iter().zip(parts).enumerate() {
            let t = bag.tables()?;
            // The joined bag has no index section of its own: chunk headers a part left to be
            // read on demand are read now.
            let layouts: Vec<Option<crate::storage::ChunkLayout>> = bag
                .summary()
                .chunks
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if c.header_pending() {
                        bag.chunk_layout(i).map(Some)
                    } else {
                        Ok(None)
                    }
                })
                .collect::<Result<_>>()?;
            let (part_files, ps) = bag
                .into_files_and_summary()
                .ok_or_else(|| Error::Invalid("a recording is still in use".into()))?;
            let (conn_off, chunk_off, file_off) =
                (s.connections.len(), s.chunks.len(), s.files.len() as u32);
            let off = part.offset_ns;
            let label = part
                .path
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            for mut c in ps.connections {
                if prefixed {
                    c.topic = format!(
                        "/{}{}",
                        names[k],
                        if c.topic.starts_with('/') {
                            c.topic.clone()
                        } else {
                            format!("/{}", c.topic)
                        }
                    );
                }
                c.file += file_off;
                s.connections.push(c);
            }
            for (mut ch, layout) in ps.chunks.into_iter().zip(layouts) {
                if let Some(l) = layout {
                    ch.data_pos = l.data_pos;
                    ch.data_len = l.data_len;
                    ch.size = l.size;
                    ch.compression = l.compression;
                }
                ch.file += file_off;
                for x in &mut ch.counts {
                    x.0 += conn_off as u32;
                }
                if ch.start_ns != u64::MAX {
                    ch.start_ns = shift(ch.start_ns, off);
                    ch.end_ns = shift(ch.end_ns, off);
                }
                s.chunks.push(ch);
            }
            for tab in &t.per_connection {
                tables.per_connection.push(
                    tab.iter()
                        .map(|e| crate::IndexEntry {
                            time_ns: shift(e.time_ns, off),
                            chunk: e.chunk + chunk_off as u32,
                            offset: e.offset,
                        })
                        .collect(),
                );
            }
            tables
                .warnings
                .extend(t.warnings.iter().map(|w| format!("{label}: {w}")));
            s.warnings
                .extend(ps.warnings.iter().map(|w| format!("{label}: {w}")));
            s.indexed &= ps.indexed;
            s.file_size += ps.file_size;
            s.message_count += ps.message_count;
            if let (Some(a), Some(b)) = (ps.start_ns, ps.end_ns) {
                let (a, b) = (shift(a, off), shift(b, off));
                s.start_ns = Some(s.start_ns.map_or(a, |x| x.min(a)));
                s.end_ns = Some(s.end_ns.map_or(b, |x| x.max(b)));
            }
            s.files.extend(ps.files);
            s.attachments.extend(ps.attachments);
            s.metadata.extend(ps.metadata);
            s.storage_facts.extend(
                ps.storage_facts
                    .into_iter()
                    .map(|(k2, v)| (format!("{label}: {k2}"), v)),
            );
            files.extend(part_files);
        }
        // Topics by name, over the joined connections.
        let mut topics: Vec<Topic> = Vec::new();
        for (ci, c) in s.connections.iter().enumerate() {
            match topics.iter_mut().find(|t| t.name == c.topic) {
                Some(t) => {
                    t.connections.push(ci);
                    t.message_count += c.message_count;
                }
                None => topics.push(Topic {
                    name: c.topic.clone(),
                    datatype: c.datatype.clone(),
                    connections: vec![ci],
                    message_count: c.message_count,
                }),
            }
        }
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        s.topics = topics;
        let said = if split {
            format!("{} files of one split recording, joined", parts.len())
        } else if !prefixed {
            format!(
                "{} recordings on one timeline, topics under their recorded names",
                parts.len()
            )
        } else {
            format!(
                "{} recordings on one timeline, under {}",
                parts.len(),
                names
                    .iter()
                    .map(|n| format!("/{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if naming != TopicNames::Overlaid {
            s.warnings.insert(0, said);
        }
        Ok(Bag::from_opened(
            files,
            crate::storage::Opened {
                summary: s,
                index_pos: 0,
                tables: Some(tables),
                profile: String::new(),
                deferred: None,
                keep: None,
            },
            opts,
        ))
    }
}

/// Recordings to join as they are, unshifted.
pub fn parts_of(paths: &[PathBuf]) -> Vec<Part> {
    paths
        .iter()
        .map(|p| Part {
            path: p.clone(),
            offset_ns: 0,
        })
        .collect()
}

/// Shifts that make every part start when the first does (each opened with `opts`).
pub fn align_starts(parts: &[Part], opts: &crate::OpenOptions) -> Result<Vec<Part>> {
    let starts: Vec<Option<u64>> = parts
        .iter()
        .map(|p| Bag::open_with(&p.path, opts).map(|b| b.summary().start_ns))
        .collect::<Result<_>>()?;
    let first = starts.iter().flatten().copied().next().unwrap_or(0);
    Ok(parts
        .iter()
        .zip(starts)
        .map(|(p, s)| Part {
            path: p.path.clone(),
            offset_ns: s.map_or(0, |s| (i128::from(first) - i128::from(s)) as i64),
        })
        .collect())
}
