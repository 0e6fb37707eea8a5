//! `bagscope echo` and `bagscope csv`: decoded messages and field series.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use bagscope::decode::{to_json, to_yaml, FieldPath, Plan, Value};
use bagscope::series::{field_series, merge_rows};
use bagscope::{timefmt, Bag, Error, Filter};

fn time_range(
    bag: &Bag,
    start: Option<&str>,
    end: Option<&str>,
) -> bagscope::Result<(Option<u64>, Option<u64>)> {
    let s0 = bag.summary().start_ns.unwrap_or(0);
    let p = |s: Option<&str>| -> bagscope::Result<Option<u64>> {
        s.map(|s| timefmt::parse_time(s, s0).map_err(Error::Invalid))
            .transpose()
    };
    Ok((p(start)?, p(end)?))
}

/// `bagscope echo`: messages in time order, decoded.
pub fn echo(
    path: &Path,
    topics: &[String],
    start: Option<&str>,
    end: Option<&str>,
    json: bool,
) -> bagscope::Result<ExitCode> {
    let bag = Bag::open(path)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let connections = if topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(topics)?)
    };
    let s = bag.summary();
    let plans: Vec<Result<Plan, String>> = s
        .connections
        .iter()
        .map(|c| Plan::for_connection(c).map_err(|e| e.to_string()))
        .collect();
    let filter = Filter {
        connections,
        start_ns,
        end_ns,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = 0u64;
    let mut text = String::new();
    for m in bag.messages(&filter)? {
        let m = m?;
        let c = &s.connections[m.conn];
        let decoded = match &plans[m.conn] {
            Ok(p) => p.decode(&m.data).map(|n| (p, n)).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        text.clear();
        match decoded {
            Ok((p, n)) => {
                if json {
                    text.push_str(&format!("{{\"time_ns\": {}, \"topic\": ", m.time_ns));
                    text.push_str(&serde_json::Value::String(c.topic.clone()).to_string());
                    text.push_str(", \"message\": ");
                    to_json(&p.def, &n.value, &mut text);
                    text.push_str("}\n");
                } else {
                    text.push_str(&format!(
                        "# {} @ {} ({})\n",
                        c.topic,
                        timefmt::secs(m.time_ns),
                        timefmt::date(m.time_ns)
                    ));
                    to_yaml(&p.def, &n.value, 0, &mut text);
                    text.push_str("---\n");
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!(
                    "bagscope: message of {} at {}: {e}",
                    c.topic,
                    timefmt::secs(m.time_ns)
                );
                continue;
            }
        }
        if out.write_all(text.as_bytes()).is_err() {
            // A closed pipe (`| head`) ends the output quietly.
            return Ok(ExitCode::SUCCESS);
        }
    }
    let _ = out.flush();
    if failed > 0 {
        eprintln!("bagscope: {failed} messages did not decode");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn cell(v: &Value, out: &mut String) {
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

/// `bagscope export`.
pub fn export(
    path: &Path,
    out: &Path,
    topics: &[String],
    start: Option<&str>,
    end: Option<&str>,
    compression: &str,
    chunk_size: usize,
) -> bagscope::Result<ExitCode> {
    let bag = Bag::open(path)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let compression =
        bagscope::Compression::from_name(compression.as_bytes()).ok_or_else(|| {
            Error::Invalid(format!(
                "unknown compression {compression:?}: none, lz4 or bz2"
            ))
        })?;
    let connections = if topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(topics)?)
    };
    let opts = bagscope::export::ExportOptions {
        filter: Filter {
            connections,
            start_ns,
            end_ns,
        },
        write: bagscope::WriteOptions {
            compression,
            chunk_size,
        },
    };
    let t0 = std::time::Instant::now();
    let r = bagscope::export::export(&bag, out, &opts, &AtomicBool::new(false), &mut |_| {})?;
    eprintln!(
        "{}: {} messages on {} connections, {} in {:.2} s",
        r.path.display(),
        r.messages,
        r.connections,
        timefmt::bytes(r.file_size),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// `bagscope csv`: field series as CSV, rows at the union of their times.
pub fn csv(
    bag_path: &Path,
    paths: &[String],
    start: Option<&str>,
    end: Option<&str>,
    out: Option<&PathBuf>,
) -> bagscope::Result<ExitCode> {
    let bag = Bag::open(bag_path)?;
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let parsed = paths
        .iter()
        .map(|p| FieldPath::parse(p).map_err(Error::Invalid))
        .collect::<bagscope::Result<Vec<_>>>()?;
    for p in &parsed {
        if p.topic.is_empty() {
            return Err(Error::Invalid(format!(
                "{p}: a csv path starts with its topic, e.g. /imu.linear_acceleration.x"
            )));
        }
    }
    let cancel = AtomicBool::new(false);
    let threads = bagscope::iter::default_threads();
    let mut all = Vec::new();
    for p in &parsed {
        let s = field_series(&bag, p, start_ns, end_ns, threads, &cancel, &|_| {})?;
        for pr in &s.problems {
            eprintln!("bagscope: warning: {pr}");
        }
        if s.missing > 0 {
            eprintln!("bagscope: warning: {p}: absent from {} messages", s.missing);
        }
        all.push(s.points);
    }
    let refs: Vec<&[bagscope::series::Point]> = all.iter().map(Vec::as_slice).collect();
    let mut text = String::with_capacity(1 << 20);
    text.push_str("time_ns");
    for p in paths {
        text.push(',');
        if p.contains([',', '"']) {
            text.push_str(&format!("\"{}\"", p.replace('"', "\"\"")));
        } else {
            text.push_str(p);
        }
    }
    text.push('\n');
    let mut sink: Box<dyn Write> = match out {
        Some(o) => {
            if std::fs::canonicalize(o).ok() == std::fs::canonicalize(bag_path).ok() {
                return Err(Error::Invalid(format!(
                    "{} is the bag being read; choose another output",
                    o.display()
                )));
            }
            Box::new(AtomicFile::create(o)?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    for (t, row) in merge_rows(&refs) {
        text.push_str(&t.to_string());
        for v in row {
            text.push(',');
            if let Some(v) = v {
                cell(v, &mut text);
            }
        }
        text.push('\n');
        if text.len() > (1 << 20) {
            if sink.write_all(text.as_bytes()).is_err() {
                return Ok(ExitCode::SUCCESS);
            }
            text.clear();
        }
    }
    if sink.write_all(text.as_bytes()).is_err() {
        return Ok(ExitCode::SUCCESS);
    }
    drop(sink);
    Ok(ExitCode::SUCCESS)
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
    pub fn create(target: &Path) -> bagscope::Result<AtomicFile> {
        let tmp = bagscope::writer::temp_path_for(target);
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

impl Drop for AtomicFile {
    fn drop(&mut self) {
        let ok = match self.file.take() {
            Some(f) => f
                .into_inner()
                .map(|f| f.sync_all().is_ok())
                .unwrap_or(false),
            None => false,
        };
        if ok && !self.failed && std::fs::rename(&self.tmp, &self.target).is_ok() {
            return;
        }
        eprintln!("bagscope: could not write {}", self.target.display());
        let _ = std::fs::remove_file(&self.tmp);
    }
}
