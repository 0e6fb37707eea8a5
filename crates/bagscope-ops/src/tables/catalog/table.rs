//! The catalog's tables: rows as Arrow record batches written to Parquet, and the previous catalog
//! read back so that unchanged recordings are not opened again.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, MapBuilder, StringBuilder,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as PqCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{RecordingRow, TopicRow};
use bagscope_reader::error::{Error, Result};

pub(super) fn arrow_err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("building the catalog: {e}"))
}

/// A string-to-string map column.
pub(super) fn map_column(
    rows: &[&RecordingRow],
    f: impl Fn(&RecordingRow) -> &[(String, String)],
) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for r in rows {
        for (k, v) in f(r) {
            b.keys().append_value(k);
            b.values().append_value(v);
        }
        b.append(true).map_err(arrow_err)?;
    }
    Ok(Arc::new(b.finish()))
}

pub(super) fn recordings_batch(rows: &[&RecordingRow]) -> Result<RecordBatch> {
    let strings = |f: &dyn Fn(&RecordingRow) -> Option<&str>| -> ArrayRef {
        let mut b = StringBuilder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    let ints = |f: &dyn Fn(&RecordingRow) -> Option<i64>| -> ArrayRef {
        let mut b = Int64Builder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    let bools = |f: &dyn Fn(&RecordingRow) -> bool| -> ArrayRef {
        let mut b = BooleanBuilder::new();
        for r in rows {
            b.append_value(f(r));
        }
        Arc::new(b.finish())
    };
    let mut warnings = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for w in &r.warnings {
            warnings.values().append_value(w);
        }
        warnings.append(true);
    }
    let level = |i: usize| ints(&move |r: &RecordingRow| Some(r.logs[i]));
    let diag = |i: usize| ints(&move |r: &RecordingRow| Some(r.diagnostics[i]));
    let mut bookmarks = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for w in &r.bookmarks {
            bookmarks.values().append_value(w);
        }
        bookmarks.append(true);
    }
    RecordBatch::try_from_iter(vec![
        ("path", strings(&|r| Some(&r.path))),
        (
            "format",
            strings(&|r| {
                Some(&r.format)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.as_str())
            }),
        ),
        ("size", ints(&|r| Some(r.size))),
        ("disk_bytes", ints(&|r| Some(r.disk_bytes))),
        ("mtime_ns", ints(&|r| Some(r.mtime_ns))),
        ("etag", strings(&|r| r.etag.as_deref())),
        ("start_ns", ints(&|r| r.start_ns)),
        ("end_ns", ints(&|r| r.end_ns)),
        ("duration_ns", ints(&|r| Some(r.duration_ns))),
        ("messages", ints(&|r| Some(r.messages))),
        ("topics", ints(&|r| Some(r.topics))),
        ("connections", ints(&|r| Some(r.connections))),
        ("chunks", ints(&|r| Some(r.chunks))),
        ("compression", map_column(rows, |r| &r.compression)?),
        ("indexed", bools(&|r| r.indexed)),
        ("storage", map_column(rows, |r| &r.storage)?),
        ("metadata", map_column(rows, |r| &r.metadata)?),
        ("warnings", Arc::new(warnings.finish()) as ArrayRef),
        ("damaged", bools(&|r| r.damaged)),
        ("error", strings(&|r| r.error.as_deref())),
        ("log_debug", level(0)),
        ("log_info", level(1)),
        ("log_warn", level(2)),
        ("log_error", level(3)),
        ("log_fatal", level(4)),
        ("diag_ok", diag(0)),
        ("diag_warn", diag(1)),
        ("diag_error", diag(2)),
        ("diag_stale", diag(3)),
        ("bookmarks", Arc::new(bookmarks.finish()) as ArrayRef),
    ])
    .map_err(arrow_err)
}

pub(super) fn topics_batch(rows: &[&TopicRow]) -> Result<RecordBatch> {
    let strings = |f: &dyn Fn(&TopicRow) -> &str| -> ArrayRef {
        let mut b = StringBuilder::new();
        for r in rows {
            b.append_value(f(r));
        }
        Arc::new(b.finish())
    };
    let ints = |f: &dyn Fn(&TopicRow) -> i64| -> ArrayRef {
        let mut b = Int64Builder::new();
        for r in rows {
            b.append_value(f(r));
        }
        Arc::new(b.finish())
    };
    let floats = |f: &dyn Fn(&TopicRow) -> Option<f64>| -> ArrayRef {
        let mut b = Float64Builder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    RecordBatch::try_from_iter(vec![
        ("path", strings(&|r| &r.path)),
        ("topic", strings(&|r| &r.topic)),
        ("type", strings(&|r| &r.msgtype)),
        ("encoding", strings(&|r| &r.encoding)),
        ("messages", ints(&|r| r.messages)),
        ("connections", ints(&|r| r.connections)),
        ("mean_rate_hz", floats(&|r| r.mean_rate_hz)),
        ("median_period_s", floats(&|r| r.median_period_s)),
        ("longest_gap_s", floats(&|r| r.longest_gap_s)),
        ("definition", strings(&|r| &r.definition)),
    ])
    .map_err(arrow_err)
}

/// Writes one table under a temporary name and renames it into place.
pub(crate) fn write_parquet(path: &Path, batch: RecordBatch) -> Result<()> {
    let tmp = bagscope_reader::storage::output::temp_path_for(path);
    let file = File::create(&tmp).map_err(|e| Error::Open {
        path: tmp.clone(),
        source: e,
    })?;
    let props = WriterProperties::builder()
        .set_compression(PqCompression::ZSTD(ZstdLevel::default()))
        .build();
    let write = || -> std::result::Result<(), parquet::errors::ParquetError> {
        let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))?;
        w.write(&batch)?;
        w.close()?;
        Ok(())
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::Invalid(format!(
            "{}: writing Parquet: {e}",
            path.display()
        )));
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// The rows of the catalog already in `dir`, by (path, size, mtime); empty when there is none
/// or it does not read.
/// What says a recording is unchanged: path, bytes, modification time, entity tag.
pub(super) type Unchanged = (String, i64, i64, Option<String>);

pub(super) fn read_previous(dir: &Path) -> HashMap<Unchanged, (RecordingRow, Vec<TopicRow>)> {
    let mut out = HashMap::new();
    let (Some(recs), Some(topics)) = (
        read_table(&dir.join("recordings.parquet")),
        read_table(&dir.join("topics.parquet")),
    ) else {
        return out;
    };
    let mut by_path: HashMap<String, Vec<TopicRow>> = HashMap::new();
    for b in &topics {
        for t in topic_rows(b).unwrap_or_default() {
            by_path.entry(t.path.clone()).or_default().push(t);
        }
    }
    for b in &recs {
        for r in recording_rows(b).unwrap_or_default() {
            let ts = by_path.remove(&r.path).unwrap_or_default();
            out.insert(
                (r.path.clone(), r.disk_bytes, r.mtime_ns, r.etag.clone()),
                (r, ts),
            );
        }
    }
    out
}

pub(super) fn read_table(path: &Path) -> Option<Vec<RecordBatch>> {
    let f = File::open(path).ok()?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .ok()?
        .build()
        .ok()?;
    reader.collect::<std::result::Result<Vec<_>, _>>().ok()
}

/// Column `name` of `b` as type `T`, if it is there and of that type.
pub(super) fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> Option<&'a T> {
    b.column_by_name(name)?.as_any().downcast_ref::<T>()
}

pub(super) fn recording_rows(b: &RecordBatch) -> Option<Vec<RecordingRow>> {
    use arrow_array::{BooleanArray, Int64Array, ListArray, MapArray, StringArray};
    let s = |n: &str| col::<StringArray>(b, n);
    let i = |n: &str| col::<Int64Array>(b, n);
    let map = |n: &str, row: usize| -> Option<Vec<(String, String)>> {
        let m = col::<MapArray>(b, n)?.value(row);
        let k = m.column(0).as_any().downcast_ref::<StringArray>()?;
        let v = m.column(1).as_any().downcast_ref::<StringArray>()?;
        Some(
            (0..k.len())
                .map(|j| (k.value(j).to_string(), v.value(j).to_string()))
                .collect(),
        )
    };
    let opt_i = |a: &Int64Array, row: usize| (!a.is_null(row)).then(|| a.value(row));
    let (path, format, error) = (s("path")?, s("format")?, s("error")?);
    let (size, mtime, start, end) = (i("size")?, i("mtime_ns")?, i("start_ns")?, i("end_ns")?);
    let disk = i("disk_bytes")?;
    // Not in catalogs written before remote recordings were.
    let etag = s("etag");
    let (dur, msgs, topics, conns, chunks) = (
        i("duration_ns")?,
        i("messages")?,
        i("topics")?,
        i("connections")?,
        i("chunks")?,
    );
    let levels = [
        i("log_debug")?,
        i("log_info")?,
        i("log_warn")?,
        i("log_error")?,
        i("log_fatal")?,
    ];
    let indexed = col::<BooleanArray>(b, "indexed")?;
    let damaged = col::<BooleanArray>(b, "damaged")?;
    let warnings = col::<ListArray>(b, "warnings")?;
    // Not in catalogs written before diagnostics and bookmarks were: none.
    let diags = ["diag_ok", "diag_warn", "diag_error", "diag_stale"].map(i);
    let bookmarks = col::<ListArray>(b, "bookmarks");
    let mut out = Vec::new();
    for r in 0..b.num_rows() {
        let w = warnings.value(r);
        let w = w.as_any().downcast_ref::<StringArray>()?;
        out.push(RecordingRow {
            path: path.value(r).to_string(),
            size: size.value(r),
            disk_bytes: disk.value(r),
            mtime_ns: mtime.value(r),
            etag: etag.and_then(|e| (!e.is_null(r)).then(|| e.value(r).to_string())),
            format: if format.is_null(r) {
                String::new()
            } else {
                format.value(r).to_string()
            },
            start_ns: opt_i(start, r),
            end_ns: opt_i(end, r),
            duration_ns: dur.value(r),
            messages: msgs.value(r),
            topics: topics.value(r),
            connections: conns.value(r),
            chunks: chunks.value(r),
            compression: map("compression", r)?,
            indexed: indexed.value(r),
            storage: map("storage", r)?,
            metadata: map("metadata", r)?,
            warnings: (0..w.len()).map(|j| w.value(j).to_string()).collect(),
            damaged: damaged.value(r),
            error: (!error.is_null(r)).then(|| error.value(r).to_string()),
            logs: levels.map(|a| a.value(r)),
            diagnostics: diags.map(|a| a.map_or(0, |a| a.value(r))),
            bookmarks: match bookmarks {
                Some(l) => {
                    let v = l.value(r);
                    let v = v.as_any().downcast_ref::<StringArray>()?;
                    (0..v.len()).map(|j| v.value(j).to_string()).collect()
                }
                None => Vec::new(),
            },
        });
    }
    Some(out)
}

pub(super) fn topic_rows(b: &RecordBatch) -> Option<Vec<TopicRow>> {
    use arrow_array::{Float64Array, Int64Array, StringArray};
    let s = |n: &str| col::<StringArray>(b, n);
    let f = |n: &str| col::<Float64Array>(b, n);
    let i = |n: &str| col::<Int64Array>(b, n);
    let opt = |a: &Float64Array, r: usize| (!a.is_null(r)).then(|| a.value(r));
    let (path, topic, ty, enc, def) = (
        s("path")?,
        s("topic")?,
        s("type")?,
        s("encoding")?,
        s("definition")?,
    );
    let (msgs, conns) = (i("messages")?, i("connections")?);
    let (rate, period, gap) = (
        f("mean_rate_hz")?,
        f("median_period_s")?,
        f("longest_gap_s")?,
    );
    Some(
        (0..b.num_rows())
            .map(|r| TopicRow {
                path: path.value(r).to_string(),
                topic: topic.value(r).to_string(),
                msgtype: ty.value(r).to_string(),
                encoding: enc.value(r).to_string(),
                messages: msgs.value(r),
                connections: conns.value(r),
                mean_rate_hz: opt(rate, r),
                median_period_s: opt(period, r),
                longest_gap_s: opt(gap, r),
                definition: def.value(r).to_string(),
            })
            .collect(),
    )
}
