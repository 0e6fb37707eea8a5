//! The Compare runs window: with several recordings on the timeline, each topic's messages,
//! mean rate, longest gap, first and last time side by side, and chosen numeric fields' min,
//! mean, max and std, each run against the first (`bagscope compare`'s table, worked out on a
//! worker that opens each run on its own); a field's B − A plotted across the runs.

use bagscope_ops::reports::compare::{compare, Align, Comparison, FieldStats, TopicStats};
use bagscope_reader::bag::merge::{namespaces, Part};

use super::job::Job;
use super::{Cmd, Doc};

/// What the topic table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    #[default]
    Messages,
    Rate,
    Gap,
    First,
    Last,
}

impl Measure {
    const ALL: [Measure; 5] = [
        Measure::Messages,
        Measure::Rate,
        Measure::Gap,
        Measure::First,
        Measure::Last,
    ];

    fn name(self) -> &'static str {
        match self {
            Measure::Messages => "messages",
            Measure::Rate => "mean rate (Hz)",
            Measure::Gap => "longest gap (s)",
            Measure::First => "first (s)",
            Measure::Last => "last (s)",
        }
    }

    fn of(self, s: &TopicStats) -> Option<f64> {
        match self {
            Measure::Messages => Some(s.count as f64),
            Measure::Rate => s.rate_hz,
            Measure::Gap => s.longest_gap_s,
            Measure::First => Some(s.first_s),
            Measure::Last => Some(s.last_s),
        }
    }
}

/// The window's state.
#[derive(Default)]
pub struct CompareState {
    pub open: bool,
    /// Numeric fields typed (`/imu.linear_acceleration.x`, separated by commas or spaces).
    pub fields: String,
    /// Align on the first message of this topic (`/…`), or each run's bookmark of this label
    /// (empty: each run's start).
    pub align_topic: String,
    pub measure: Measure,
    /// The comparison being worked out.
    pub job: Option<Job<Result<Comparison, String>>>,
    /// The last one worked out, or why not.
    pub shown: Option<Result<Comparison, String>>,
    /// The parts it was worked out for (worked out again when they change).
    pub of: Vec<Part>,
    /// Their namespaces on the joined timeline (worked out with them: naming a part looks at
    /// the file system, never done per frame).
    pub names: Vec<String>,
}

/// Starts working out the comparison of `d`'s recordings as the window is set.
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    let parts = d.rec.parts.clone();
    // The runs are opened as the recording was (its message search path).
    let opts = d.rec.bag.options().clone();
    let fields: Vec<String> = d
        .compare
        .fields
        .split([',', ' '])
        .filter(|f| !f.trim().is_empty())
        .map(|f| f.trim().to_string())
        .collect();
    let align = match d.compare.align_topic.trim() {
        "" => Align::Start,
        t if t.starts_with('/') => Align::Topic(t.to_string()),
        // Anything else: the label of a bookmark each run keeps.
        label => Align::Bookmark(label.to_string()),
    };
    d.compare.of = parts.clone();
    d.compare.names = namespaces(&parts);
    let r = Job::spawn("compare", 1, ctx, move |h| {
        let run = || -> Result<Comparison, String> {
            let bags = parts
                .iter()
                .map(|p| bagscope_reader::bag::Bag::open_with(&p.path, &opts))
                .collect::<bagscope_reader::Result<Vec<_>>>()
                .map_err(|e| e.to_string())?;
            let names: Vec<String> = parts.iter().map(|p| p.path.display().to_string()).collect();
            let refs: Vec<_> = bags.iter().collect();
            compare(&refs, &names, &[], &fields, align).map_err(|e| e.to_string())
        };
        h.send(run());
    });
    match r {
        Ok(j) => d.compare.job = Some(j),
        Err(e) => d.compare.shown = Some(Err(e)),
    }
}

/// Takes what the worker finished.
pub fn poll(d: &mut Doc) {
    if let Some(j) = &mut d.compare.job {
        if let Some(r) = j.take() {
            d.compare.shown = Some(r);
            d.compare.job = None;
        }
    }
}

/// One statistic of a field, read from its stats.
type Stat = fn(&FieldStats) -> Option<f64>;

/// Run `i`'s letter.
fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

fn cell(ui: &mut egui::Ui, v: Option<f64>, decimals: usize) {
    let text = v.map_or_else(|| "—".to_string(), |v| format!("{v:.decimals$}"));
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        ui.monospace(text);
    });
}

/// A difference, coloured where it is not zero at the shown precision.
fn delta(ui: &mut egui::Ui, a: Option<f64>, b: Option<f64>, decimals: usize) {
    let d = a.zip(b).map(|(a, b)| b - a);
    let text = d.map_or_else(|| "—".to_string(), |d| format!("{d:+.decimals$}"));
    let zero = d.is_none_or(|d| (d * 10f64.powi(decimals as i32)).round() == 0.0);
    let color = if zero {
        ui.visuals().weak_text_color()
    } else {
        ui.visuals().warn_fg_color
    };
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        ui.label(egui::RichText::new(text).monospace().color(color));
    });
}

/// The window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.compare.open;
    let mut go =
        d.compare.shown.is_none() && d.compare.job.is_none() || d.compare.of != d.rec.parts;
    let names = d.compare.names.clone();
    egui::Window::new("Compare runs")
        .open(&mut open)
        .default_width(640.0)
        .default_pos([ctx.content_rect().width() * 0.3, 90.0])
        .show(ctx, |ui| {
            for (i, (p, name)) in d.rec.parts.iter().zip(&names).enumerate() {
                ui.horizontal(|ui| {
                    ui.strong(letter(i));
                    ui.label(format!("= /{name}/"))
                        .on_hover_text(p.path.display().to_string());
                });
            }
            egui::Grid::new("compare-settings")
                .num_columns(2)
                .show(ui, |ui| {
                    ui.label("Align on");
                    ui.add(
                        egui::TextEdit::singleline(&mut d.compare.align_topic)
                            .hint_text("each run's start; a topic's first message (/cmd_vel); a bookmark's label")
                            .desired_width(360.0),
                    );
                    ui.end_row();
                    ui.label("Fields");
                    ui.add(
                        egui::TextEdit::singleline(&mut d.compare.fields)
                            .hint_text(
                                "/imu/data.linear_acceleration.x, /odom.twist.twist.linear.x",
                            )
                            .desired_width(360.0),
                    );
                    ui.end_row();
                });
            ui.horizontal(|ui| {
                go |= ui.button("Compare").clicked();
                if d.compare.job.is_some() {
                    ui.spinner();
                    ui.label("reading the runs…");
                }
            });
            ui.separator();
            match &d.compare.shown {
                None => {}
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                Some(Ok(c)) => table(ui, c, &names, &mut d.compare.measure, &d.rec, cmds),
            }
        });
    d.compare.open = open;
    if go && open {
        start(d, ctx);
    }
}

/// The topics' and fields' tables of `c`.
fn table(
    ui: &mut egui::Ui,
    c: &Comparison,
    names: &[String],
    measure: &mut Measure,
    rec: &super::Recording,
    cmds: &mut Vec<Cmd>,
) {
    let n = c.runs.len();
    ui.horizontal(|ui| {
        ui.label("Topics:");
        egui::ComboBox::new("compare-measure", "")
            .selected_text(measure.name())
            .show_ui(ui, |ui| {
                for m in Measure::ALL {
                    ui.selectable_value(measure, m, m.name());
                }
            });
    });
    let dec = if *measure == Measure::Messages { 0 } else { 3 };
    egui::ScrollArea::vertical()
        .max_height(320.0)
        .id_salt("compare-topics")
        .show(ui, |ui| {
            egui::Grid::new("compare-topics-grid")
                .striped(true)
                .num_columns(1 + 2 * n)
                .show(ui, |ui| {
                    ui.strong("topic");
                    for i in 0..n {
                        ui.strong(letter(i));
                    }
                    for i in 1..n {
                        ui.strong(format!("{} − A", letter(i)));
                    }
                    ui.end_row();
                    for (t, per) in &c.topics {
                        ui.label(t);
                        let v: Vec<Option<f64>> = per
                            .iter()
                            .map(|p| p.as_ref().and_then(|p| measure.of(p)))
                            .collect();
                        for x in &v {
                            cell(ui, *x, dec);
                        }
                        for x in &v[1..] {
                            delta(ui, v[0], *x, dec);
                        }
                        ui.end_row();
                    }
                });
        });
    if c.fields.is_empty() {
        ui.weak("Type numeric fields above to compare their values.");
    } else {
        ui.separator();
        egui::Grid::new("compare-fields-grid")
            .striped(true)
            .num_columns(3 + 2 * n)
            .show(ui, |ui| {
                ui.strong("field");
                ui.strong("");
                for i in 0..n {
                    ui.strong(letter(i));
                }
                for i in 1..n {
                    ui.strong(format!("{} − A", letter(i)));
                }
                ui.end_row();
                for (f, per) in &c.fields {
                    let stats: [(&str, Stat); 5] = [
                        ("values", |s| Some(s.count as f64)),
                        ("min", |s| Some(s.min)),
                        ("mean", |s| Some(s.mean)),
                        ("max", |s| Some(s.max)),
                        ("std", |s| s.std),
                    ];
                    for (k, (name, get)) in stats.into_iter().enumerate() {
                        if k == 0 {
                            ui.horizontal(|ui| {
                                ui.label(f);
                                // B − A over time: the runs' paths on the joined timeline.
                                let path = |i: usize| format!("/{}{f}", names[i]);
                                let topic =
                                    |i: usize| path(i).split('.').next().unwrap_or("").to_string();
                                let there = n == 2
                                    && names.len() == 2
                                    && (0..2).all(|i| rec.bag.summary().topic(&topic(i)).is_some());
                                if there
                                    && ui
                                        .small_button("plot B − A")
                                        .on_hover_text("The difference over time, as a plot")
                                        .clicked()
                                {
                                    cmds.push(Cmd::AddSeries(format!("{} - {}", path(1), path(0))));
                                }
                            });
                        } else {
                            ui.label("");
                        }
                        ui.weak(name);
                        let v: Vec<Option<f64>> =
                            per.iter().map(|p| p.as_ref().and_then(get)).collect();
                        let dec = if k == 0 { 0 } else { 6 };
                        for x in &v {
                            cell(ui, *x, dec);
                        }
                        for x in &v[1..] {
                            delta(ui, v[0], *x, dec);
                        }
                        ui.end_row();
                    }
                }
            });
    }
    for note in &c.notes {
        ui.colored_label(ui.visuals().warn_fg_color, note);
    }
}
