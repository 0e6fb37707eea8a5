//! A topic's timing in its details: mean rate and median period, the gaps longer than N
//! median periods (a click jumps there), and a plot of `header.stamp` minus the receive time,
//! read on a worker.

use std::sync::Arc;

use egui_plot::PlotPoint;

use crate::job::Job;
use crate::{Cmd, Doc};
use bagscope_ops::reports::timing::Gap;
use bagscope_ops::timefmt;

/// What the gaps are worked out for: topic, factor bits and tables.
type GapKey = (usize, u64, usize);

/// The median period and the gaps, longest first.
type GapResult = (Option<u64>, Arc<Vec<Gap>>);

/// The gaps of one topic: the last worked out and the one being worked out on a worker (the
/// windows of millions of times take milliseconds, too long for a frame while the factor is
/// dragged).
#[derive(Default)]
struct Gaps {
    /// The last answer and what it is for.
    done: Option<(GapKey, GapResult)>,
    /// The one being worked out.
    job: Option<(GapKey, Job<GapResult>)>,
}

/// A stamp-delay series being read: its name and the worker's answer.
type DelayJob = (String, Job<Result<Vec<PlotPoint>, String>>);

/// The timing section's state.
pub struct TimingState {
    /// Gaps longer than this many median periods are listed.
    pub factor: f64,
    /// The gaps of (topic, factor, tables).
    gaps: Gaps,
    /// A stamp-delay series being read: its name and the worker's answer.
    job: Option<DelayJob>,
    /// Why the last stamp-delay series could not be made.
    pub error: Option<String>,
}

impl Default for TimingState {
    fn default() -> Self {
        TimingState {
            factor: 3.0,
            gaps: Gaps::default(),
            job: None,
            error: None,
        }
    }
}

impl TimingState {
    /// Forgets the gaps and any stamp-delay series being read (the recording grew); the
    /// factor stays.
    pub fn forget_data(&mut self) {
        self.gaps = Gaps::default();
        self.job = None;
    }

    /// Whether the gaps of the latest topic and factor are being worked out.
    pub fn gaps_busy(&self) -> bool {
        self.gaps.job.is_some()
    }
}

/// Takes finished gaps, and hands a finished stamp-delay series to the plots as a command
/// (never blocks).
pub fn poll(d: &mut Doc, cmds: &mut Vec<Cmd>) {
    if let Some((key, job)) = &mut d.timing.gaps.job {
        match job.take() {
            Some(r) => {
                d.timing.gaps.done = Some((*key, r));
                d.timing.gaps.job = None;
            }
            None if job.ended() => d.timing.gaps.job = None,
            None => {}
        }
    }
    let Some((name, job)) = &mut d.timing.job else {
        return;
    };
    match job.take() {
        Some(Ok(points)) => {
            cmds.push(Cmd::AddPoints(name.clone(), points));
            d.timing.job = None;
        }
        Some(Err(e)) => {
            d.timing.error = Some(e);
            d.timing.job = None;
        }
        None if job.ended() => d.timing.job = None,
        None => {}
    }
}

/// Starts reading `topic`'s stamp delays for a plot (ms against seconds from the start).
pub fn plot_stamp_delay(d: &mut Doc, ti: usize, ctx: &egui::Context) {
    let Some(t) = d.rec.bag.summary().topics.get(ti) else {
        return;
    };
    let topic = t.name.clone();
    let start = d.rec.bag.summary().start_ns.unwrap_or(0);
    let bag = d.rec.bag.clone();
    let job = Job::spawn("timing", 1, ctx, move |h| {
        let r = bagscope_ops::reports::timing::stamp_delays(&bag, &topic, h.cancel_flag())
            .map(|v| {
                v.into_iter()
                    .map(|(t, dns)| {
                        PlotPoint::new(t.saturating_sub(start) as f64 / 1e9, dns as f64 / 1e6)
                    })
                    .collect()
            })
            .map_err(|e| e.to_string());
        h.send(r);
    });
    d.timing.error = None;
    match job {
        Ok(j) => {
            d.timing.job = Some((format!("{} stamp − receive time (ms)", t.name), j));
        }
        Err(e) => d.timing.error = Some(e),
    }
}

/// Works out `times`' median period and gaps on a worker; `None` if no thread can start.
fn start_gaps(
    key: GapKey,
    times: crate::timeline::times::Times,
    factor: f64,
    ctx: &egui::Context,
) -> Option<(GapKey, Job<GapResult>)> {
    let job = Job::spawn("gaps", 1, ctx, move |h| {
        let (m, g) = times.gaps(factor);
        h.send((m, Arc::new(g)));
    })
    .ok()?;
    Some((key, job))
}

/// The Timing section of a topic's details.
pub fn section(ui: &mut egui::Ui, d: &mut Doc, ti: usize, cmds: &mut Vec<Cmd>) {
    let s = d.rec.bag.summary();
    let Some(t) = s.topics.get(ti) else { return };
    let count = t.message_count;
    let start = s.start_ns.unwrap_or(0);
    let dur = s.duration_ns() as f64 / 1e9;
    egui::CollapsingHeader::new("Timing")
        .id_salt(("timing", ti))
        .show(ui, |ui| {
            if dur > 0.0 {
                ui.label(format!(
                    "mean rate {:.3} Hz ({} messages / {:.1} s)",
                    count as f64 / dur,
                    count,
                    dur
                ));
            }
            let Some(times) = d
                .rec
                .indexed
                .as_ref()
                .and_then(|i| i.topic_times.get(ti).cloned())
            else {
                ui.weak("the gaps and the median period need the message tables");
                return;
            };
            let tables = d
                .rec
                .indexed
                .as_ref()
                .map_or(0, |i| Arc::as_ptr(&i.tables) as usize);
            let key = (ti, d.timing.factor.to_bits(), tables);
            // Worked out on a worker once per topic and factor, one at a time: while the factor
            // is dragged the last answer stays up and the newest factor is worked out next.
            let g = &mut d.timing.gaps;
            if g.job.is_none() && g.done.as_ref().is_none_or(|(k, _)| *k != key) {
                g.job = start_gaps(key, times, d.timing.factor, ui.ctx());
            }
            let shown = g.done.as_ref().filter(|(k, _)| k.0 == ti && k.2 == tables);
            let Some((_, (median, gaps))) = shown else {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("working out the gaps…");
                });
                return;
            };
            let (median, gaps) = (*median, Arc::clone(gaps));
            let Some(m) = median else {
                ui.weak("fewer than two distinct times");
                return;
            };
            ui.label(format!(
                "median period {} ({:.3} Hz)",
                timefmt::period(m),
                1e9 / m as f64
            ));
            ui.horizontal(|ui| {
                ui.label("gaps longer than");
                ui.add(
                    egui::DragValue::new(&mut d.timing.factor)
                        .range(1.5..=1000.0)
                        .speed(0.1)
                        .suffix("×"),
                );
                ui.label("the median period");
            });
            ui.weak(format!("{} gap(s), longest first", gaps.len()));
            egui::ScrollArea::vertical()
                .id_salt(("gaps", ti))
                .max_height(110.0)
                .show(ui, |ui| {
                    for g in gaps.iter().take(200) {
                        let at = g.start_ns.saturating_sub(start) as f64 / 1e9;
                        if ui
                            .link(format!("+{at:.3} s: {} silent", timefmt::period(g.len_ns)))
                            .on_hover_text("Move the playhead to the start of the gap")
                            .clicked()
                        {
                            cmds.push(Cmd::SetPlayhead(g.start_ns));
                        }
                    }
                });
            if d.timing.job.is_some() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("reading the stamps…");
                });
            } else if ui
                .button("Plot stamp − receive time")
                .on_hover_text(
                    "header.stamp (or stamp) minus the time each message was recorded, in ms",
                )
                .clicked()
            {
                cmds.push(Cmd::PlotStampDelay(ti));
            }
            if let Some(e) = &d.timing.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        });
}
