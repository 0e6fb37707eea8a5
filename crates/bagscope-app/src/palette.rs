//! The command palette (Ctrl+K): any action, topic, panel, bookmark or recent file found by
//! typing a few letters of it; ↑/↓ choose, Enter does it, Esc closes.

use super::actions::{actions, Menu};
use super::{shown_path, App, Cmd};

/// The palette's state.
#[derive(Default)]
pub struct Palette {
    pub open: bool,
    pub query: String,
    /// The highlighted entry among those matching.
    pub selected: usize,
}

/// One thing the palette offers.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What it is (`View`, `Topic`, `Image panel`, `Bookmark`, ...).
    pub kind: String,
    pub text: String,
    /// The shortcut, as the platform writes it, or a detail.
    pub detail: String,
    pub cmd: Cmd,
}

/// Everything the palette offers now: the actions available, then the topics (select one;
/// open an image or 3D panel on those that can), the bookmarks and the recent files.
pub fn entries(app: &App, ctx: &egui::Context) -> Vec<Entry> {
    let mut out: Vec<Entry> = actions(app)
        .into_iter()
        .filter(|a| a.menu != Menu::Help || a.cmd.is_some())
        .filter_map(|a| {
            Some(Entry {
                kind: a.menu.name().to_string(),
                text: a.name.trim_end_matches('…').to_string(),
                detail: a.keys.map(|k| ctx.format_shortcut(&k)).unwrap_or_default(),
                cmd: a.cmd?,
            })
        })
        .collect();
    if let Some(d) = &app.doc {
        for (i, t) in d.rec.bag.summary().topics.iter().enumerate() {
            let entry = |kind: &str, cmd| Entry {
                kind: kind.to_string(),
                text: t.name.clone(),
                detail: t.datatype.clone(),
                cmd,
            };
            out.push(entry("Topic", Cmd::SelectTopic(Some(i))));
            if bagscope_ops::media::image::is_image_type(&t.datatype) {
                out.push(entry("Image panel", Cmd::OpenImage(i)));
            }
            if bagscope_ops::spatial::scene::Kind::of(&t.datatype).is_some() {
                out.push(entry("3D panel", Cmd::OpenScene(Some(i))));
            }
        }
        let start = d.rec.range().0;
        for (t, name) in &d.nav.bookmarks {
            out.push(Entry {
                kind: "Bookmark".into(),
                text: name.clone(),
                detail: format!("+{:.3} s", t.saturating_sub(start) as f64 / 1e9),
                cmd: Cmd::SetPlayhead(*t),
            });
        }
    }
    for p in &app.recent {
        out.push(Entry {
            kind: "Recent".into(),
            text: shown_path(p),
            detail: String::new(),
            cmd: Cmd::Open(p.clone()),
        });
    }
    out
}

/// How well `query` matches `text`, or `None`: every word of the query must appear in the text
/// in order, its letters in order (case aside). Letters that follow one another, and ones at
/// the start of a word, count more; a shorter text ranks higher among equals.
pub fn score(query: &str, text: &str) -> Option<i64> {
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let mut total = 0i64;
    let mut at = 0usize;
    for word in query.split_whitespace() {
        let mut prev: Option<usize> = None;
        for q in word.to_lowercase().chars() {
            let i = at + text[at..].iter().position(|&c| c == q)?;
            let start = i == 0 || !text[i - 1].is_alphanumeric();
            total +=
                1 + if prev == Some(i.wrapping_sub(1)) {
                    8
                } else {
                    0
                } + if start { 6 } else { 0 };
            prev = Some(i);
            at = i + 1;
        }
    }
    Some(total * 1000 - text.len() as i64)
}

/// The entries matching `query`, best first (all, in order, for an empty query).
pub fn matching(entries: Vec<Entry>, query: &str) -> Vec<Entry> {
    let mut scored: Vec<(i64, usize, Entry)> = entries
        .into_iter()
        .enumerate()
        .filter_map(|(i, e)| {
            // The kind counts too ("image cam" finds the camera's image panel).
            let s = score(query, &e.text)
                .or_else(|| score(query, &format!("{} {}", e.kind, e.text)).map(|s| s - 500))?;
            Some((s, i, e))
        })
        .collect();
    scored.sort_by_key(|(s, i, _)| (std::cmp::Reverse(*s), *i));
    scored.into_iter().map(|(_, _, e)| e).collect()
}

/// Most entries listed at once.
const SHOWN: usize = 14;

impl App {
    /// The palette, over the window's top middle.
    pub(super) fn palette(&mut self, ctx: &egui::Context) {
        if !self.palette.open {
            return;
        }
        let found = matching(entries(self, ctx), &self.palette.query);
        let (up, down, enter, esc) = ctx.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowUp),
                i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowDown),
                i.consume_key(egui::Modifiers::NONE, egui::Key::Enter),
                i.consume_key(egui::Modifiers::NONE, egui::Key::Escape),
            )
        });
        let p = &mut self.palette;
        let n = found.len().min(SHOWN);
        if down && n > 0 {
            p.selected = (p.selected + 1) % n;
        }
        if up && n > 0 {
            p.selected = (p.selected + n - 1) % n;
        }
        p.selected = p.selected.min(n.saturating_sub(1));
        let mut chosen = enter
            .then(|| found.get(p.selected).map(|e| e.cmd.clone()))
            .flatten();
        let mut close = esc;
        egui::Window::new("Command palette")
            .title_bar(false)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 60.0])
            .fixed_size([560.0, 0.0])
            .show(ctx, |ui| {
                let r = ui.add(
                    egui::TextEdit::singleline(&mut p.query)
                        .hint_text("Type an action, a topic, a bookmark…")
                        .desired_width(f32::INFINITY),
                );
                if r.changed() {
                    p.selected = 0;
                }
                r.request_focus();
                ui.separator();
                if found.is_empty() {
                    ui.weak("Nothing matches");
                }
                for (i, e) in found.iter().take(SHOWN).enumerate() {
                    let row = ui
                        .horizontal(|ui| {
                            let label = ui.selectable_label(i == p.selected, &e.text);
                            ui.weak(&e.kind);
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| {
                                    ui.weak(&e.detail);
                                },
                            );
                            label
                        })
                        .inner;
                    if row.clicked() {
                        chosen = Some(e.cmd.clone());
                    }
                }
                if found.len() > SHOWN {
                    ui.weak(format!(
                        "… {} more: type more to narrow",
                        found.len() - SHOWN
                    ));
                }
            });
        if chosen.is_some() {
            close = true;
        }
        if close {
            self.palette = Palette::default();
        }
        self.cmds.extend(chosen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(text: &str) -> Entry {
        Entry {
            kind: "View".into(),
            text: text.into(),
            detail: String::new(),
            cmd: Cmd::FitAll,
        }
    }

    #[test]
    fn letters_in_order_match_and_word_starts_rank_first() {
        assert!(score("exp", "Export").is_some());
        assert!(score("xpt", "Export").is_some());
        assert!(score("tpx", "Export").is_none());
        assert!(score("", "anything").is_some());
        // Two words: each in order, the second after the first.
        assert!(score("imu acc", "/imu/linear_acceleration").is_some());
        assert!(score("acc imu", "/imu/linear_acceleration").is_none());
        let found = matching(
            vec![e("Next hit"), e("Export"), e("Open the demo recording")],
            "ex",
        );
        let names: Vec<&str> = found.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(names, ["Export", "Next hit"]);
        // Contiguous letters beat scattered ones.
        let found = matching(vec![e("/camera/info"), e("/cam")], "cam");
        assert_eq!(found[0].text, "/cam");
    }

    #[test]
    fn the_kind_is_matched_too() {
        let mut img = e("/camera/image_raw");
        img.kind = "Image panel".into();
        let found = matching(vec![e("/camera/image_raw"), img], "image panel cam");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, "Image panel");
    }
}
