//! The TF window: the transform tree at the playhead (each frame's transform from its parent,
//! how old it is, static ones marked), and the pose of one chosen frame in another, as
//! `tf_echo` prints it. The transforms are read once on a worker; the tree at the playhead is
//! a binary search per frame, so it follows scrubbing and playback.

use std::sync::Arc;

use egui_plot::PlotPoint;

use super::job::Job;
use super::{Cmd, Doc};
use bagscope_ops::geom::Pose;
use bagscope_ops::spatial::tf::TfHistory;
use bagscope_ops::timefmt;

/// A plot series: its name and points.
type Named = (String, Vec<PlotPoint>);

/// The TF window's state.
#[derive(Default)]
pub struct TfState {
    /// Shown.
    pub open: bool,
    /// Every transform of the recording, once read.
    pub history: Option<Arc<TfHistory>>,
    /// Why reading failed.
    pub error: Option<String>,
    /// The frame a pose is expressed in, and the frame whose pose it is.
    pub target: String,
    /// See `target`.
    pub source: String,
    /// The worker reading the transforms (dropping it cancels the reading).
    job: Option<Job<Result<TfHistory, String>>>,
    /// A track being worked out for the plots: its series' names and points.
    track: Option<Job<Result<Vec<Named>, String>>>,
    /// Why the last track could not be made.
    track_error: Option<String>,
}

impl TfState {
    /// Whether the transforms are being read.
    pub fn reading(&self) -> bool {
        self.job.is_some()
    }

    /// Whether a track is being worked out for the plots.
    pub fn tracking(&self) -> bool {
        self.track.is_some()
    }
}

/// Most points of a track plotted.
const TRACK_POINTS: usize = 200_000;

/// Starts working out `source`'s x, y and yaw in `target` over the recording, for the plots.
fn start_track(d: &mut Doc, h: &Arc<TfHistory>, ctx: &egui::Context) {
    let (target, source) = (d.tf.target.clone(), d.tf.source.clone());
    let h = Arc::clone(h);
    let start = d.rec.bag.summary().start_ns.unwrap_or(0);
    let job = Job::spawn("tf-track", 1, ctx, move |j| {
        let r = h.track(&target, &source, TRACK_POINTS).map(|v| {
            let at = |t: u64| t.saturating_sub(start) as f64 / 1e9;
            let series = |what: &str, f: &dyn Fn(&Pose) -> f64| {
                (
                    format!("{source} in {target}: {what}"),
                    v.iter()
                        .map(|(t, p)| PlotPoint::new(at(*t), f(p)))
                        .collect(),
                )
            };
            vec![
                series("x (m)", &|p| p.t[0]),
                series("y (m)", &|p| p.t[1]),
                series("yaw (°)", &|p| p.rpy()[2].to_degrees()),
            ]
        });
        j.send(r.map_err(|e| e.to_string()));
    });
    d.tf.track_error = None;
    match job {
        Ok(j) => d.tf.track = Some(j),
        Err(e) => d.tf.track_error = Some(e),
    }
}

/// Starts reading the transforms, once.
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    if d.tf.history.is_some() || d.tf.job.is_some() {
        return;
    }
    read(d, ctx);
}

/// Reads the transforms again from the recording just reloaded (a live recording grew), if
/// they were read: the history shown stays until the new one is in.
pub fn refresh(d: &mut Doc, ctx: &egui::Context) {
    if d.tf.history.is_some() || d.tf.job.is_some() {
        read(d, ctx);
    }
}

/// Starts a worker reading every transform of the recording.
fn read(d: &mut Doc, ctx: &egui::Context) {
    let bag = d.rec.bag.clone();
    let urdf = d.rec.urdf.clone();
    let job = Job::spawn("tf", 1, ctx, move |h| {
        h.send(
            TfHistory::read(&bag, None, urdf.as_deref(), h.cancel_flag())
                .map_err(|e| e.to_string()),
        );
    });
    match job {
        Ok(j) => d.tf.job = Some(j),
        Err(e) => d.tf.error = Some(e),
    }
}

/// Takes the workers' answers (never blocks); a finished track goes to the plots as commands.
pub fn poll(d: &mut Doc, cmds: &mut Vec<Cmd>) {
    if let Some(job) = &mut d.tf.track {
        match job.take() {
            Some(Ok(series)) => {
                d.tf.track = None;
                for (name, points) in series {
                    cmds.push(Cmd::AddPoints(name, points));
                }
            }
            Some(Err(e)) => {
                d.tf.track = None;
                d.tf.track_error = Some(e);
            }
            None if job.ended() => d.tf.track = None,
            None => {}
        }
    }
    let Some(job) = &mut d.tf.job else { return };
    match job.take() {
        Some(Ok(h)) => {
            // A first lookup to show: the deepest frame in the root of its tree, as the tree
            // stands at the end (every frame known by then).
            if d.tf.target.is_empty() {
                let tree = h.tree_at(u64::MAX);
                if let (Some(root), Some(deep)) =
                    (tree.first(), tree.iter().max_by_key(|f| f.depth))
                {
                    d.tf.target = h.frames[root.frame].clone();
                    d.tf.source = h.frames[deep.frame].clone();
                }
            }
            d.tf.history = Some(Arc::new(h));
            d.tf.job = None;
        }
        Some(Err(e)) => {
            d.tf.error = Some(e);
            d.tf.job = None;
        }
        None if job.ended() => d.tf.job = None,
        None => {}
    }
}

fn pose_line(p: &Pose) -> String {
    let r = p.rpy().map(f64::to_degrees);
    format!(
        "xyz [{:.3}, {:.3}, {:.3}]  rpy° [{:.1}, {:.1}, {:.1}]",
        p.t[0], p.t[1], p.t[2], r[0], r[1], r[2]
    )
}

/// A combo box of the frames.
fn frame_choice(ui: &mut egui::Ui, id: &str, frames: &[String], value: &mut String) {
    egui::ComboBox::from_id_salt(id)
        .selected_text(value.as_str())
        .show_ui(ui, |ui| {
            let mut sorted: Vec<&String> = frames.iter().collect();
            sorted.sort();
            for f in sorted {
                ui.selectable_value(value, f.clone(), f);
            }
        });
}

/// The TF window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.tf.open;
    let t = d.nav.playhead;
    let start_ns = d.rec.bag.summary().start_ns.unwrap_or(0);
    let screen = ctx.content_rect();
    egui::Window::new("TF")
        .open(&mut open)
        .default_pos([screen.width() * 0.3, 80.0])
        .default_size([560.0, 380.0])
        .show(ctx, |ui| {
            if let Some(e) = &d.tf.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
                return;
            }
            let Some(h) = d.tf.history.clone() else {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("reading the transforms…");
                });
                return;
            };
            ui.label(format!(
                "Transform tree at +{:.3} s ({} frames, {} transforms{})",
                t.saturating_sub(start_ns) as f64 / 1e9,
                h.frames.len(),
                h.samples.iter().map(Vec::len).sum::<usize>(),
                if h.truncated { ", the first only" } else { "" }
            ));
            if h.bad > 0 {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!("{} message(s) did not decode", h.bad),
                );
            }
            ui.horizontal(|ui| {
                ui.label("pose of");
                frame_choice(ui, "tf-source", &h.frames, &mut d.tf.source);
                ui.label("in");
                frame_choice(ui, "tf-target", &h.frames, &mut d.tf.target);
            });
            ui.horizontal(|ui| {
                match h.lookup(&d.tf.target, &d.tf.source, t) {
                    Ok(p) => ui.monospace(pose_line(&p)),
                    Err(e) => ui.weak(e.to_string()),
                };
            });
            if d.tf.track.is_some() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("working out the track…");
                });
            } else if ui
                .button("Plot x, y, yaw over time")
                .on_hover_text("The pose of the first frame in the second over the whole recording, as three series")
                .clicked()
            {
                start_track(d, &h, ctx);
            }
            if let Some(e) = &d.tf.track_error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            ui.separator();
            let tree = h.tree_at(t);
            if tree.is_empty() {
                ui.weak("no transform recorded yet at the playhead");
            }
            egui::ScrollArea::vertical()
                .id_salt("tf-tree")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    for f in &tree {
                        ui.horizontal(|ui| {
                            ui.add_space(f.depth as f32 * 16.0);
                            let name = &h.frames[f.frame];
                            if ui
                                .selectable_label(d.tf.source == *name, name)
                                .on_hover_text("Show this frame's pose in the chosen frame")
                                .clicked()
                            {
                                d.tf.source = name.clone();
                            }
                            if let Some(s) = f.from_parent {
                                ui.monospace(pose_line(&s.pose));
                                if h.is_static[f.frame] {
                                    ui.weak("static");
                                } else {
                                    let age = t.saturating_sub(s.time_ns);
                                    let r = ui.link(format!("{} ago", timefmt::period(age)));
                                    if r.on_hover_text("Move the playhead to this transform")
                                        .clicked()
                                    {
                                        cmds.push(Cmd::SetPlayhead(s.time_ns));
                                    }
                                }
                            }
                        });
                    }
                });
        });
    if !open {
        cmds.push(Cmd::ShowTf(false));
    }
}
