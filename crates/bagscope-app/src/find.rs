//! The Find window: "the messages where `/topic.field` OP value" (> >= < <= == != crosses,
//! contains for text), searched on a worker over the whole recording; every hit listed, a
//! click or Next/Previous (F3, Shift+F3) moves the playhead to one.

use super::job::Job;
use super::{Cmd, Doc};
use bagscope_ops::reports::find::Hit;

type Outcome = Result<(Vec<Hit>, bool), String>;

/// The Find window's state.
#[derive(Default)]
pub struct FindState {
    /// Shown.
    pub open: bool,
    /// The query as typed.
    pub query: String,
    /// The hits of the last search, in time order.
    pub hits: Vec<Hit>,
    /// The last search stopped at the hit limit.
    pub capped: bool,
    /// What the last search was.
    pub searched: Option<String>,
    /// Why the last search failed.
    pub error: Option<String>,
    /// Put the keyboard focus in the query box on the next frame (the window just opened).
    pub focus_query: bool,
    job: Option<Job<Outcome>>,
}

impl FindState {
    /// Whether a search is running.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// The first hit after `t` (forward) or the last before it.
    pub fn next_from(&self, t: u64, forward: bool) -> Option<u64> {
        if forward {
            let k = self.hits.partition_point(|h| h.time_ns <= t);
            self.hits.get(k).map(|h| h.time_ns)
        } else {
            let k = self.hits.partition_point(|h| h.time_ns < t);
            k.checked_sub(1).map(|k| self.hits[k].time_ns)
        }
    }
}

/// Starts a search for the typed query (the previous one is cancelled).
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    let st = &mut d.find;
    // Dropping the running search cancels it.
    st.job = None;
    st.error = None;
    st.hits.clear();
    st.capped = false;
    use bagscope_ops::reports::find;
    // A series a script makes (`speed kmh > 20`), searched on the worker that runs it.
    let scripted = find::script_query(&st.query, &d.plots.scripts);
    let q = match scripted {
        Some(_) => None,
        None => match find::parse_query(&st.query) {
            Ok(q) => Some(q),
            Err(e) => {
                st.error = Some(e.to_string());
                return;
            }
        },
    };
    st.searched = Some(st.query.trim().to_string());
    let bag = d.rec.bag.clone();
    let scripts = d.plots.scripts.clone();
    let job = Job::spawn("find", 1, ctx, move |h| {
        let r = match (&scripted, &q) {
            (Some((name, op, x)), _) => {
                find::find_scripted(&bag, &scripts, (name, *op, *x), h.cancel_flag())
                    .map_err(|e| e.to_string())
            }
            (None, Some(q)) => find::find(&bag, q, h.cancel_flag()).map_err(|e| e.to_string()),
            (None, None) => Ok((Vec::new(), false)),
        };
        h.send(r);
    });
    match job {
        Ok(j) => st.job = Some(j),
        Err(e) => st.error = Some(e),
    }
}

/// Takes a finished search (never blocks).
pub fn poll(d: &mut Doc) {
    let st = &mut d.find;
    let Some(job) = &mut st.job else { return };
    match job.take() {
        Some(Ok((hits, capped))) => {
            st.hits = hits;
            st.capped = capped;
            st.job = None;
        }
        Some(Err(e)) => {
            st.error = Some(e);
            st.job = None;
        }
        None if job.ended() => st.job = None,
        None => {}
    }
}

/// The Find window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.find.open;
    let start = d.rec.range().0;
    let playhead = d.nav.playhead;
    let screen = ctx.content_rect();
    egui::Window::new("Find")
        .open(&mut open)
        .default_pos([screen.width() * 0.3, 70.0])
        .default_size([520.0, 320.0])
        .resizable(true)
        .show(ctx, |ui| {
            let st = &mut d.find;
            ui.horizontal(|ui| {
                let r = ui.add(
                    egui::TextEdit::singleline(&mut st.query)
                        .hint_text("/odom.twist.twist.linear.x > 0.5   ·   /rosout.msg contains battery")
                        .desired_width(ui.available_width() - 80.0)
                        .font(egui::TextStyle::Monospace),
                );
                if std::mem::take(&mut st.focus_query) {
                    r.request_focus();
                }
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Find all").clicked() || enter {
                    cmds.push(Cmd::Find);
                }
            });
            ui.weak("Operators: > >= < <= == != crosses (numbers), contains (text in the strings under a path or a whole topic)");
            ui.horizontal(|ui| {
                let has = !st.hits.is_empty();
                if ui
                    .add_enabled(has, egui::Button::new("< Previous"))
                    .on_hover_text("Shift+F3")
                    .clicked()
                {
                    cmds.push(Cmd::FindStep(false));
                }
                if ui
                    .add_enabled(has, egui::Button::new("Next >"))
                    .on_hover_text("F3")
                    .clicked()
                {
                    cmds.push(Cmd::FindStep(true));
                }
                if st.running() {
                    ui.spinner();
                    ui.label("searching…");
                } else if let Some(e) = &st.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                } else if let Some(q) = &st.searched {
                    ui.label(format!(
                        "{} hit{} for {q}{}",
                        st.hits.len(),
                        if st.hits.len() == 1 { "" } else { "s" },
                        if st.capped { " (stopped at the limit)" } else { "" }
                    ));
                }
            });
            ui.separator();
            let current = st.hits.partition_point(|h| h.time_ns <= playhead).checked_sub(1);
            let row_h = ui.text_style_height(&egui::TextStyle::Monospace) + 4.0;
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .id_salt("find-hits")
                .show_rows(ui, row_h, st.hits.len(), |ui, range| {
                    for k in range {
                        let h = &st.hits[k];
                        let t = h.time_ns.saturating_sub(start) as f64 / 1e9;
                        let r = ui.add(
                            egui::Button::selectable(
                                Some(k) == current,
                                egui::RichText::new(format!("{t:>10.3} s   {}", h.value)).monospace(),
                            )
                            .truncate(),
                        );
                        if r.clicked() {
                            cmds.push(Cmd::SetPlayhead(h.time_ns));
                        }
                    }
                });
        });
    d.find.open = open;
}
