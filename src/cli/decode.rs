//! `bagscope echo` and `bagscope csv`: decoded messages and field series.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use bagscope::encoding::{to_json, to_yaml, FieldPath, Plan};
use bagscope::ops::csv::{write_csv, AtomicFile};
use bagscope::{timefmt, Bag, Error, Filter};

fn time_range(
    bag: &Bag,
    start: Option<&str>,
    end: Option<&str>,
) -> bagscope::Result<(Option<u64>, Option<u64>)> {
    // The start is known before the rows of a recording are read.
    let s0 = bag.quick_summary().start_ns.unwrap_or(0);
    let p = |s: Option<&str>| -> bagscope::Result<Option<u64>> {
        s.map(|s| timefmt::parse_time(s, s0).map_err(Error::Invalid))
            .transpose()
    };
    Ok((p(start)?, p(end)?))
}

/// A pose as `tf_echo` prints it: translation, quaternion and roll/pitch/yaw in degrees.
fn pose_text(p: &bagscope::ops::tf::Pose) -> String {
    let r = p.rpy().map(f64::to_degrees);
    format!(
        "xyz [{:.4}, {:.4}, {:.4}] q [{:.4}, {:.4}, {:.4}, {:.4}] rpy° [{:.2}, {:.2}, {:.2}]",
        p.t[0], p.t[1], p.t[2], p.q[0], p.q[1], p.q[2], p.q[3], r[0], r[1], r[2]
    )
}

/// `bagscope tf`: the transform tree at a time, or one frame's pose in another.
pub fn tf(
    path: &Path,
    at: Option<&str>,
    pair: Option<(String, String)>,
    track: bool,
) -> bagscope::Result<ExitCode> {
    let bag = Bag::open(path)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    if bagscope::ops::tf::tf_topics(&bag).is_empty() {
        eprintln!(
            "bagscope: {} has no transform topic (tf2_msgs/TFMessage, tf/tfMessage)",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    let t = match at {
        Some(a) => time_range(&bag, Some(a), None)?.0.unwrap_or(0),
        None => bag.summary().end_ns.unwrap_or(u64::MAX),
    };
    let h = bagscope::ops::tf::TfHistory::read(&bag, None, &AtomicBool::new(false))?;
    if h.bad > 0 {
        eprintln!("bagscope: {} transform message(s) did not decode", h.bad);
    }
    if h.truncated {
        eprintln!(
            "bagscope: only the first {} transforms were read",
            bagscope::ops::tf::MAX_SAMPLES
        );
    }
    let when = format!("{} ({} UTC)", timefmt::secs(t), timefmt::date(t));
    if let (true, Some((target, source))) = (track, &pair) {
        let rows = match h.track(target, source, usize::MAX) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("bagscope: {e}");
                return Ok(ExitCode::from(1));
            }
        };
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut text = String::from("time_ns,x,y,z,qx,qy,qz,qw,roll,pitch,yaw\n");
        for (t, p) in rows {
            let r = p.rpy();
            text.push_str(&format!(
                "{t},{},{},{},{},{},{},{},{},{},{}\n",
                p.t[0], p.t[1], p.t[2], p.q[0], p.q[1], p.q[2], p.q[3], r[0], r[1], r[2]
            ));
            if text.len() > 1 << 16 {
                if out.write_all(text.as_bytes()).is_err() {
                    return Ok(ExitCode::SUCCESS);
                }
                text.clear();
            }
        }
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        return Ok(ExitCode::SUCCESS);
    }
    if let Some((target, source)) = pair {
        return match h.lookup(&target, &source, t) {
            Ok(p) => {
                println!("{source} in {target} at {when}: {}", pose_text(&p));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("bagscope: {e}");
                Ok(ExitCode::from(1))
            }
        };
    }
    println!("transform tree at {when}:");
    for f in h.tree_at(t) {
        let indent = "  ".repeat(f.depth);
        let name = &h.frames[f.frame];
        match f.from_parent {
            None => println!("{indent}{name}"),
            Some(s) => {
                let age = if h.is_static[f.frame] {
                    "static".to_string()
                } else {
                    format!("{} ago", timefmt::period(t.saturating_sub(s.time_ns)))
                };
                println!("{indent}{name}  {}  ({age})", pose_text(&s.pose));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `bagscope echo`: messages in time order, decoded.
pub fn echo(
    path: &Path,
    topics: &[String],
    start: Option<&str>,
    end: Option<&str>,
    json: bool,
    count: Option<u64>,
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
    // Per connection: messages that did not decode, the first one's time and error.
    let mut failed: std::collections::BTreeMap<usize, (u64, u64, String)> = Default::default();
    let mut text = String::new();
    let mut printed = 0u64;
    for m in bag.messages(&filter)? {
        if count.is_some_and(|n| printed >= n) {
            break;
        }
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
                failed.entry(m.conn).or_insert((0, m.time_ns, e)).0 += 1;
                continue;
            }
        }
        if out.write_all(text.as_bytes()).is_err() {
            // A closed pipe (`| head`) ends the output quietly.
            return Ok(ExitCode::SUCCESS);
        }
        printed += 1;
    }
    let _ = out.flush();
    report_undecoded(&bag, &failed);
    if !failed.is_empty() {
        let not: u64 = failed.values().map(|f| f.0).sum();
        eprintln!("bagscope: {printed} message(s) printed, {not} not decoded");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reports messages that did not decode, once per connection with a count.
fn report_undecoded(bag: &Bag, failed: &std::collections::BTreeMap<usize, (u64, u64, String)>) {
    let s = bag.summary();
    for (&c, (n, t, e)) in failed {
        let conn = &s.connections[c];
        eprintln!(
            "bagscope: {} (connection {}): {n} message(s) did not decode, the first at {}: {e}",
            conn.topic,
            conn.id,
            timefmt::secs(*t)
        );
    }
}

/// What `bagscope export` was asked.
pub struct ExportArgs<'a> {
    pub inputs: &'a [std::path::PathBuf],
    pub out: &'a Path,
    pub topics: &'a [String],
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub compression: Option<&'a str>,
    pub chunk_size: usize,
    pub format: Option<&'a str>,
    pub split_mb: Option<u64>,
    pub split_duration: Option<f64>,
    pub to_ros2: bool,
    /// With `to_ros2`: no translated or mapped types.
    pub strict_types: bool,
    /// ROS 2 messages to ROS 1.
    pub to_ros1: bool,
    pub migrate: Option<&'a Path>,
}

/// `bagscope export`: one or several recordings, merged in time order, to any format.
pub fn export(a: ExportArgs<'_>) -> bagscope::Result<ExitCode> {
    use bagscope::ops::export::OutputFormat;
    use bagscope::storage::rosbag2_writer::Rosbag2Compression;
    let mut bags = Vec::new();
    for p in a.inputs {
        let bag = Bag::open(p)?;
        for w in bag.warnings() {
            eprintln!("bagscope: warning: {}: {w}", p.display());
        }
        // A recording whose storage yields nothing of what its metadata lists is not
        // exported as an empty file.
        let s = bag.summary();
        if let Some((_, lost)) = s
            .storage_facts
            .iter()
            .find(|(k, _)| k == bagscope::storage::rosbag2::MISSING_FACT)
        {
            if s.message_count == 0 {
                return Err(Error::Invalid(format!(
                    "{}: none of its messages could be read (missing: {lost}); nothing exported",
                    p.display()
                )));
            }
        }
        bags.push(bag);
    }
    let Some(first) = bags.first() else {
        return Err(Error::Invalid("no recording to export".into()));
    };
    // With several inputs, +S times count from the earliest start.
    let (start_ns, end_ns) = time_range(first, a.start, a.end)?;
    let format = match a.format {
        Some(f) => OutputFormat::parse(f).ok_or_else(|| {
            Error::Invalid(format!(
                "unknown format {f:?}: bag, mcap, rosbag2-sqlite3 or rosbag2-mcap"
            ))
        })?,
        None => OutputFormat::from_path(a.out),
    };
    let rosbag2 = matches!(
        format,
        OutputFormat::Rosbag2Sqlite3 | OutputFormat::Rosbag2Mcap
    );
    let mut r2 = Rosbag2Compression::None;
    let compression = match (a.compression, format) {
        (None, OutputFormat::Ros1Bag) => bagscope::Compression::Lz4,
        (None, _) => bagscope::Compression::Zstd,
        (Some("none"), _) => bagscope::Compression::None,
        (Some("lz4"), OutputFormat::Ros1Bag | OutputFormat::Mcap) => bagscope::Compression::Lz4,
        (Some("bz2"), OutputFormat::Ros1Bag) => bagscope::Compression::Bz2,
        (Some("zstd"), OutputFormat::Mcap) => bagscope::Compression::Zstd,
        (Some("zstd-file"), _) if rosbag2 => {
            r2 = Rosbag2Compression::File;
            bagscope::Compression::None
        }
        (Some("zstd-message" | "zstd"), _) if rosbag2 => {
            r2 = Rosbag2Compression::Message;
            bagscope::Compression::None
        }
        (Some(c), f) => {
            return Err(Error::Invalid(format!(
                "compression {c:?} does not apply to {}: a bag takes none, lz4 or bz2; MCAP none, lz4 or zstd; rosbag2 none, zstd-file or zstd-message",
                f.name()
            )))
        }
    };
    let connections = if a.topics.is_empty() {
        None
    } else {
        Some(first.connections_of_topics(a.topics)?)
    };
    let opts = bagscope::ops::export::ExportOptions {
        filter: Filter {
            connections,
            start_ns,
            end_ns,
        },
        write: bagscope::WriteOptions {
            compression,
            chunk_size: a.chunk_size,
        },
        format: Some(format),
        rosbag2_compression: r2,
        split_bytes: a.split_mb.map(|m| m << 20),
        // Seconds to ns; NaN and negatives become 0, which the writer refuses as too short.
        split_ns: a.split_duration.map(|s| (s * 1e9) as u64),
        to_ros2: a.to_ros2,
        strict_types: a.strict_types,
        to_ros1: a.to_ros1,
        migrate: a.migrate.map(Path::to_path_buf),
    };
    if a.split_mb == Some(0) {
        return Err(Error::Invalid("--split-mb must be at least 1".into()));
    }
    let t0 = std::time::Instant::now();
    let r = bagscope::ops::export::export_many(
        &bags,
        a.out,
        &opts,
        &AtomicBool::new(false),
        &mut |_| {},
    )?;
    for s in &r.skipped {
        eprintln!("bagscope: left out: {s}");
    }
    for n in &r.notes {
        eprintln!("bagscope: {n}");
    }
    for u in &r.unconverted {
        eprintln!("bagscope: {u}");
    }
    eprintln!(
        "{} ({}): {} messages on {} connections, {} in {:.2} s",
        r.path.display(),
        r.format.name(),
        r.messages,
        r.connections,
        timefmt::bytes(r.file_size),
        t0.elapsed().as_secs_f64()
    );
    // Written, but not everything: say so in the exit code.
    if !r.unconverted.is_empty() {
        return Ok(ExitCode::from(1));
    }
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
    let cancel = AtomicBool::new(false);
    let mut warned = 0u64;
    let mut warn = |w: String| {
        warned += 1;
        eprintln!("bagscope: warning: {w}");
    };
    let opts = bagscope::ops::csv::CsvOptions {
        start_ns,
        end_ns,
        time: bagscope::ops::csv::TimeColumn::EpochNs,
    };
    // `-o -` is standard output, as the usual convention has it.
    match out.filter(|o| o.as_os_str() != "-") {
        Some(o) => {
            if std::fs::canonicalize(o).ok() == std::fs::canonicalize(bag_path).ok() {
                return Err(Error::Invalid(format!(
                    "{} is the bag being read; choose another output",
                    o.display()
                )));
            }
            let mut f = AtomicFile::create(o)?;
            write_csv(&bag, &parsed, opts, &cancel, &mut f, &mut warn)?;
            f.commit()?;
        }
        None => {
            let mut so = std::io::BufWriter::new(std::io::stdout().lock());
            match write_csv(&bag, &parsed, opts, &cancel, &mut so, &mut warn) {
                // A closed pipe (`| head`) ends the output quietly.
                Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => {
                    r?;
                }
            }
        }
    }
    // Every row that could be read is written; values that could not are reported above.
    if warned > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `bagscope gen`: typed code for the types a recording uses.
pub fn gen(
    path: &Path,
    lang: &str,
    out_dir: &Path,
    topics: &[String],
) -> bagscope::Result<ExitCode> {
    use bagscope::ops::gen::{generate, Lang};
    let lang = Lang::parse(lang)
        .ok_or_else(|| Error::Invalid(format!("unknown language {lang:?}: cpp, rust or python")))?;
    let bag = Bag::open(path)?;
    let s = bag.summary();
    let conns: Vec<usize> = if topics.is_empty() {
        (0..s.connections.len()).collect()
    } else {
        bag.connections_of_topics(topics)?
    };
    let mut defs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for ci in conns {
        let c = &s.connections[ci];
        if !seen.insert((c.datatype.clone(), c.message_definition.clone())) {
            continue;
        }
        match bagscope::encoding::Plan::for_connection(c) {
            // The generated loaders read ROS 1 and CDR bytes; protobuf and JSON have their
            // own code generators (protoc, JSON Schema tools).
            Ok(p) if p.proto.is_some() || p.json => eprintln!(
                "bagscope: {} ({}) left out: {}-encoded; the generated loaders read ROS 1 and CDR",
                c.topic, c.datatype, c.encoding
            ),
            Ok(p) => defs.push(p.def),
            Err(e) => eprintln!("bagscope: {} ({}) left out: {e}", c.topic, c.datatype),
        }
    }
    if defs.is_empty() {
        return Err(Error::Invalid(
            "no decodable type to generate code for".into(),
        ));
    }
    let code = generate(&defs, lang);
    std::fs::create_dir_all(out_dir)?;
    let file = out_dir.join(lang.file_name());
    let mut f = bagscope::ops::csv::AtomicFile::create(&file)?;
    std::io::Write::write_all(&mut f, code.as_bytes())?;
    f.commit()?;
    eprintln!(
        "{}: {} message types from {} definitions",
        file.display(),
        bagscope::ops::gen::type_names(&defs).len(),
        defs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// What `bagscope image` was asked.
pub struct ImageArgs<'a> {
    pub bag: &'a Path,
    pub topic: &'a str,
    pub at: Option<&'a str>,
    pub index: Option<usize>,
    pub out: &'a Path,
    pub colormap: Option<&'a str>,
    pub range: Option<(f32, f32)>,
    pub rotate: u8,
}

/// The colormap asked for, else the image's default (turbo for depth and float).
fn colormap_for(
    img: &bagscope::ops::image::Image,
    asked: Option<&str>,
) -> bagscope::Result<bagscope::ops::image::Colormap> {
    use bagscope::ops::image::{Colormap, Pixels};
    Ok(match asked {
        Some("grey" | "gray") => Colormap::Grey,
        Some("turbo") => Colormap::Turbo,
        Some(other) => {
            return Err(Error::Invalid(format!(
                "unknown colormap {other:?} (grey or turbo)"
            )))
        }
        None => match img.pixels {
            Pixels::Mono8(_) | Pixels::Rgba(_) | Pixels::Occupancy(_) => Colormap::Grey,
            _ => Colormap::Turbo,
        },
    })
}

/// What `bagscope frames` was asked.
pub struct FramesArgs<'a> {
    pub bag: &'a Path,
    pub topic: &'a str,
    pub out: &'a Path,
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub every: usize,
    pub colormap: Option<&'a str>,
    pub range: Option<(f32, f32)>,
    pub rotate: u8,
}

/// `bagscope frames`: every image of a topic as numbered PNG files.
pub fn frames(a: FramesArgs) -> bagscope::Result<ExitCode> {
    use bagscope::ops::image::{decode_message, encode_png, Orientation};
    if let Some(c) = a.colormap {
        if !matches!(c, "grey" | "gray" | "turbo") {
            return Err(Error::Invalid(format!(
                "unknown colormap {c:?} (grey or turbo)"
            )));
        }
    }
    let bag = Bag::open(a.bag)?;
    let conns = bag.connections_of_topics(&[a.topic.to_string()])?;
    let (start_ns, end_ns) = time_range(&bag, a.start, a.end)?;
    std::fs::create_dir_all(a.out)?;
    let stem: String = a
        .topic
        .trim_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let o = Orientation {
        quarter_turns: a.rotate % 4,
        ..Default::default()
    };
    let every = a.every.max(1);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The reader hands messages to the workers over a bounded channel; each worker decodes,
    // draws, encodes and writes (atomically) its frames.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, bagscope::Message)>(threads * 2);
    let rx = std::sync::Mutex::new(rx);
    let written = std::sync::atomic::AtomicU64::new(0);
    let failed: std::sync::Mutex<Vec<(u64, String)>> = std::sync::Mutex::new(Vec::new());
    let read = std::thread::scope(|sc| -> bagscope::Result<usize> {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let next = match rx.lock() {
                    Ok(r) => r.recv(),
                    Err(_) => return,
                };
                let Ok((k, m)) = next else { return };
                let r = bag
                    .plan(m.conn)
                    .map_err(|e| e.to_string())
                    .and_then(|(plan, _)| decode_message(&plan, &m.data))
                    .and_then(|img| {
                        let cmap = colormap_for(&img, a.colormap).map_err(|e| e.to_string())?;
                        let range = a.range.unwrap_or_else(|| img.default_range());
                        let (w, h, px) = img.render(cmap, range, o);
                        encode_png(w, h, &px)
                    })
                    .and_then(|png| {
                        let p = a.out.join(format!("{stem}_{k:06}_{}.png", m.time_ns));
                        let mut f = AtomicFile::create(&p).map_err(|e| e.to_string())?;
                        f.write_all(&png).map_err(|e| e.to_string())?;
                        f.commit().map_err(|e| e.to_string())
                    });
                match r {
                    Ok(_) => {
                        written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Err(e) => {
                        if let Ok(mut f) = failed.lock() {
                            f.push((m.time_ns, e));
                        }
                    }
                }
            });
        }
        let mut k = 0usize;
        let msgs = bag.messages(&Filter {
            connections: Some(conns),
            start_ns,
            end_ns,
        })?;
        for (n, m) in msgs.enumerate() {
            // Every message is read, so that an error in a skipped one still stops the run.
            let m = m?;
            if !n.is_multiple_of(every) {
                continue;
            }
            if tx.send((k, m)).is_err() {
                break;
            }
            k += 1;
        }
        drop(tx);
        Ok(k)
    })?;
    let written = written.into_inner();
    let mut failed = failed.into_inner().unwrap_or_default();
    failed.sort_by_key(|f| f.0);
    println!(
        "{}: {written} of {read} frames of {} written",
        a.out.display(),
        a.topic
    );
    if let Some((t, e)) = failed.first() {
        eprintln!(
            "bagscope: {} frame(s) not written, the first at {}: {e}",
            failed.len(),
            timefmt::secs(*t)
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `bagscope image`: one camera message as a PNG.
pub fn image(a: ImageArgs) -> bagscope::Result<ExitCode> {
    use bagscope::ops::image::Orientation;
    let bag = Bag::open(a.bag)?;
    let conns = bag.connections_of_topics(&[a.topic])?;
    let tables = bag.tables()?;
    // Every message of the topic, in time order, as (time, connection, entry).
    let mut all: Vec<(u64, usize, bagscope::IndexEntry)> = conns
        .iter()
        .flat_map(|&c| {
            tables
                .per_connection
                .get(c)
                .into_iter()
                .flatten()
                .map(move |e| (e.time_ns, c, *e))
        })
        .collect();
    all.sort_by_key(|x| x.0);
    let pick = match (a.at, a.index) {
        (Some(t), _) => {
            let (Some(t), _) = time_range(&bag, Some(t), None)? else {
                return Err(Error::Invalid("no time".into()));
            };
            let k = all.partition_point(|x| x.0 <= t);
            k.checked_sub(1).and_then(|k| all.get(k)).ok_or_else(|| {
                Error::NotFound(format!("no message on {} at or before {t}", a.topic))
            })?
        }
        (None, i) => {
            let i = i.unwrap_or(0);
            all.get(i).ok_or_else(|| {
                Error::NotFound(format!("{} has {} messages, no #{i}", a.topic, all.len()))
            })?
        }
    };
    let (time_ns, conn, entry) = *pick;
    let (plan, _) = bag
        .plan(conn)
        .map_err(|e| Error::Invalid(format!("{}: {e}", a.topic)))?;
    let m = bag.message(conn, entry)?;
    let img = bagscope::ops::image::decode_message(&plan, &m.data)
        .map_err(|e| Error::Invalid(format!("{} message at {time_ns}: {e}", a.topic)))?;
    let cmap = colormap_for(&img, a.colormap)?;
    let range = a.range.unwrap_or_else(|| img.default_range());
    let o = Orientation {
        quarter_turns: a.rotate % 4,
        ..Default::default()
    };
    let (w, h, px) = img.render(cmap, range, o);
    let png = bagscope::ops::image::encode_png(w, h, &px).map_err(Error::Invalid)?;
    let mut f = AtomicFile::create(a.out)?;
    f.write_all(&png)?;
    f.commit()?;
    let range_text = if img.is_scalar() {
        format!(", values {:.4} to {:.4}", range.0, range.1)
    } else {
        String::new()
    };
    println!(
        "{}: {}×{} {} at {}{range_text}",
        a.out.display(),
        img.width,
        img.height,
        img.encoding,
        timefmt::date(time_ns)
    );
    Ok(ExitCode::SUCCESS)
}

/// `bagscope log`: the recording's log messages, filtered.
pub fn log(
    path: &Path,
    level: Option<&str>,
    node: Option<&str>,
    grep: Option<&str>,
    json: bool,
) -> bagscope::Result<ExitCode> {
    use bagscope::ops::log::{log_topics, read_logs, Level};
    let min = match level {
        Some(l) => Level::parse(l)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown level {l:?} (debug, info, warn, error, fatal)"
                ))
            })?
            .rank(),
        None => 0,
    };
    let grep = grep.map(str::to_lowercase);
    let bag = Bag::open(path)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let topics = log_topics(&bag);
    if topics.is_empty() {
        eprintln!(
            "bagscope: {} has no log topic (rosgraph_msgs/Log, rcl_interfaces/msg/Log)",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    let s = bag.summary();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut io_err = None;
    let bad = read_logs(&bag, &topics, &AtomicBool::new(false), &mut |lines| {
        for l in lines {
            if l.level.rank() < min
                || node.is_some_and(|n| !l.node.contains(n))
                || grep
                    .as_ref()
                    .is_some_and(|g| !l.msg.to_lowercase().contains(g))
            {
                continue;
            }
            let r = if json {
                let v = serde_json::json!({
                    "time_ns": l.time_ns,
                    "stamp_ns": l.stamp_ns,
                    "topic": s.topics[l.topic].name,
                    "level": l.level.to_string(),
                    "node": l.node,
                    "msg": l.msg,
                    "file": l.file,
                    "function": l.function,
                    "line": l.line,
                });
                writeln!(out, "{v}")
            } else {
                writeln!(
                    out,
                    "{} [{}] {}: {} ({}:{})",
                    timefmt::date(l.time_ns),
                    l.level,
                    l.node,
                    l.msg,
                    l.file,
                    l.line
                )
            };
            if let Err(e) = r {
                io_err = Some(e);
                return false;
            }
        }
        true
    })?;
    if let Some(e) = io_err {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    out.flush().ok();
    if bad > 0 {
        eprintln!("bagscope: {bad} log message(s) could not be decoded");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `bagscope find`: one line per hit (time, seconds from the start, value); exit 1 when none.
pub fn find(path: &Path, query: &str) -> bagscope::Result<ExitCode> {
    let q = bagscope::ops::find::parse_query(query).map_err(Error::Invalid)?;
    let bag = Bag::open(path)?;
    let start = bag.summary().start_ns.unwrap_or(0);
    let (hits, capped) = bagscope::ops::find::find(&bag, &q, &AtomicBool::new(false))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for h in &hits {
        let r = writeln!(
            out,
            "{}  +{:.3}s  {}",
            timefmt::date(h.time_ns),
            h.time_ns.saturating_sub(start) as f64 / 1e9,
            h.value
        );
        if r.is_err() {
            break;
        }
    }
    out.flush().ok();
    eprintln!(
        "bagscope: {} hit(s){}",
        hits.len(),
        if capped {
            " (stopped at the limit)"
        } else {
            ""
        }
    );
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `bagscope timing`: a topic's rate, median period, long gaps and stamp delays.
pub fn timing(
    path: &Path,
    topic: &str,
    factor: f64,
    max_gaps: usize,
) -> bagscope::Result<ExitCode> {
    use bagscope::ops::timing::{gaps, median_period, stamp_delays, topic_times};
    use std::fmt::Write as _;
    let bag = Bag::open(path)?;
    let s = bag.summary();
    let start = s.start_ns.unwrap_or(0);
    let times = topic_times(&bag, topic)?;
    let dur = s.duration_ns() as f64 / 1e9;
    let mut o = String::new();
    let _ = writeln!(o, "topic:          {topic}");
    let _ = writeln!(o, "messages:       {}", times.len());
    if dur > 0.0 {
        let _ = writeln!(
            o,
            "mean rate:      {:.3} Hz (count / recording duration)",
            times.len() as f64 / dur
        );
    }
    let _ = match median_period(&times) {
        Some(m) => writeln!(
            o,
            "median period:  {} ({:.3} Hz)",
            timefmt::period(m),
            1e9 / m as f64
        ),
        None => writeln!(o, "median period:  -"),
    };
    let g = gaps(&times, factor);
    let _ = writeln!(o, "gaps > {factor}× median: {}", g.len());
    for x in g.iter().take(max_gaps) {
        let _ = writeln!(
            o,
            "  +{:.3}s  {}",
            x.start_ns.saturating_sub(start) as f64 / 1e9,
            timefmt::period(x.len_ns)
        );
    }
    let _ = match stamp_delays(&bag, topic, &AtomicBool::new(false)) {
        Ok(d) if !d.is_empty() => {
            let mut v: Vec<i64> = d.iter().map(|x| x.1).collect();
            v.sort_unstable();
            let ms = |x: i64| x as f64 / 1e6;
            writeln!(
                o,
                "stamp - receive time: min {:.3} ms, median {:.3} ms, max {:.3} ms ({} messages)",
                ms(v[0]),
                ms(v[v.len() / 2]),
                ms(v[v.len() - 1]),
                v.len()
            )
        }
        Ok(_) => writeln!(o, "stamp - receive time: no message read"),
        Err(e) => writeln!(o, "stamp - receive time: {e}"),
    };
    match std::io::stdout().lock().write_all(o.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}
