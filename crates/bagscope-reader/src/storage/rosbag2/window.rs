//! A time window of a rosbag2 SQLite recording whose rows are not read yet, read through the
//! database's index on `timestamp` (rosbag2 creates `timestamp_idx`), as rosbag2's own reader
//! does: only the window's rows are visited, where the row scan that builds the message tables
//! visits every row of the file. What `csv`, `echo` and `export` of a time window read first.

use std::collections::HashMap;
use std::path::PathBuf;

use super::{open_immutable, sql_err, unzstd_message, Deferred};
use crate::error::Result;
use crate::storage::{Bytes, IndexEntry, Message, Source};

/// Rows per query: each query starts in the index where the last one ended, so a window of
/// any length is read in bounded memory.
const PAGE_ROWS: i64 = 1024;

/// The rows of a time window, in time order (ties: row id, the order of the tables), read a
/// page at a time.
pub(crate) struct WindowRows {
    /// The query that counts the window's rows.
    count_sql: String,
    conn: rusqlite::Connection,
    path: PathBuf,
    sql: String,
    by_topic_id: HashMap<i64, usize>,
    zstd: bool,
    /// End of the window (exclusive).
    end: i64,
    /// Where the next page starts: the time and id of the last row read.
    lo: i64,
    last_id: i64,
    page: std::collections::VecDeque<Message>,
    done: bool,
}

/// The window `filter` asks for, read through the timestamp index: `None` where that does
/// not apply (no window, a database that is not a local file or has no index on
/// `timestamp`), and the row scan reads it.
pub(crate) fn window_rows(
    d: &Deferred,
    src: &Source,
    filter: &crate::storage::Filter,
) -> Option<WindowRows> {
    if filter.start_ns.is_none() && filter.end_ns.is_none() {
        return None;
    }
    let Source::Sqlite(s) = src else {
        return None;
    };
    // The file SQLite reads (a private copy where the original had a write-ahead log).
    let real = {
        let c = s.conns.first()?.lock().ok()?;
        PathBuf::from(c.path().filter(|p| !p.is_empty())?)
    };
    let conn = open_immutable(&real).ok()?;
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql LIKE '%timestamp%'",
            [],
            |r| r.get(0),
        )
        .ok()?;
    if indexed == 0 {
        return None;
    }
    let by_topic_id = d.rows.by_topic_id.clone();
    let mut topics = String::new();
    if let Some(conns) = &filter.connections {
        let mut ids: Vec<i64> = by_topic_id
            .iter()
            .filter(|(_, c)| conns.contains(c))
            .map(|(&t, _)| t)
            .collect();
        if ids.is_empty() {
            return None;
        }
        ids.sort_unstable();
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        topics = format!(" AND topic_id IN ({})", list.join(","));
    }
    let to_i64 = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
    let (lo, end) = (
        filter.start_ns.map_or(i64::MIN, to_i64),
        filter.end_ns.map_or(i64::MAX, to_i64),
    );
    let sql = format!(
        "SELECT id, topic_id, timestamp, data FROM messages \
         WHERE timestamp >= ?1 AND timestamp < ?2 AND (timestamp > ?1 OR id > ?3){topics} \
         ORDER BY timestamp, id LIMIT {PAGE_ROWS}"
    );
    Some(WindowRows {
        count_sql: format!(
            "SELECT count(*) FROM messages WHERE timestamp >= ?1 AND timestamp < ?2{topics}"
        ),
        conn,
        path: s.shown_path.clone(),
        sql,
        by_topic_id,
        zstd: s.zstd_messages,
        end,
        lo,
        last_id: i64::MIN,
        page: Default::default(),
        done: false,
    })
}

impl WindowRows {
    /// How many rows the window holds (of the topics asked for): a pass over the window's
    /// index entries, asked only by those who need the number first (`export`'s progress).
    pub(crate) fn rows_in_window(&self) -> usize {
        self.conn
            .query_row(&self.count_sql, [self.lo, self.end], |r| r.get::<_, i64>(0))
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    }

    /// The next page of rows.
    fn fill(&mut self) -> Result<()> {
        let err = sql_err(&self.path, "reading a time window of the messages table");
        let mut stmt = self.conn.prepare_cached(&self.sql).map_err(&err)?;
        let mut rows = stmt
            .query(rusqlite::params![self.lo, self.end, self.last_id])
            .map_err(&err)?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(&err)? {
            n += 1;
            let (id, topic, ts): (i64, i64, i64) = (
                r.get(0).map_err(&err)?,
                r.get(1).map_err(&err)?,
                r.get(2).map_err(&err)?,
            );
            (self.lo, self.last_id) = (ts, id);
            // Rows of a topic the topics table does not define are left out, as by the scan.
            let Some(&conn) = self.by_topic_id.get(&topic) else {
                continue;
            };
            let raw = r.get_ref(3).map_err(&err)?;
            let raw = raw
                .as_blob_or_null()
                .map_err(|e| err(e.into()))?
                .unwrap_or(&[]);
            let data = if self.zstd {
                let mut out = Vec::new();
                unzstd_message(raw, id, &self.path, &mut out)?;
                out
            } else {
                raw.to_vec()
            };
            let time_ns = u64::try_from(ts).unwrap_or(0);
            self.page.push_back(Message {
                conn,
                time_ns,
                data: Bytes::from_vec(data),
                // Not a place in the blocks, which the row scan has not made: a message read
                // through a window is not read again by its entry.
                entry: IndexEntry {
                    time_ns,
                    chunk: u32::MAX,
                    offset: u32::try_from(id).unwrap_or(u32::MAX),
                },
                publish_ns: time_ns,
                sequence: 0,
            });
        }
        if n < PAGE_ROWS {
            self.done = true;
        }
        Ok(())
    }
}

impl Iterator for WindowRows {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        loop {
            if let Some(m) = self.page.pop_front() {
                return Some(Ok(m));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}
