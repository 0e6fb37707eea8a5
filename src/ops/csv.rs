//! Field series as CSV: a time column, then one column per field path; rows at the union of the
//! series' times (a series with no sample at a row leaves its cell empty). What `bagscope csv`
//! writes and the app's CSV export.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::bag::Bag;
use crate::encoding::{FieldPath, Value};
use crate::error::{Error, Result};
use crate::ops::series::{field_series_many, merge_rows, Point};

/// How the time column is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeColumn {
    /// `time_ns`: receive time, ns since the epoch.
    #[default]
    EpochNs,
    /// `time_s`: seconds since the epoch (9 decimals).
    EpochSeconds,
    /// `time_since_start_s`: seconds since the bag's start.
    SinceStart,
}

/// The rows and time column of a CSV.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvOptions {
    /// Inclusive start (ns).
    pub start_ns: Option<u64>,
    /// Exclusive end (ns).
    pub end_ns: Option<u64>,
    /// The time column.
    pub time: TimeColumn,
}

/// One CSV cell: booleans as 0/1, floats as their shortest exact text.
pub fn cell(v: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match v {
        Value::Bool(b) => out.push_str(if *b { "1" } else { "0" }),
        Value::F32(x) if !x.is_finite() => {
            let _ = write!(out, "{x}");
        }
        Value::F64(x) if !x.is_finite() => {
            let _ = write!(out, "{x}");
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Reads the series of `paths` within `[start_ns, end_ns)` and writes them as CSV to `sink`;
/// warnings (paths absent from some messages, connections without the path) go to `warn`.
pub fn write_csv(
    bag: &Bag,
    paths: &[FieldPath],
    opts: CsvOptions,
    cancel: &AtomicBool,
    sink: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> Result<usize> {
    let CsvOptions {
        start_ns,
        end_ns,
        time,
    } = opts;
    let threads = crate::settings::default_threads();
    if let Some(p) = paths.iter().find(|p| p.topic.is_empty()) {
        return Err(Error::Invalid(format!(
            "{p}: a csv path starts with its topic, e.g. /imu.linear_acceleration.x"
        )));
    }
    // Every path in one pass over the chunks.
    let series = field_series_many(bag, paths, start_ns, end_ns, threads, cancel)?;
    let mut all = Vec::with_capacity(series.len());
    for (p, s) in paths.iter().zip(series) {
        for pr in &s.problems {
            warn(pr.clone());
        }
        if s.missing > 0 {
            warn(format!("{p}: absent from {} messages", s.missing));
        }
        all.push(s.points);
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::Cancelled);
    }
    let refs: Vec<&[Point]> = all.iter().map(Vec::as_slice).collect();
    // (The quick summary: a rosbag2 SQLite recording's rows are not all read for its start.)
    let start = bag.quick_summary().start_ns.unwrap_or(0);
    let mut text = String::with_capacity(1 << 20);
    text.push_str(match time {
        TimeColumn::EpochNs => "time_ns",
        TimeColumn::EpochSeconds => "time_s",
        TimeColumn::SinceStart => "time_since_start_s",
    });
    for p in paths {
        let p = p.to_string();
        text.push(',');
        if p.contains([',', '"']) {
            text.push_str(&format!("\"{}\"", p.replace('"', "\"\"")));
        } else {
            text.push_str(&p);
        }
    }
    text.push('\n');
    let mut rows = 0;
    for (t, row) in merge_rows(&refs) {
        match time {
            TimeColumn::EpochNs => text.push_str(&t.to_string()),
            TimeColumn::EpochSeconds => text.push_str(&crate::timefmt::secs(t)),
            TimeColumn::SinceStart => {
                let d = t.saturating_sub(start);
                text.push_str(&format!("{}.{:09}", d / 1_000_000_000, d % 1_000_000_000));
            }
        }
        for v in row {
            text.push(',');
            if let Some(v) = v {
                cell(v, &mut text);
            }
        }
        text.push('\n');
        rows += 1;
        if text.len() > (1 << 20) {
            sink.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    sink.write_all(text.as_bytes())?;
    sink.flush()?;
    Ok(rows)
}

/// A file written beside its target and renamed into place when dropped after a clean write.
pub struct AtomicFile {
    tmp: PathBuf,
    target: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
    failed: bool,
}

impl AtomicFile {
    /// Creates the temporary file.
    pub fn create(target: &Path) -> Result<AtomicFile> {
        let tmp = crate::storage::ros1::writer::temp_path_for(target);
        let f = std::fs::File::create(&tmp)?;
        Ok(AtomicFile {
            tmp,
            target: target.to_path_buf(),
            file: Some(std::io::BufWriter::new(f)),
            failed: false,
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = match &mut self.file {
            Some(f) => f.write(buf),
            None => Ok(0),
        };
        self.failed |= r.is_err();
        r
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl AtomicFile {
    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<PathBuf> {
        let f = self
            .file
            .take()
            .ok_or_else(|| Error::Invalid("already committed".into()))?;
        let f = f.into_inner().map_err(|e| Error::Io(e.into_error()))?;
        f.sync_all()?;
        if self.failed {
            return Err(Error::Invalid(format!(
                "could not write {}",
                self.target.display()
            )));
        }
        std::fs::rename(&self.tmp, &self.target)?;
        Ok(self.target.clone())
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file (after an error or a cancel) is removed: nothing partial is left.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
