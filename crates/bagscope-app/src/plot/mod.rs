//! Plots of numeric fields: series extracted in the background over the whole bag (filling in
//! as chunks arrive), decimated per pixel column (min and max) through a min/max pyramid so
//! millions of points cost a few thousand per frame, drawn with egui_plot on the timeline's
//! time axis (the playhead, the selected range; a click moves the playhead; zoom is shared
//! unless unlinked).

use egui::Color32;
use egui_plot::{GridInput, GridMark, Line, Plot, PlotPoint, PlotPoints, Span, VLine};

mod expr;
mod pyramid;
mod script;
mod workers;
use workers::job_for;
pub use workers::refresh;
mod xy;

use pyramid::{decimate, Pyramid};

use super::job::Job;
use super::{Cmd, Doc};
use bagscope_reader::definition::msg::{ArrayKind, FieldType, Primitive};

/// What a series worker sends.
enum Part {
    Points(Vec<PlotPoint>),
    /// Every point, sorted, with its pyramid built on the worker (an expression's series comes
    /// whole: nothing is left for the UI thread to sort or build).
    Whole(Vec<PlotPoint>, Pyramid),
    Done(Result<(u64, Vec<String>), String>),
}

/// The x range, width in pixels and point count a decimation was made for.
type DecimationKey = (f64, f64, usize, usize);

/// One plotted series.
pub struct Series {
    /// Its field path (`/imu.linear_acceleration.x`).
    pub path: String,
    /// Its name in the legend.
    pub name: String,
    /// Its colour.
    pub color: Color32,
    /// Which plot it is drawn in.
    pub plot: usize,
    /// At each message's `header.stamp` rather than its receive time.
    pub header_time: bool,
    /// Samples: x = seconds since the bag's start, y = value; sorted once complete.
    pub points: Vec<PlotPoint>,
    /// Complete.
    pub done: bool,
    /// Why it failed, or warnings.
    pub note: Option<String>,
    /// The worker extracting it, until done (dropping it cancels the work).
    job: Option<Job<Part>>,
    /// Points of a newer state of the recording being read (they replace `points` when
    /// complete).
    incoming: Option<Vec<PlotPoint>>,
    /// Made from points at hand (a stamp delay, a track), not read from a field: not read
    /// again when the recording grows.
    derived: bool,
    pyramid: Option<Pyramid>,
    /// The pyramid a worker built, until its reading is done.
    built: Option<Pyramid>,
    /// Decimated points for the last view.
    cache: Option<(DecimationKey, Vec<PlotPoint>)>,
}

/// The plot panel's state.
pub struct PlotState {
    /// Series, in the order added.
    pub series: Vec<Series>,
    /// Number of plots.
    pub plots: usize,
    /// The plots follow the timeline's zoom.
    pub linked: bool,
    /// XY plots (`Y vs X`).
    pub xy: Vec<xy::XySeries>,
    /// Paths plotted at their messages' header stamps when added (from a layout).
    pub header_paths: std::collections::HashSet<String>,
    /// Variables for `$name` in expressions added after: `i=2, name='motor'`.
    pub vars: String,
    /// Formulas interpolate between samples (else each series holds its last value).
    pub linear: bool,
    /// The path being typed.
    pub input: String,
    /// Why the last expression added could not be plotted (with a caret under the place).
    pub error: Option<String>,
    /// The pointer was over the completions last frame (they stay while it is: a click there
    /// takes the focus from the box).
    over_completions: bool,
    /// Numeric field paths of every topic, for completion.
    completions: Option<Vec<String>>,
    /// The x range each plot showed last frame (unlinked plots keep their own).
    last_x: std::collections::HashMap<usize, (f64, f64)>,
    /// Where each plot was drawn last frame.
    pub rects: Vec<egui::Rect>,
    /// Series scripts (a layout's custom series): a series named after one is what it makes.
    pub scripts: Vec<bagscope_ops::script::SeriesScript>,
}

impl PlotState {
    /// How formulas align their series: linear, or each holding its last value.
    fn interp(&self) -> bagscope_reader::expr::Interp {
        if self.linear {
            bagscope_reader::expr::Interp::Linear
        } else {
            bagscope_reader::expr::Interp::Hold
        }
    }

    /// Each series' name and expression (what a formula's `$name` refers to).
    fn names(&self) -> Vec<(String, String)> {
        self.series
            .iter()
            .map(|s| (s.name.clone(), s.path.clone()))
            .collect()
    }
}

impl PlotState {
    /// An empty panel that knows `scripts`.
    pub fn with_scripts(scripts: Vec<bagscope_ops::script::SeriesScript>) -> PlotState {
        PlotState {
            scripts,
            ..Default::default()
        }
    }
}

impl Default for PlotState {
    fn default() -> Self {
        PlotState {
            series: Vec::new(),
            plots: 1,
            linked: true,
            xy: Vec::new(),
            header_paths: Default::default(),
            vars: String::new(),
            linear: false,
            input: String::new(),
            error: None,
            over_completions: false,
            completions: None,
            last_x: Default::default(),
            rects: Vec::new(),
            scripts: Vec::new(),
        }
    }
}

const PALETTE: [Color32; 8] = [
    Color32::from_rgb(99, 179, 237),
    Color32::from_rgb(246, 173, 85),
    Color32::from_rgb(104, 211, 145),
    Color32::from_rgb(252, 129, 129),
    Color32::from_rgb(183, 148, 244),
    Color32::from_rgb(246, 224, 94),
    Color32::from_rgb(79, 209, 197),
    Color32::from_rgb(237, 100, 166),
];

/// Starts extracting the series of `path` (a field path, or any expression) in the
/// background.
pub fn add_series(d: &mut Doc, path: &str, ctx: &egui::Context) -> Result<(), String> {
    if xy::split(path).is_some() {
        xy::add(d, path, ctx)?;
        d.plots.error = None;
        return Ok(());
    }
    let header_time = d.plots.header_paths.contains(path);
    let job = job_for(d, path, header_time, ctx)?;
    let n = d.plots.series.len();
    d.plots.series.push(Series {
        name: path.to_string(),
        path: path.to_string(),
        color: PALETTE[n % PALETTE.len()],
        plot: d.plots.plots.saturating_sub(1),
        header_time,
        points: Vec::new(),
        done: false,
        note: None,
        job: Some(job),
        incoming: None,
        derived: false,
        pyramid: None,
        built: None,
        cache: None,
    });
    d.plots.error = None;
    Ok(())
}

/// Adds a complete series from points already at hand (x: seconds since the bag's start),
/// sorting them and building its pyramid: for derived series and for benchmarks.
pub fn add_points(d: &mut Doc, name: &str, mut points: Vec<PlotPoint>) {
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    let n = d.plots.series.len();
    let mut s = Series::complete(name, points);
    s.color = PALETTE[n % PALETTE.len()];
    s.plot = d.plots.plots.saturating_sub(1);
    d.plots.series.push(s);
}

impl Series {
    /// A complete series of sorted `points`, in the first plot and colour, with its pyramid.
    fn complete(name: &str, points: Vec<PlotPoint>) -> Series {
        Series {
            name: name.to_string(),
            path: name.to_string(),
            color: PALETTE[0],
            plot: 0,
            header_time: false,
            pyramid: Some(Pyramid::build(&points)),
            built: None,
            points,
            done: true,
            note: None,
            job: None,
            incoming: None,
            derived: true,
            cache: None,
        }
    }
}

/// Takes what the series workers have sent; bounded work per frame.
pub fn poll(d: &mut Doc) {
    for s in &mut d.plots.series {
        let Some(job) = &mut s.job else { continue };
        let mut got = false;
        for _ in 0..256 {
            match job.take() {
                Some(Part::Whole(v, pyr)) => {
                    match &mut s.incoming {
                        Some(next) => *next = v,
                        None => s.points = v,
                    }
                    s.built = Some(pyr);
                    got = true;
                }
                Some(Part::Points(v)) => match &mut s.incoming {
                    Some(next) => next.extend_from_slice(&v),
                    None => {
                        s.points.extend_from_slice(&v);
                        got = true;
                    }
                },
                Some(Part::Done(r)) => {
                    // A newer reading replaces the points only when it completed: one that
                    // failed leaves those shown.
                    let next = s.incoming.take();
                    match r {
                        Ok((missing, problems)) => {
                            if let Some(next) = next {
                                s.points = next;
                            }
                            let mut notes = problems;
                            if missing > 0 {
                                notes.push(format!("absent from {missing} messages"));
                            }
                            s.note = (!notes.is_empty()).then(|| notes.join("; "));
                        }
                        Err(e) => s.note = Some(e),
                    }
                    match s.built.take() {
                        // (The points it was built from are those kept: a reading that
                        // failed keeps the points shown and their pyramid.)
                        Some(pyr) if s.points.len() == pyr.points => s.pyramid = Some(pyr),
                        _ => {
                            s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
                            s.pyramid = Some(Pyramid::build(&s.points));
                        }
                    }
                    s.done = true;
                    s.job = None;
                    s.cache = None;
                    break;
                }
                None if job.ended() => {
                    s.incoming = None;
                    s.note = Some("the worker stopped unexpectedly".into());
                    s.done = true;
                    s.job = None;
                    break;
                }
                None => break,
            }
        }
        if got {
            s.cache = None;
        }
    }
}

fn completions(d: &Doc) -> Vec<String> {
    let s = d.rec.bag.summary();
    let mut out = Vec::new();
    for t in &s.topics {
        let Some(&ci) = t.connections.first() else {
            continue;
        };
        if let Ok((p, _)) = d.rec.bag.plan(ci) {
            // Numbers only, and no byte blobs.
            let keep = |f: &bagscope_reader::definition::msg::Field| match f.ty {
                FieldType::Primitive(Primitive::U8) => f.array == ArrayKind::Scalar,
                FieldType::Primitive(p) => p.is_numeric(),
                FieldType::Message(_) => false,
            };
            let room = 4000usize.saturating_sub(out.len());
            out.extend(bagscope_reader::encoding::leaf_paths(
                &p.def,
                &bagscope_reader::encoding::path_topic(&t.name),
                0,
                (6, room),
                &keep,
            ));
        }
    }
    expr::with_virtual_fields(&mut out);
    out
}

/// The plot panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    poll(d);
    input_row(ui, d, cmds);
    xy::poll(d, ui.ctx());
    if d.plots.series.is_empty() && d.plots.xy.is_empty() {
        ui.weak(
            "No series yet: type a field path or an expression above (`Y vs X` for an XY plot), \
             or click a numeric value in the inspector.",
        );
        return;
    }
    series_list(ui, d);
    let (a, _) = d.rec.range();
    let view = (d.nav.view.0 / 1e9, d.nav.view.1 / 1e9);
    let playhead = (d.nav.playhead - a) as f64 / 1e9;
    let sel = d
        .nav
        .selection
        .map(|(x, y)| ((x - a) as f64 / 1e9, (y - a) as f64 / 1e9));
    // The height shared by the time plots and the XY plots (each of those under a row of its
    // own).
    let time_plots = if d.plots.series.is_empty() {
        0
    } else {
        d.plots.plots
    };
    let n = (time_plots + d.plots.xy.len()).max(1) as f32;
    let rows = 32.0 * d.plots.xy.len() as f32;
    let h = ((ui.available_height() - 4.0 - rows) / n).max(60.0);
    let px = ui.available_width().max(10.0) as usize;
    d.plots.rects.clear();
    // The width the plot frames get (the timeline's strip when linked): ticks are spaced for it.
    let width_px = if d.timeline.strip.is_positive() {
        d.timeline.strip.width()
    } else {
        ui.available_width()
    }
    .max(50.0);
    let frame = Frame {
        view,
        playhead,
        sel,
        h,
        px,
        width_px,
    };
    if !d.plots.series.is_empty() {
        for pi in 0..d.plots.plots {
            one_plot(ui, d, cmds, pi, &frame);
        }
    }
    xy::show(ui, d, h);
    // The panel keeps its size: what the plots leave stays empty (a panel sized by what it
    // holds would shrink a little every frame).
    let rest = ui.available_height();
    if rest > 0.0 {
        ui.add_space(rest);
    }
}

/// The path box (with completions from the definitions), Add, + plot, linked.
fn input_row(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    // (Wrapped: in a narrow panel the variables and toggles go to a second line.)
    ui.horizontal_wrapped(|ui| {
        let label = ui.strong("Plots");
        let r = ui.add(
            egui::TextEdit::singleline(&mut d.plots.input)
                .hint_text("/topic.field.x, .@derivative, a - b … — or click a number in the inspector")
                // Room left for the buttons and the checkbox after it in a narrow panel.
                .desired_width((ui.available_width() - 430.0).clamp(120.0, 320.0)),
        )
        .labelled_by(label.id);
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui.button("Add").clicked() || enter) && !d.plots.input.trim().is_empty() {
            cmds.push(Cmd::AddSeries(d.plots.input.trim().to_string()));
            d.plots.input.clear();
        }
        if ui
            .button("+ plot")
            .on_hover_text("Add a plot below")
            .clicked()
        {
            d.plots.plots += 1;
        }
        ui.checkbox(&mut d.plots.linked, "linked to timeline");
        let label = ui.label("vars");
        ui.add(
            egui::TextEdit::singleline(&mut d.plots.vars)
                .hint_text("i=2, name='motor'")
                .desired_width(90.0),
        )
        .labelled_by(label.id)
        .on_hover_text("Values of $name in expressions added after (indexes, slices, filters, formulas)");
        ui.checkbox(&mut d.plots.linear, "linear")
            .on_hover_text("Formulas interpolate their series between samples (else each holds its last value)");
        // Completion from the definitions: paths, virtual fields, modifiers after `.@`, the
        // fields of the elements inside a filter.
        let over = std::mem::take(&mut d.plots.over_completions);
        if !d.plots.input.is_empty() && (r.has_focus() || over) {
            if d.plots.completions.is_none() {
                d.plots.completions = Some(completions(d));
            }
            let hits = expr::suggest(
                &d.plots.input,
                d.plots.completions.as_deref().unwrap_or_default(),
            );
            if !hits.is_empty() {
                egui::Popup::from_response(&r)
                    .open(true)
                    .close_behavior(egui::PopupCloseBehavior::IgnoreClicks)
                    .show(|ui| {
                    for (label, input, plot_now) in hits {
                        if ui.button(&label).clicked() {
                            if plot_now {
                                cmds.push(Cmd::AddSeries(input));
                                d.plots.input.clear();
                            } else {
                                // Typing goes on after what was completed.
                                let end = egui::text::CCursor::new(input.chars().count());
                                d.plots.input = input;
                                r.request_focus();
                                if let Some(mut st) = egui::TextEdit::load_state(ui.ctx(), r.id) {
                                    st.cursor.set_char_range(Some(egui::text::CCursorRange::one(end)));
                                    st.store(ui.ctx(), r.id);
                                }
                            }
                        }
                    }
                    // (After the buttons: the rect they took.)
                    d.plots.over_completions = ui.ui_contains_pointer();
                });
            }
        }
    });
    if let Some(e) = &d.plots.error {
        ui.label(
            egui::RichText::new(e)
                .monospace()
                .color(ui.visuals().warn_fg_color),
        );
    }
}

/// The series: colour, name, which plot, points so far, notes, Remove.
fn series_list(ui: &mut egui::Ui, d: &mut Doc) {
    // Series list: rename, colour, plot, remove.
    let mut remove = None;
    let mut restart = None;
    let nplots = d.plots.plots;
    for (i, s) in d.plots.series.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            ui.color_edit_button_srgba(&mut s.color);
            ui.add(
                egui::TextEdit::singleline(&mut s.name)
                    .hint_text("series name")
                    .desired_width(220.0),
            );
            let label = ui.label("in");
            egui::ComboBox::from_id_salt(("plot-of", i))
                .width(60.0)
                .selected_text(format!("plot {}", s.plot + 1))
                .show_ui(ui, |ui| {
                    for p in 0..nplots {
                        ui.selectable_value(&mut s.plot, p, format!("plot {}", p + 1));
                    }
                })
                .response
                .labelled_by(label.id);
            if s.done {
                ui.weak(format!("{} points", s.points.len()));
            } else {
                ui.spinner();
                ui.weak(format!("{} points so far", s.points.len()));
            }
            if let Some(n) = &s.note {
                ui.colored_label(ui.visuals().warn_fg_color, n);
            }
            if !s.derived
                && ui
                    .toggle_value(&mut s.header_time, "stamp")
                    .on_hover_text(
                        "Plot at each message's header.stamp instead of its receive time",
                    )
                    .changed()
            {
                restart = Some(i);
            }
            if ui.small_button("Remove").clicked() {
                remove = Some(i);
            }
        });
    }
    if let Some(i) = restart {
        workers::restart(d, i, ui.ctx());
    }
    if let Some(i) = remove {
        d.plots.series.remove(i);
    }
}

/// What every plot of a frame shares: the view and marks in seconds since the start, the
/// height of a plot, the pixel columns decimated for, the width ticks are spaced for.
struct Frame {
    view: (f64, f64),
    playhead: f64,
    sel: Option<(f64, f64)>,
    h: f32,
    px: usize,
    width_px: f32,
}

/// Plot `pi`: its series decimated for the x range shown, the selection and the playhead;
/// linked to the timeline, the wheel zooms and a drag pans the shared time axis; a click moves
/// the playhead; the hover says the nearest sample.
fn one_plot(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>, pi: usize, f: &Frame) {
    let (a, b) = d.rec.range();
    let Frame {
        view,
        playhead,
        sel,
        h,
        px,
        width_px,
    } = *f;
    let linked = d.plots.linked;
    // Decimate each series of this plot for the x range shown (cached per view).
    let mut plot = Plot::new(("plot", pi))
        .height(h)
        .allow_zoom([!linked, true])
        .allow_drag([!linked, true])
        .allow_scroll([!linked, false])
        .allow_double_click_reset(!linked)
        .x_axis_label(if pi + 1 == d.plots.plots {
            "since the bag's start"
        } else {
            ""
        })
        // The timeline's ticks: round times, labelled as on its axis.
        .x_grid_spacer(move |g: GridInput| {
            let (x0, x1) = g.bounds;
            let step = super::style::nice_step((x1 - x0) * 1e9 / f64::from(width_px)) / 1e9;
            let first = (x0 / step).ceil() as i64;
            (first..)
                .map(|k| k as f64 * step)
                .take_while(|&v| v <= x1)
                .take(200)
                .map(|value| GridMark {
                    value,
                    step_size: step,
                })
                .collect()
        })
        .x_axis_formatter(|m, _| super::style::tick_label(m.value * 1e9, m.step_size * 1e9))
        .legend(egui_plot::Legend::default());
    if linked {
        plot = plot.default_x_bounds(view.0, view.1);
        // Line the plot's frame up with the timeline's strip (drawn last frame), so one
        // instant is at one x on both.
        let strip = d.timeline.strip;
        let left = ui.cursor().left();
        if strip.is_positive() && strip.left() - left > 30.0 && strip.right() > left {
            plot = plot
                .y_axis_min_width(strip.left() - left)
                .width(strip.right() - left);
        }
    }
    let prev_bounds = d.plots.last_x.get(&pi).copied().unwrap_or(view);
    let (x0, x1) = if linked { view } else { prev_bounds };
    for s in d.plots.series.iter_mut().filter(|s| s.plot == pi) {
        let key = (x0, x1, px, s.points.len());
        if s.cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let v = decimate(s, x0, x1, px);
            s.cache = Some((key, v));
        }
    }
    let series = &d.plots.series;
    let resp = plot.show(ui, |pu| {
        if linked {
            pu.set_plot_bounds_x(view.0..=view.1);
            pu.set_auto_bounds([false, true]);
        }
        if let Some((x, y)) = sel {
            pu.add(
                Span::new("selection", x..=y)
                    .fill(Color32::from_rgba_unmultiplied(100, 150, 255, 30)),
            );
        }
        for s in series.iter().filter(|s| s.plot == pi) {
            if let Some((_, pts)) = &s.cache {
                pu.line(
                    Line::new(s.name.clone(), PlotPoints::Borrowed(pts))
                        .color(s.color)
                        .width(1.5),
                );
            }
        }
        pu.vline(VLine::new("playhead", playhead).color(Color32::from_rgb(255, 90, 70)));
        (pu.pointer_coordinate(), pu.plot_bounds())
    });
    let (ptr, bounds) = resp.inner;
    d.plots.rects.push(resp.response.rect);
    d.plots
        .last_x
        .insert(pi, (bounds.min()[0], bounds.max()[0]));
    // Linked: wheel zooms and drag pans the shared time axis, as on the timeline.
    if linked && resp.response.hovered() {
        let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta, i.zoom_delta()));
        let mut factor = f64::from(zoom);
        if scroll.y != 0.0 {
            factor *= (f64::from(scroll.y) * 0.003).exp();
        }
        if let (Some(p), true) = (ptr, (factor - 1.0).abs() > 1e-6) {
            let t = p.x * 1e9;
            cmds.push(Cmd::SetView(
                t - (t - d.nav.view.0) / factor,
                t + (d.nav.view.1 - t) / factor,
            ));
        }
    }
    if linked && resp.response.dragged() {
        let dx = f64::from(resp.response.drag_delta().x);
        let ns_per_px =
            (d.nav.view.1 - d.nav.view.0) / f64::from(resp.response.rect.width().max(1.0));
        cmds.push(Cmd::SetView(
            d.nav.view.0 - dx * ns_per_px,
            d.nav.view.1 - dx * ns_per_px,
        ));
    }
    if resp.response.clicked() {
        if let Some(p) = ptr {
            let t = (a as f64 + p.x * 1e9).clamp(a as f64, b as f64) as u64;
            cmds.push(Cmd::SetPlayhead(t));
        }
    }
    // Hover: the nearest sample's exact value and time.
    if let Some(p) = ptr.filter(|_| resp.response.hovered()) {
        let mut best: Option<(f64, &Series, PlotPoint)> = None;
        for s in d.plots.series.iter().filter(|s| s.plot == pi && s.done) {
            let i = s.points.partition_point(|q| q.x < p.x);
            for j in [i.saturating_sub(1), i] {
                if let Some(q) = s.points.get(j) {
                    let dist = (q.x - p.x).abs();
                    if best.as_ref().is_none_or(|b| dist < b.0) {
                        best = Some((dist, s, *q));
                    }
                }
            }
        }
        if let Some((_, s, q)) = best {
            let t = a + (q.x * 1e9).round() as u64;
            resp.response.on_hover_text_at_pointer(format!(
                "{}\n{}\n+{:.6} s · {} UTC",
                s.name,
                q.y,
                q.x,
                bagscope_ops::timefmt::date(t)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: Vec<PlotPoint>, pyramid: bool) -> Series {
        let mut s = Series::complete("s", points);
        if !pyramid {
            s.pyramid = None;
        }
        s
    }

    /// Each column's (min, max) of a decimation.
    fn columns(v: &[PlotPoint]) -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64)> = Vec::new();
        let mut last_x = f64::NAN;
        for p in v {
            match out.last_mut() {
                Some(c) if p.x == last_x => *c = (c.0.min(p.y), c.1.max(p.y)),
                _ => out.push((p.y, p.y)),
            }
            last_x = p.x;
        }
        out
    }

    #[test]
    fn the_pyramid_keeps_every_extreme_of_a_view() {
        // 1,000,003 points, one spike up and one down, a NaN.
        let n = 1_000_003usize;
        let mut pts: Vec<PlotPoint> = (0..n)
            .map(|i| PlotPoint::new(i as f64 * 1e-3, (i as f64 * 0.01).sin()))
            .collect();
        pts[123_457].y = 50.0;
        pts[876_543].y = -40.0;
        pts[500_000].y = f64::NAN;
        let pyr = series(pts.clone(), true);
        let raw = series(pts, false);
        let levels = pyr.pyramid.as_ref().unwrap().levels.len();
        assert_eq!(Pyramid::run(levels - 1), 1 << 20, "down to one run");
        // The whole series over 800 columns: every column has points, the spikes survive.
        let (x0, x1) = (0.0, n as f64 * 1e-3);
        let a = columns(&decimate(&pyr, x0, x1, 800));
        let b = columns(&decimate(&raw, x0, x1, 800));
        assert_eq!(a.len(), 800);
        assert_eq!(b.len(), 800);
        let top = |c: &[(f64, f64)]| c.iter().map(|c| c.1).fold(f64::MIN, f64::max);
        let bottom = |c: &[(f64, f64)]| c.iter().map(|c| c.0).fold(f64::MAX, f64::min);
        assert_eq!((top(&a), bottom(&a)), (50.0, -40.0));
        assert_eq!((top(&b), bottom(&b)), (50.0, -40.0));
        // Runs fall in the column of their middle: at most one column off from the points'.
        let spike = a.iter().position(|c| c.1 == 50.0).unwrap();
        let spike_raw = b.iter().position(|c| c.1 == 50.0).unwrap();
        assert!(spike.abs_diff(spike_raw) <= 1, "{spike} {spike_raw}");
        // Zoomed in to 20,000 points over 800 columns: drawn from the points, equal.
        let (x0, x1) = (100.0, 120.0);
        assert_eq!(decimate(&pyr, x0, x1, 800), decimate(&raw, x0, x1, 800));
    }
}
