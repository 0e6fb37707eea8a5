//! The export window: the selected range and the shown topics to a new recording (ROS 1 bag,
//! MCAP, rosbag2 with SQLite or MCAP storage; compression, chunk size), or the plotted series
//! to CSV; each a background job with progress and cancel.

use std::path::PathBuf;

use super::job::{Handle, Job};
use super::{Cmd, Doc};
use bagscope_ops::tables::csv::{write_csv_columns, AtomicFile, Column, TimeColumn};
use bagscope_ops::tables::export::{export, ExportOptions, OutputFormat};
use bagscope_ops::timefmt;
use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;
use bagscope_reader::{Compression, Filter, WriteOptions};

/// What an export job ends with: what it wrote, or why it did not.
type Outcome = Result<String, String>;

/// A running or finished export.
pub struct Run {
    /// What it writes.
    pub what: String,
    /// The worker, while it runs (messages or rows done and to do as its progress).
    job: Option<Job<Outcome>>,
    /// How it ended.
    pub result: Option<Outcome>,
}

impl Run {
    /// (done, total) messages or rows; total 0 when unknown.
    pub fn progress(&self) -> (u64, u64) {
        self.job.as_ref().map_or((0, 0), |j| j.progress())
    }

    /// Takes how the worker ended, once it has (never blocks).
    fn poll(&mut self) {
        let Some(j) = &mut self.job else { return };
        if let Some(r) = j.take() {
            self.result = Some(r);
            self.job = None;
        } else if j.ended() {
            self.result = Some(Err(format!(
                "{}: the worker stopped unexpectedly",
                self.what
            )));
            self.job = None;
        }
    }
}

/// The export window's state.
pub struct ExportState {
    /// Window open.
    pub open: bool,
    /// Output path (a file, or a directory for rosbag2).
    pub bag_out: String,
    /// Output format.
    pub format: OutputFormat,
    /// rosbag2: zstd per file or per message.
    pub r2_compression: Rosbag2Compression,
    /// rosbag2: a new storage file every this many MiB (0: no split by size).
    pub split_mib: u32,
    /// rosbag2: a new storage file every this many seconds of messages (0: no split by time).
    pub split_s: f64,
    /// ROS 1 messages re-encoded as ROS 2 (CDR).
    pub to_ros2: bool,
    /// ROS 2 (CDR) messages re-encoded as ROS 1.
    pub to_ros1: bool,
    /// Compression of the new bag.
    pub compression: Compression,
    /// Chunk size (KiB).
    pub chunk_kib: u32,
    /// Only the selected range (else the whole bag).
    pub only_range: bool,
    /// Only the topics shown on the timeline (else all).
    pub only_visible: bool,
    /// CSV output path.
    pub csv_out: String,
    /// CSV: one file per topic instead of one aligned file.
    pub csv_per_topic: bool,
    /// CSV time column.
    pub csv_time: TimeColumn,
    /// The current or last job.
    pub job: Option<Run>,
}

impl ExportState {
    /// Defaults beside `bag`: a ROS 1 bag from a ROS 1 bag, else MCAP (which holds any
    /// encoding).
    pub fn new(bag: &std::path::Path, ros1: bool) -> ExportState {
        let stem = bag
            .file_stem()
            .map_or_else(|| "bag".into(), |s| s.to_string_lossy().into_owned());
        let dir = bag.parent().map(PathBuf::from).unwrap_or_default();
        let format = if ros1 {
            OutputFormat::Ros1Bag
        } else {
            OutputFormat::Mcap
        };
        let ext = match format {
            OutputFormat::Ros1Bag => ".bag",
            _ => ".mcap",
        };
        ExportState {
            open: false,
            bag_out: dir
                .join(format!("{stem}-export{ext}"))
                .display()
                .to_string(),
            format,
            r2_compression: Rosbag2Compression::None,
            split_mib: 0,
            split_s: 0.0,
            to_ros2: false,
            to_ros1: false,
            compression: if ros1 {
                Compression::Lz4
            } else {
                Compression::Zstd
            },
            chunk_kib: 768,
            only_range: true,
            only_visible: true,
            csv_out: dir.join(format!("{stem}-series.csv")).display().to_string(),
            csv_per_topic: false,
            csv_time: TimeColumn::SinceStart,
            job: None,
        }
    }

    /// Whether a job is running.
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| j.result.is_none())
    }
}

fn spawn(
    what: String,
    ctx: &egui::Context,
    work: impl FnOnce(&Handle<Outcome>) -> Outcome + Send + 'static,
) -> Run {
    match Job::spawn("export", 1, ctx, move |h| {
        h.send(work(h));
    }) {
        Ok(j) => Run {
            what,
            job: Some(j),
            result: None,
        },
        Err(e) => Run {
            what,
            job: None,
            result: Some(Err(format!("cannot start the export: {e}"))),
        },
    }
}

/// Starts exporting the bag as the window is set.
pub fn start_bag_export(d: &mut Doc, ctx: &egui::Context) {
    let st = &d.export;
    let out = PathBuf::from(st.bag_out.trim());
    let connections = st.only_visible.then(|| {
        let s = d.rec.bag.summary();
        let mut v: Vec<usize> = (0..s.topics.len())
            .filter(|&t| d.nav.visible[t])
            .flat_map(|t| s.topics[t].connections.clone())
            .collect();
        v.sort_unstable();
        v
    });
    let (start_ns, end_ns) = match (st.only_range, d.nav.selection) {
        (true, Some((x, y))) => (Some(x), Some(y)),
        _ => (None, None),
    };
    let opts = ExportOptions {
        filter: Filter {
            connections,
            start_ns,
            end_ns,
        },
        write: WriteOptions {
            compression: st.compression,
            chunk_size: st.chunk_kib.max(1) as usize * 1024,
        },
        format: Some(st.format),
        rosbag2_compression: st.r2_compression,
        split_bytes: (st.format.is_rosbag2() && st.split_mib > 0)
            .then(|| u64::from(st.split_mib) << 20),
        split_ns: (st.format.is_rosbag2() && st.split_s > 0.0).then_some((st.split_s * 1e9) as u64),
        to_ros2: st.to_ros2 && !matches!(st.format, OutputFormat::Ros1Bag | OutputFormat::Parquet),
        // As the command line does by default: types without a ROS 2 definition translated.
        strict_types: false,
        to_ros1: st.to_ros1
            && matches!(st.format, OutputFormat::Ros1Bag | OutputFormat::Mcap)
            && !(st.to_ros2 && st.format == OutputFormat::Mcap),
        migrate: None,
        // The bookmarks shown, with what the recording held of their ranges and colours.
        bookmarks: Some(crate::bookmarks_io::of_doc(d)),
    };
    let bag = d.rec.bag.clone();
    let what = format!("export to {}", out.display());
    d.export.job = Some(spawn(what, ctx, move |h| {
        let r = export(&bag, &out, &opts, h.cancel_flag(), &mut |p| {
            h.progress(p.messages, p.total)
        });
        match r {
            Ok(r) => {
                let mut m = format!(
                    "Wrote {} messages on {} connections to {} ({})",
                    r.messages,
                    r.connections,
                    r.path.display(),
                    timefmt::bytes(r.file_size)
                );
                if !r.unconverted.is_empty() {
                    m.push_str(&format!(" — {}", r.unconverted.join("; ")));
                }
                if !r.skipped.is_empty() {
                    m.push_str(&format!(" — left out: {}", r.skipped.join("; ")));
                }
                for n in &r.notes {
                    m.push_str(&format!(" — {n}"));
                }
                Ok(m)
            }
            Err(bagscope_reader::Error::Cancelled) => {
                Err("export cancelled: nothing was written".into())
            }
            Err(e) => Err(e.to_string()),
        }
    }));
}

/// Starts writing the plotted series as CSV.
pub fn start_csv_export(d: &mut Doc, ctx: &egui::Context) {
    let paths: Vec<Column> = d
        .plots
        .series
        .iter()
        .filter_map(|s| Column::parse(&s.path).ok())
        .filter(|c| !c.expr.paths().is_empty())
        .collect();
    if paths.is_empty() {
        d.export.job = Some(Run {
            what: "CSV".into(),
            job: None,
            result: Some(Err("no series is plotted: add one in the plot panel".into())),
        });
        return;
    }
    let (start_ns, end_ns) = match (d.export.only_range, d.nav.selection) {
        (true, Some((x, y))) => (Some(x), Some(y)),
        _ => (None, None),
    };
    let out = PathBuf::from(d.export.csv_out.trim());
    let per_topic = d.export.csv_per_topic;
    let time = d.export.csv_time;
    let bag = d.rec.bag.clone();
    let what = format!("CSV to {}", out.display());
    d.export.job = Some(spawn(what, ctx, move |h| {
        let cancel = h.cancel_flag();
        // Groups: one file, or one per topic.
        let mut groups: Vec<(PathBuf, Vec<Column>)> = Vec::new();
        if per_topic {
            let stem = out
                .file_stem()
                .map_or_else(|| "series".into(), |s| s.to_string_lossy().into_owned());
            let dir = out.parent().map(PathBuf::from).unwrap_or_default();
            // (A formula goes with its first topic.)
            let topic = |c: &Column| {
                c.expr
                    .topics()
                    .first()
                    .map_or(String::new(), |t| t.to_string())
            };
            for p in &paths {
                let name = format!("{stem}{}.csv", topic(p).replace('/', "_"));
                match groups.iter_mut().find(|g| topic(&g.1[0]) == topic(p)) {
                    Some(g) => g.1.push(p.clone()),
                    None => groups.push((dir.join(name), vec![p.clone()])),
                }
            }
        } else {
            groups.push((out.clone(), paths.clone()));
        }
        let mut notes = Vec::new();
        let mut written = Vec::new();
        for (file, ps) in groups {
            if std::fs::canonicalize(&file).ok() == std::fs::canonicalize(&bag.summary().path).ok()
            {
                return Err(format!("{} is the bag being read", file.display()));
            }
            let mut f = AtomicFile::create(&file).map_err(|e| e.to_string())?;
            let rows = write_csv_columns(
                &bag,
                &ps,
                &bagscope_reader::series::Env::default(),
                bagscope_ops::tables::csv::CsvOptions {
                    start_ns,
                    end_ns,
                    time,
                    header_stamps: false,
                },
                cancel,
                &mut f,
                &mut |w| notes.push(w),
            )
            .map_err(|e| match e {
                bagscope_reader::Error::Cancelled => {
                    "CSV export cancelled: nothing was written".into()
                }
                e => e.to_string(),
            })?;
            f.commit().map_err(|e| e.to_string())?;
            written.push(format!("{} ({rows} rows)", file.display()));
        }
        let mut msg = format!("Wrote {}", written.join(", "));
        if !notes.is_empty() {
            msg.push_str(&format!(" — {}", notes.join("; ")));
        }
        Ok(msg)
    }));
}

/// The export window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    if let Some(j) = &mut d.export.job {
        j.poll();
    }
    let mut open = d.export.open;
    let visible = d.nav.visible.iter().filter(|v| **v).count();
    let ntopics = d.nav.visible.len();
    let sel = d.nav.selection;
    let running = d.export.running();
    // The conversions are offered only for what the recording holds.
    let encodings = |e: &str| {
        d.rec
            .bag
            .summary()
            .connections
            .iter()
            .any(|c| c.encoding == e)
    };
    let holds = (encodings("ros1"), encodings("cdr"));
    egui::Window::new("Export")
        .open(&mut open)
        .default_width(560.0)
        .show(ctx, |ui| {
            let st = &mut d.export;
            ui.strong("What");
            ui.checkbox(
                &mut st.only_range,
                match sel {
                    Some((x, y)) => {
                        format!("only the selected range ({})", timefmt::duration(y - x))
                    }
                    None => "only the selected range (none selected: the whole bag)".into(),
                },
            );
            ui.checkbox(
                &mut st.only_visible,
                format!("only the topics shown on the timeline ({visible} of {ntopics})"),
            );
            ui.separator();
            recording_section(ui, st, holds, running, cmds);
            ui.separator();
            csv_section(ui, st, running, cmds);
            job_line(ui, st);
        });
    d.export.open = open;
    if d.export.running() {
        ctx.request_repaint_after(std::time::Duration::from_millis(100));
    }
}

/// To a new recording: format, where, compression or splitting, the conversions the
/// recording's encodings allow (`holds`: ROS 1, CDR), the button.
fn recording_section(
    ui: &mut egui::Ui,
    st: &mut ExportState,
    (has_ros1, has_cdr): (bool, bool),
    running: bool,
    cmds: &mut Vec<Cmd>,
) {
    ui.strong(if st.format == OutputFormat::Parquet {
        "To decoded Parquet (a file per topic: time_ns and the message as typed columns)"
    } else {
        "To a new recording (messages copied byte for byte, fully indexed)"
    });
    ui.horizontal(|ui| {
        ui.label("format");
        let before = st.format;
        for (f, label) in [
            (OutputFormat::Ros1Bag, "ROS 1 bag"),
            (OutputFormat::Mcap, "MCAP"),
            (OutputFormat::Rosbag2Sqlite3, "rosbag2 (SQLite)"),
            (OutputFormat::Rosbag2Mcap, "rosbag2 (MCAP)"),
            (OutputFormat::Parquet, "Parquet (decoded)"),
        ] {
            ui.selectable_value(&mut st.format, f, label);
        }
        if st.format != before {
            // Keep the name, change what its ending says.
            let p = PathBuf::from(st.bag_out.trim());
            let stem = p.with_extension("");
            st.bag_out = match st.format {
                OutputFormat::Ros1Bag => stem.with_extension("bag"),
                OutputFormat::Mcap => stem.with_extension("mcap"),
                _ => stem,
            }
            .display()
            .to_string();
            st.compression = match (st.format, st.compression) {
                (OutputFormat::Ros1Bag, Compression::Zstd) => Compression::Lz4,
                (OutputFormat::Mcap, Compression::Bz2) => Compression::Zstd,
                (_, c) => c,
            };
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label(
            if matches!(
                st.format,
                OutputFormat::Rosbag2Sqlite3 | OutputFormat::Rosbag2Mcap | OutputFormat::Parquet
            ) {
                "folder"
            } else {
                "file"
            },
        );
        ui.add(egui::TextEdit::singleline(&mut st.bag_out).desired_width(420.0))
            .labelled_by(label.id);
    });
    ui.horizontal(|ui| {
        ui.label("compression");
        match st.format {
            OutputFormat::Ros1Bag | OutputFormat::Mcap => {
                let third = if st.format == OutputFormat::Ros1Bag {
                    Compression::Bz2
                } else {
                    Compression::Zstd
                };
                for c in [Compression::None, Compression::Lz4, third] {
                    ui.selectable_value(&mut st.compression, c, c.name());
                }
                ui.label("chunk");
                ui.add(
                    egui::DragValue::new(&mut st.chunk_kib)
                        .range(1..=65536)
                        .suffix(" KiB"),
                );
            }
            OutputFormat::Parquet => {
                ui.label("zstd; one file per topic, the messages as typed, nested columns");
            }
            _ => {
                for (c, label) in [
                    (Rosbag2Compression::None, "none"),
                    (Rosbag2Compression::File, "zstd per file"),
                    (Rosbag2Compression::Message, "zstd per message"),
                ] {
                    ui.selectable_value(&mut st.r2_compression, c, label);
                }
                ui.label("split every");
                ui.add(
                    egui::DragValue::new(&mut st.split_mib)
                        .range(0..=1_048_576)
                        .custom_formatter(|n, _| off_or(n, "MiB"))
                        .custom_parser(parse_off_or),
                )
                .on_hover_text("A new storage file every this many MiB (0: off)");
                ui.label("or");
                ui.add(
                    egui::DragValue::new(&mut st.split_s)
                        .range(0.0..=1e7)
                        .speed(1.0)
                        .custom_formatter(|n, _| off_or(n, "s"))
                        .custom_parser(parse_off_or),
                )
                .on_hover_text(
                    "A new storage file every this many seconds of messages, as rosbag2's max bag duration (0: off)",
                );
            }
        }
    });
    if has_ros1
        && !matches!(st.format, OutputFormat::Ros1Bag | OutputFormat::Parquet)
        && ui
            .checkbox(
                &mut st.to_ros2,
                "ROS 1 messages to ROS 2 (CDR, ROS 2 types; types without a ROS 2 counterpart are left out)",
            )
            .changed()
        && st.to_ros2
    {
        st.to_ros1 = false;
    }
    if has_cdr
        && matches!(st.format, OutputFormat::Ros1Bag | OutputFormat::Mcap)
        && ui
            .checkbox(
                &mut st.to_ros1,
                "ROS 2 messages to ROS 1 (ROS 1 serialization and types, Header.seq 0; types without a ROS 1 counterpart are left out)",
            )
            .changed()
        && st.to_ros1
    {
        st.to_ros2 = false;
    }
    if ui
        .add_enabled(!running, egui::Button::new("Export recording"))
        .clicked()
    {
        cmds.push(Cmd::ExportBag);
    }
}

/// The plotted series to CSV: file, time column, one file or one per topic, the button.
fn csv_section(ui: &mut egui::Ui, st: &mut ExportState, running: bool, cmds: &mut Vec<Cmd>) {
    ui.strong("The plotted series to CSV");
    ui.horizontal(|ui| {
        let label = ui.label("file");
        ui.add(egui::TextEdit::singleline(&mut st.csv_out).desired_width(420.0))
            .labelled_by(label.id);
    });
    ui.horizontal(|ui| {
        ui.label("time column");
        ui.selectable_value(&mut st.csv_time, TimeColumn::SinceStart, "s since start");
        ui.selectable_value(&mut st.csv_time, TimeColumn::EpochSeconds, "epoch s");
        ui.selectable_value(&mut st.csv_time, TimeColumn::EpochNs, "epoch ns");
    });
    ui.horizontal(|ui| {
        ui.radio_value(
            &mut st.csv_per_topic,
            false,
            "one file, rows at the union of times",
        );
        ui.radio_value(&mut st.csv_per_topic, true, "one file per topic");
    });
    if ui
        .add_enabled(!running, egui::Button::new("Export CSV"))
        .clicked()
    {
        cmds.push(Cmd::ExportCsv);
    }
}

/// The running job's progress and Cancel, or how the last one ended.
fn job_line(ui: &mut egui::Ui, st: &ExportState) {
    if let Some(j) = &st.job {
        ui.separator();
        match &j.result {
            None => {
                ui.horizontal(|ui| {
                    let (done, total) = j.progress();
                    let f = if total > 0 {
                        done as f32 / total as f32
                    } else {
                        0.0
                    };
                    ui.add(
                        egui::ProgressBar::new(f)
                            .desired_width(300.0)
                            .text(format!("{}: {done} of {total}", j.what)),
                    );
                    if ui.button("Cancel").clicked() {
                        if let Some(j) = &j.job {
                            j.cancel();
                        }
                    }
                });
            }
            Some(Ok(m)) => {
                ui.label(m);
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        }
    }
}

/// A split setting as shown: "off" for 0, else the value and its unit.
fn off_or(n: f64, unit: &str) -> String {
    if n == 0.0 {
        "off".into()
    } else {
        format!("{n} {unit}")
    }
}

/// A split setting as typed: "off", or a number with or without its unit.
fn parse_off_or(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("off") || t.is_empty() {
        return Some(0.0);
    }
    t.trim_end_matches(|c: char| c.is_alphabetic() || c.is_whitespace())
        .parse()
        .ok()
}
