//! The log panel: every `/rosout` message of the recording (not only those before the
//! playhead), read on a worker. Severity, node and text filters; a click moves the playhead;
//! the line at the playhead is highlighted; warnings and worse are marked on the log topics'
//! timeline rows.

use super::job::Job;
use super::style::level_color;
use super::{Cmd, Doc};
use bagscope_ops::reports::log::{Level, LogLine};

/// What the log worker sends.
enum LogEvent {
    Lines(Vec<LogLine>),
    Done(Result<u64, String>),
}

/// The log panel's state.
pub struct LogState {
    /// Shown.
    pub open: bool,
    /// Every line read so far, in time order.
    pub lines: Vec<LogLine>,
    /// Reading finished: `Ok(undecodable count)` or the error.
    pub done: Option<Result<u64, String>>,
    /// Severities shown.
    pub show: [bool; 5],
    /// Node filter (empty: all).
    pub node: String,
    /// Text filter (case-insensitive; empty: all).
    pub text: String,
    /// Scroll to the line at the playhead when it moves.
    pub follow: bool,
    /// Indices into `lines` that pass the filters, and what they were computed for.
    filtered: Vec<u32>,
    filtered_for: Option<(usize, [bool; 5], String, String)>,
    /// Nodes seen, sorted.
    pub nodes: Vec<String>,
    /// Per log topic: (time, level) of its warnings and worse, in time order, for the timeline
    /// marks.
    pub marks: std::collections::BTreeMap<usize, Vec<(u64, Level)>>,
    /// Lines per severity (debug, info, warn, error, fatal), counted as they arrive.
    pub counts: [usize; 5],
    /// The worst severity seen.
    pub worst: Option<Level>,
    last_playhead: u64,
    /// The worker reading the log topics, until done (dropping it cancels the work).
    job: Option<Job<LogEvent>>,
    /// The lines of a newer state of a growing recording being read: they replace these
    /// when complete, so the panel never empties in between.
    next: Option<Box<LogState>>,
}

impl Default for LogState {
    fn default() -> Self {
        LogState {
            open: false,
            lines: Vec::new(),
            done: None,
            show: [true; 5],
            node: String::new(),
            text: String::new(),
            follow: true,
            filtered: Vec::new(),
            filtered_for: None,
            nodes: Vec::new(),
            marks: Default::default(),
            counts: [0; 5],
            worst: None,
            last_playhead: 0,
            job: None,
            next: None,
        }
    }
}

fn level_index(l: Level) -> usize {
    match l {
        Level::Debug => 0,
        Level::Info | Level::Other(_) => 1,
        Level::Warn => 2,
        Level::Error => 3,
        Level::Fatal => 4,
    }
}

/// Starts reading the recording's log topics, if it has any.
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    start_into(&mut d.log, &d.rec.bag, ctx);
}

/// Starts reading `bag`'s log topics into `st`.
fn start_into(st: &mut LogState, bag: &bagscope_reader::Bag, ctx: &egui::Context) {
    let topics = bagscope_ops::reports::log::log_topics(bag);
    if topics.is_empty() {
        st.done = Some(Ok(0));
        return;
    }
    let bag = bag.clone();
    let job = Job::spawn("log", 8, ctx, move |h| {
        let r =
            bagscope_ops::reports::log::read_logs(&bag, &topics, h.cancel_flag(), &mut |lines| {
                h.send(LogEvent::Lines(lines))
            });
        h.send(LogEvent::Done(r.map_err(|e| e.to_string())));
    });
    match job {
        Ok(j) => st.job = Some(j),
        Err(e) => st.done = Some(Err(e)),
    }
}

/// Reads the lines again from the recording just reloaded (a live recording grew): the lines
/// shown stay until the new ones are all read, and the filters are kept.
pub fn refresh(d: &mut Doc, ctx: &egui::Context) {
    let mut next = LogState::default();
    start_into(&mut next, &d.rec.bag, ctx);
    d.log.next = Some(Box::new(next));
}

/// Takes what the worker read (never blocks).
pub fn poll(d: &mut Doc) {
    poll_state(&mut d.log);
    let Some(next) = &mut d.log.next else { return };
    poll_state(next);
    if next.job.is_none() {
        if let Some(mut n) = d.log.next.take() {
            // What the user set meanwhile stays.
            let old = std::mem::take(&mut d.log);
            n.open = old.open;
            n.show = old.show;
            n.node = old.node;
            n.text = old.text;
            n.follow = old.follow;
            n.last_playhead = old.last_playhead;
            d.log = *n;
        }
    }
}

/// Takes what `st`'s worker read.
fn poll_state(st: &mut LogState) {
    let Some(job) = &mut st.job else { return };
    let mut finished = false;
    for _ in 0..16 {
        match job.take() {
            Some(LogEvent::Lines(v)) => {
                for l in &v {
                    if l.level.rank() >= 2 {
                        st.marks
                            .entry(l.topic)
                            .or_default()
                            .push((l.time_ns, l.level));
                    }
                    st.counts[level_index(l.level)] += 1;
                    if st.worst.is_none_or(|w| l.level.rank() > w.rank()) {
                        st.worst = Some(l.level);
                    }
                    if let Err(i) = st.nodes.binary_search(&l.node) {
                        st.nodes.insert(i, l.node.clone());
                    }
                }
                st.lines.extend(v);
            }
            Some(LogEvent::Done(r)) => {
                st.done = Some(r);
                finished = true;
                break;
            }
            None if job.ended() => {
                st.done = Some(Err("the log reader stopped unexpectedly".into()));
                finished = true;
                break;
            }
            None => break,
        }
    }
    if finished {
        st.job = None;
    }
}

impl LogState {
    /// Recomputes the filtered lines when the lines or the filters changed.
    pub fn refilter(&mut self) {
        let key = (
            self.lines.len(),
            self.show,
            self.node.clone(),
            self.text.to_lowercase(),
        );
        if self.filtered_for.as_ref() == Some(&key) {
            return;
        }
        let text = &key.3;
        self.filtered = self
            .lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                self.show[level_index(l.level)]
                    && (self.node.is_empty() || l.node == self.node)
                    && (text.is_empty() || l.msg.to_lowercase().contains(text.as_str()))
            })
            .map(|(i, _)| i as u32)
            .collect();
        self.filtered_for = Some(key);
    }

    /// The filtered lines (indices into `lines`).
    pub fn filtered(&self) -> &[u32] {
        &self.filtered
    }
}

/// The log window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.log.open;
    let start = d.rec.range().0;
    let playhead = d.nav.playhead;
    let screen = ctx.content_rect();
    egui::Window::new("Log")
        .open(&mut open)
        .default_size([760.0, 300.0])
        .default_pos([screen.width() * 0.25, screen.height() * 0.45])
        .resizable(true)
        .show(ctx, |ui| {
            let text_color = ui.visuals().text_color();
            let st = &mut d.log;
            st.refilter();
            let counts = st.counts;
            ui.horizontal_wrapped(|ui| {
                for (i, l) in Level::ALL.iter().enumerate() {
                    let label = egui::RichText::new(format!("{l} {}", counts[i]))
                        .color(level_color(*l, text_color));
                    ui.toggle_value(&mut st.show[i], label);
                }
                let label = ui.label("node");
                egui::ComboBox::from_id_salt("log-node")
                    .selected_text(if st.node.is_empty() {
                        "all nodes"
                    } else {
                        st.node.as_str()
                    })
                    .width(140.0)
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut st.node, String::new(), "all nodes");
                        for n in &st.nodes {
                            ui.selectable_value(&mut st.node, n.clone(), n);
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.add(
                    egui::TextEdit::singleline(&mut st.text)
                        .hint_text("Find in messages")
                        .desired_width(160.0),
                );
                ui.checkbox(&mut st.follow, "follow playhead");
            });
            st.refilter();
            let moved = playhead != st.last_playhead;
            st.last_playhead = playhead;
            let shown = st.filtered();
            let status = match &st.done {
                None => format!("reading… {} lines", st.lines.len()),
                Some(Ok(0)) => format!("{} of {} lines", shown.len(), st.lines.len()),
                Some(Ok(bad)) => format!(
                    "{} of {} lines · {bad} could not be decoded",
                    shown.len(),
                    st.lines.len()
                ),
                Some(Err(e)) => format!("reading stopped: {e}"),
            };
            ui.weak(status);
            ui.separator();
            // The line at or before the playhead.
            let at = shown.partition_point(|&i| st.lines[i as usize].time_ns <= playhead);
            let current = at.checked_sub(1);
            let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
            let mut area = egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .id_salt("log-rows");
            if st.follow && moved {
                let y =
                    (current.unwrap_or(0) as f32 * (row_h + ui.spacing().item_spacing.y)) - 80.0;
                area = area.vertical_scroll_offset(y.max(0.0));
            }
            area.show_rows(ui, row_h, shown.len(), |ui, range| {
                for k in range {
                    let l = &st.lines[shown[k] as usize];
                    let t = l.time_ns.saturating_sub(start) as f64 / 1e9;
                    let color = level_color(l.level, text_color);
                    let text = format!(
                        "{t:>9.3}  {:<5}  {}: {}",
                        l.level.to_string(),
                        l.node,
                        l.msg.lines().next().unwrap_or("")
                    );
                    let r = ui.add(
                        egui::Button::selectable(
                            Some(k) == current,
                            egui::RichText::new(text).monospace().color(color),
                        )
                        .truncate(),
                    );
                    if r.clicked() {
                        cmds.push(Cmd::SetPlayhead(l.time_ns));
                    }
                    r.on_hover_text(format!("{}\n{}:{} ({})", l.msg, l.file, l.line, l.function));
                }
            });
        });
    d.log.open = open;
}
