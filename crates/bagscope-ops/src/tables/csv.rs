//! Field series as CSV: a time column, then one column per field path; rows at the union of the
//! series' times (a series with no sample at a row leaves its cell empty). What `bagscope csv`
//! writes and the app's CSV export.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use bagscope_reader::bag::Bag;
use bagscope_reader::encoding::{FieldPath, Value};
use bagscope_reader::error::{Error, Result};
use bagscope_reader::expr::{Expr, ExprError, MsgPath, Node};
use bagscope_reader::series::{expr_series, merge_rows, Env, Point, Source};

/// A column: its heading and its expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The heading (the expression as written, or the name given it).
    pub name: String,
    /// What it holds.
    pub expr: Expr,
}

impl Column {
    /// `EXPR`, or `NAME=EXPR` to head the column NAME.
    ///
    /// ```
    /// use bagscope_ops::tables::csv::Column;
    /// let c = Column::parse("speed=hypot(/odom.v.x, /odom.v.y)").unwrap();
    /// assert_eq!(c.name, "speed");
    /// assert_eq!(Column::parse("/imu.a.x.@derivative").unwrap().name, "/imu.a.x.@derivative");
    /// ```
    pub fn parse(text: &str) -> std::result::Result<Column, ExprError> {
        let text = text.trim();
        let ident = text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|&i| i > 0 && !text.starts_with(|c: char| c.is_ascii_digit()));
        if let Some(i) = ident {
            let rest = &text[i..];
            let eq = rest.trim_start();
            if eq.starts_with('=') && !eq.starts_with("==") {
                let expr_text = eq[1..].trim_start();
                let name = text[..i].to_string();
                return Expr::parse(expr_text)
                    .map(|expr| Column { name, expr })
                    .map_err(|mut e| {
                        // Point into the whole column as written.
                        let shift = text.len() - expr_text.len();
                        e.at += shift;
                        e.text = text.to_string();
                        e
                    });
            }
        }
        Ok(Column {
            name: text.to_string(),
            expr: Expr::parse(text)?,
        })
    }

    /// The column of a field path.
    pub fn of_path(p: &FieldPath) -> Column {
        let text = p.to_string();
        Column {
            name: text.clone(),
            expr: Expr {
                text,
                root: Node::Path(MsgPath::from(p)),
            },
        }
    }
}

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
    /// Rows at each message's `header.stamp` rather than its receive time (each column of one
    /// topic; messages without a header are left out and said).
    pub header_stamps: bool,
}

/// `n` in decimal onto `out`, as `write!(out, "{n}")` writes it, without the formatting
/// machinery (every row's time is one).
fn push_decimal(out: &mut String, n: u64) {
    out.push_str(itoa::Buffer::new().format(n));
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
        // As Value's Display writes them, one dispatch fewer (a cell of every row).
        Value::F64(x) => {
            let _ = write!(out, "{x:?}");
        }
        Value::F32(x) => {
            let _ = write!(out, "{x:?}");
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
    if let Some(p) = paths.iter().find(|p| p.topic.is_empty()) {
        return Err(Error::Invalid(format!(
            "{p}: a csv path starts with its topic, e.g. /imu.linear_acceleration.x"
        )));
    }
    let cols: Vec<Column> = paths.iter().map(Column::of_path).collect();
    write_csv_columns(bag, &cols, &Env::default(), opts, cancel, sink, warn)
}

/// [`write_csv`] of columns of expressions, evaluated with `env`. Columns that are paths alone
/// over a time window are written as the messages are read; others are read into series (one
/// pass for all) and merged.
pub fn write_csv_columns(
    bag: &Bag,
    cols: &[Column],
    env: &Env,
    opts: CsvOptions,
    cancel: &AtomicBool,
    sink: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> Result<usize> {
    let CsvOptions {
        start_ns,
        end_ns,
        time,
        header_stamps,
    } = opts;
    let threads = bag.options().threads();
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    // One topic a column, known before any row is written.
    let stamp_topics: Vec<&str> = if header_stamps {
        cols.iter()
            .map(|c| match c.expr.topics().as_slice() {
                [t] => Ok(*t),
                ts => Err(Error::Invalid(format!(
                    "--time header: {} reads {} topics; a column at header stamps reads one",
                    c.name,
                    ts.len()
                ))),
            })
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let mut rows = Rows::new(bag, &names, (time, header_stamps), sink);
    let mut add_row = |t: u64, row: &mut dyn Iterator<Item = Option<&Value>>| rows.row(t, row);
    // Paths alone, a window read in time order: each row written as its messages are read.
    let plain: Option<Vec<Source<'_>>> = cols
        .iter()
        .filter(|_| !header_stamps)
        .map(|c| {
            c.expr.plain_path().map(|path| Source {
                path,
                text: &c.expr.text,
                vars: &env.vars,
            })
        })
        .collect();
    let streamed = match &plain {
        Some(sources) => bagscope_reader::series::rows_in_time_order_of(
            bag,
            sources,
            (start_ns, end_ns),
            threads,
            cancel,
            &mut |t, row| add_row(t, &mut row.iter().map(Option::as_ref)),
        )?,
        None => None,
    };
    if let Some(read) = streamed {
        for (c, (problems, missing)) in cols.iter().zip(read.problems.iter().zip(read.missing)) {
            warn_path(&c.name, problems, missing, warn);
        }
    } else {
        // Every path in one pass over the chunks.
        let exprs: Vec<Expr> = cols.iter().map(|c| c.expr.clone()).collect();
        let series = expr_series(bag, &exprs, env, (start_ns, end_ns), threads, cancel)?;
        let mut all = Vec::with_capacity(series.len());
        for (i, (c, s)) in cols.iter().zip(series).enumerate() {
            warn_path(&c.name, &s.problems, s.missing, warn);
            let mut points = s.points;
            if let Some(topic) = stamp_topics.get(i) {
                at_header_stamps(bag, topic, &c.name, &mut points, cancel, warn)?;
            }
            all.push(points);
        }
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let refs: Vec<&[Point]> = all.iter().map(Vec::as_slice).collect();
        for (t, row) in merge_rows(&refs) {
            add_row(t, &mut row.into_iter())?;
        }
    }
    rows.finish()
}

/// Moves each point of `topic` to its message's `header.stamp`, saying how many messages
/// without one were left out.
fn at_header_stamps(
    bag: &Bag,
    topic: &str,
    name: &str,
    points: &mut Vec<Point>,
    cancel: &AtomicBool,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let left_out = match crate::reports::timing::at_header_stamps(bag, topic, points, cancel) {
        Ok(n) => n,
        Err(Error::Invalid(why)) => return Err(Error::Invalid(format!("--time header: {why}"))),
        Err(e) => return Err(e),
    };
    if left_out > 0 {
        warn(format!(
            "{name}: {left_out} messages of {topic} without a header stamp left out"
        ));
    }
    Ok(())
}

/// Rows of a CSV as they are written: the heading, then a row at a time, flushed in 64 KiB
/// pieces.
struct Rows<'a> {
    text: String,
    time: TimeColumn,
    start: u64,
    rows: usize,
    sink: &'a mut dyn Write,
}

impl<'a> Rows<'a> {
    /// The heading of `names` after the time column.
    fn new(
        bag: &Bag,
        names: &[&str],
        (time, header): (TimeColumn, bool),
        sink: &'a mut dyn Write,
    ) -> Rows<'a> {
        let mut text = String::with_capacity(1 << 16);
        text.push_str(match (time, header) {
            (TimeColumn::EpochNs, false) => "time_ns",
            (TimeColumn::EpochSeconds, false) => "time_s",
            (TimeColumn::SinceStart, false) => "time_since_start_s",
            (TimeColumn::EpochNs, true) => "stamp_ns",
            (TimeColumn::EpochSeconds, true) => "stamp_s",
            (TimeColumn::SinceStart, true) => "stamp_since_start_s",
        });
        for n in names {
            text.push(',');
            if n.contains([',', '"', '\n', '\r']) {
                text.push_str(&format!("\"{}\"", n.replace('"', "\"\"")));
            } else {
                text.push_str(n);
            }
        }
        text.push('\n');
        Rows {
            text,
            time,
            // (The quick summary: a rosbag2 SQLite recording's rows are not all read for its start.)
            start: bag.quick_summary().start_ns.unwrap_or(0),
            rows: 0,
            sink,
        }
    }

    fn row(&mut self, t: u64, row: &mut dyn Iterator<Item = Option<&Value>>) -> Result<()> {
        let text = &mut self.text;
        match self.time {
            TimeColumn::EpochNs => push_decimal(text, t),
            TimeColumn::EpochSeconds => text.push_str(&crate::timefmt::secs(t)),
            TimeColumn::SinceStart => {
                // A header stamp may be earlier than the recording's start.
                let (sign, d) = if t >= self.start {
                    ("", t - self.start)
                } else {
                    ("-", self.start - t)
                };
                text.push_str(&format!(
                    "{sign}{}.{:09}",
                    d / 1_000_000_000,
                    d % 1_000_000_000
                ));
            }
        }
        for v in row {
            text.push(',');
            if let Some(v) = v {
                cell(v, text);
            }
        }
        text.push('\n');
        self.rows += 1;
        if text.len() >= 1 << 16 {
            self.sink.write_all(text.as_bytes())?;
            text.clear();
        }
        Ok(())
    }

    fn finish(self) -> Result<usize> {
        self.sink.write_all(self.text.as_bytes())?;
        self.sink.flush()?;
        Ok(self.rows)
    }
}

/// What [`write_csv_plotted`] runs its scripts with.
#[derive(Debug, Clone, Copy)]
pub struct ScriptOptions<'a> {
    /// The scripts whose series columns name.
    pub scripts: &'a [crate::script::SeriesScript],
    /// What each may spend.
    pub limits: crate::script::Limits,
}

/// [`write_csv_columns`] of a layout's columns: expressions, and series that `scripts` make
/// (every source read in one pass). A script that fails is said through `warn` and its columns
/// are left empty. Returns the rows written and what the scripts printed.
#[allow(clippy::too_many_arguments)]
pub fn write_csv_plotted(
    bag: &Bag,
    cols: &[(String, crate::script::layout::Plot)],
    scripts: ScriptOptions<'_>,
    env: &Env,
    opts: CsvOptions,
    cancel: &AtomicBool,
    sink: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> crate::Result<(usize, Vec<String>)> {
    use crate::script::layout::Plot;
    let range = (opts.start_ns, opts.end_ns);
    let exprs: Vec<Expr> = cols
        .iter()
        .filter_map(|(_, p)| match p {
            Plot::Expr(e) => Some(e.clone()),
            Plot::Script(_) => None,
        })
        .collect();
    let threads = bag.options().threads();
    let mut read = expr_series(bag, &exprs, env, range, threads, cancel)?.into_iter();
    let runs = crate::script::evaluate(bag, scripts.scripts, env, range, scripts.limits, cancel)?;
    let (mut made, mut printed) = (Vec::new(), Vec::new());
    for (r, s) in runs.into_iter().zip(scripts.scripts) {
        match r {
            Ok(r) => {
                for n in r.notes {
                    warn(format!("script {:?}: {n}", s.name));
                }
                for p in r.printed {
                    printed.push(format!("{}: {p}", s.name));
                }
                made.extend(r.series);
            }
            Err(e) => warn(e.to_string()),
        }
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::Cancelled.into());
    }
    let mut all: Vec<Vec<Point>> = Vec::with_capacity(cols.len());
    for (name, p) in cols {
        match p {
            Plot::Expr(_) => {
                let s = read.next().unwrap_or_default();
                warn_path(name, &s.problems, s.missing, warn);
                all.push(s.points);
            }
            Plot::Script(n) => match made.iter().position(|m| m.name == *n) {
                Some(i) => all.push(std::mem::take(&mut made[i].points)),
                None => all.push(Vec::new()),
            },
        }
    }
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    let mut rows = Rows::new(bag, &names, (opts.time, false), sink);
    let refs: Vec<&[Point]> = all.iter().map(Vec::as_slice).collect();
    for (t, row) in merge_rows(&refs) {
        rows.row(t, &mut row.into_iter())?;
    }
    Ok((rows.finish()?, printed))
}

/// The warnings of path `p`: its problems, and the messages it was absent from.
fn warn_path(p: &str, problems: &[String], missing: u64, warn: &mut dyn FnMut(String)) {
    for pr in problems {
        warn(pr.clone());
    }
    if missing > 0 {
        warn(format!("{p}: absent from {missing} messages"));
    }
}

/// A derived output (CSV, an image) written beside its target and renamed into place by
/// [`AtomicFile::commit`] after a clean write, without waiting for the disk (see
/// [`bagscope_reader::storage::output::Staged::commit_unsynced`]); a device such as `/dev/null` is
/// written in place.
pub struct AtomicFile {
    staged: bagscope_reader::storage::output::Staged,
    file: Option<std::io::BufWriter<std::fs::File>>,
    failed: bool,
}

impl AtomicFile {
    /// Creates the temporary file.
    pub fn create(target: &Path) -> Result<AtomicFile> {
        let staged = bagscope_reader::storage::output::Staged::new(target);
        let f = staged.create()?;
        Ok(AtomicFile {
            staged,
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
    /// Flushes the file and renames it into place.
    pub fn commit(mut self) -> Result<PathBuf> {
        let f = self
            .file
            .take()
            .ok_or_else(|| Error::Invalid("already committed".into()))?;
        let f = f.into_inner().map_err(|e| Error::Io(e.into_error()))?;
        if self.failed {
            self.staged.discard();
            return Err(Error::Invalid(format!(
                "could not write {}",
                self.staged.target().display()
            )));
        }
        self.staged.commit_unsynced(f)?;
        Ok(self.staged.target().to_path_buf())
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file (after an error or a cancel) is removed: nothing partial is left.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            self.staged.discard();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};

    /// A time written by hand is what the formatting machinery writes, at every length.
    #[test]
    fn a_time_in_decimal_is_what_format_gives() {
        let mut n = 0u64;
        let mut values = vec![0, 9, 10, u64::MAX, u64::MAX - 1, 1 << 63];
        for _ in 0..20 {
            values.extend([n, n + 1, n.saturating_sub(1)]);
            n = n.saturating_mul(10).saturating_add(7);
        }
        for v in values {
            let mut s = String::from("x");
            push_decimal(&mut s, v);
            assert_eq!(s, format!("x{v}"));
        }
    }

    /// The CSV of `paths` in `[start, end)`, or of the whole recording.
    fn csv(bag: &Bag, paths: &[&str], window: Option<(u64, u64)>) -> String {
        let paths: Vec<FieldPath> = paths.iter().map(|p| FieldPath::parse(p).unwrap()).collect();
        let opts = CsvOptions {
            start_ns: window.map(|w| w.0),
            end_ns: window.map(|w| w.1),
            time: TimeColumn::EpochNs,
            header_stamps: false,
        };
        let mut out = Vec::new();
        write_csv(
            bag,
            &paths,
            opts,
            &AtomicBool::new(false),
            &mut out,
            &mut |_| {},
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Rows written as a window's messages are read (no series kept) are the rows the merge
    /// of the series makes: two topics at shared times, a topic with repeated times (the k-th
    /// row at a time takes each path's k-th value there).
    #[test]
    fn rows_written_as_read_are_the_rows_of_the_merged_series() {
        let dir = std::env::temp_dir().join(format!("bagscope-csv-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rows.mcap");
        let opts = McapOptions {
            compression: bagscope_reader::Compression::Zstd,
            chunk_size: 2048,
            profile: "ros2".into(),
            ..McapOptions::default()
        };
        let mut w = McapWriter::create(&path, opts).unwrap();
        let s = w
            .add_schema("t/msg/V", "ros2msg", b"float64 x\nint32 k")
            .unwrap();
        let (a, b) = (
            w.add_channel(s, "/a", "cdr", &[]).unwrap(),
            w.add_channel(s, "/b", "cdr", &[]).unwrap(),
        );
        let msg = |x: f64, k: i32| {
            let mut d = vec![0, 1, 0, 0];
            d.extend_from_slice(&x.to_le_bytes());
            d.extend_from_slice(&k.to_le_bytes());
            d
        };
        for i in 0..3000u32 {
            // /a twice at every third time; /b at every other time, shared with /a's.
            let t = 1_000_000_000 + u64::from(i / 2) * 1_000_000;
            w.write(a, i, t, t, &msg(f64::from(i) * 0.5, i as i32))
                .unwrap();
            if i % 3 == 0 {
                w.write(a, i, t, t, &msg(-f64::from(i), 7)).unwrap();
            }
            if i % 2 == 0 {
                w.write(b, i, t, t, &msg(0.25, -(i as i32))).unwrap();
            }
        }
        w.finish().unwrap();
        let bag = Bag::open(&path).unwrap();
        let paths = ["/a.x", "/b.k", "/a.k", "/b.x"];
        let (lo, hi) = (1_200_000_000, 2_100_000_000);
        // The window is read in time order (the rows written as read).
        let f: Vec<FieldPath> = paths.iter().map(|p| FieldPath::parse(p).unwrap()).collect();
        let streamed = bagscope_reader::series::rows_in_time_order(
            &bag,
            &f,
            (Some(lo), Some(hi)),
            2,
            &AtomicBool::new(false),
            &mut |_, _| Ok(()),
        )
        .unwrap();
        assert!(streamed.is_some());
        let window = csv(&bag, &paths, Some((lo, hi)));
        let whole = csv(&bag, &paths, None);
        let mut want = whole.lines().take(1).collect::<Vec<_>>();
        want.extend(whole.lines().skip(1).filter(|l| {
            let t: u64 = l.split(',').next().unwrap().parse().unwrap();
            (lo..hi).contains(&t)
        }));
        let got: Vec<&str> = window.lines().collect();
        assert!(got.len() > 1000, "{} rows", got.len());
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
