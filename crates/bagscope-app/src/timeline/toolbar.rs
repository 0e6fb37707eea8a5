//! The timeline's toolbar: play, step, speed, the playhead's time, the selection, the second
//! cursor, bookmarks, fit and zoom.

use bagscope_ops::timefmt;

use super::{rel, Cmd, Doc, CURSOR2, SPEEDS};

pub(super) fn toolbar(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let (a, b) = d.rec.range();
    ui.horizontal_wrapped(|ui| {
        let play = if d.nav.playing { "Pause" } else { "Play" };
        if ui.button(play).on_hover_text("Space").clicked() {
            cmds.push(Cmd::TogglePlay);
        }
        if ui
            .button("|<")
            .on_hover_text("Previous message (←)")
            .clicked()
        {
            cmds.push(Cmd::Step(false));
        }
        if ui.button(">|").on_hover_text("Next message (→)").clicked() {
            cmds.push(Cmd::Step(true));
        }
        egui::ComboBox::new("speed", "speed")
            .width(64.0)
            .selected_text(format!("{}×", d.nav.speed))
            .show_ui(ui, |ui| {
                for s in SPEEDS {
                    if ui
                        .selectable_label(d.nav.speed == s, format!("{s}×"))
                        .clicked()
                    {
                        cmds.push(Cmd::SetSpeed(s));
                    }
                }
            });
        ui.separator();
        ui.label(format!(
            "t = +{} s  ·  {} UTC",
            rel(d, d.nav.playhead),
            timefmt::date(d.nav.playhead)
        ));
        if let Some(c2) = d.nav.cursor2 {
            let dt = c2 as i128 - d.nav.playhead as i128;
            let sign = if dt < 0 { "-" } else { "+" };
            ui.colored_label(
                CURSOR2,
                format!("Δt = {sign}{}", timefmt::period(dt.unsigned_abs() as u64)),
            )
            .on_hover_text(
                "Second cursor minus playhead (right-click the timeline to move or clear it)",
            );
        }
        ui.separator();
        if ui
            .button("Bookmark")
            .on_hover_text("Bookmark the playhead (B); bookmarks are kept per file")
            .clicked()
        {
            cmds.push(Cmd::AddBookmark(d.nav.playhead));
        }
        if !d.nav.bookmarks.is_empty() {
            ui.menu_button(format!("Bookmarks ({})", d.nav.bookmarks.len()), |ui| {
                for (i, (t, name)) in d.nav.bookmarks.iter().enumerate() {
                    ui.horizontal(|ui| {
                        if ui.button(format!("{name}  +{} s", rel(d, *t))).clicked() {
                            cmds.push(Cmd::SetPlayhead(*t));
                            ui.close();
                        }
                        if ui.small_button("x").on_hover_text("Remove").clicked() {
                            cmds.push(Cmd::RemoveBookmark(i));
                        }
                    });
                }
            });
        }
        ui.separator();
        if ui.button("Fit all").clicked() {
            cmds.push(Cmd::FitAll);
        }
        if d.rec
            .bag
            .summary()
            .topics
            .iter()
            .any(|t| bagscope_ops::media::image::is_image_type(&t.datatype))
        {
            ui.toggle_value(&mut d.timeline.show_thumbs, "Thumbnails")
                .on_hover_text("Images on the camera topics' rows");
        }
        ui.separator();
        // The selected range, typed or dragged.
        if d.timeline.sel_text_for != Some(d.nav.selection) {
            d.timeline.sel_text = match d.nav.selection {
                Some((x, y)) => (rel(d, x), rel(d, y)),
                None => (String::new(), String::new()),
            };
            d.timeline.sel_text_for = Some(d.nav.selection);
        }
        ui.label("Range");
        let r1 = ui.add(
            egui::TextEdit::singleline(&mut d.timeline.sel_text.0)
                .desired_width(70.0)
                .hint_text("start s"),
        );
        ui.label("–");
        let r2 = ui.add(
            egui::TextEdit::singleline(&mut d.timeline.sel_text.1)
                .desired_width(70.0)
                .hint_text("end s"),
        );
        if (r1.lost_focus() || r2.lost_focus()) && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            let p = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .map(|x| (a as f64 + x * 1e9).max(0.0) as u64)
            };
            match (p(&d.timeline.sel_text.0), p(&d.timeline.sel_text.1)) {
                (Some(x), Some(y)) => cmds.push(Cmd::SetSelection(Some((x, y)))),
                (Some(x), None) => cmds.push(Cmd::SetSelection(Some((x, b)))),
                (None, Some(y)) => cmds.push(Cmd::SetSelection(Some((a, y)))),
                (None, None) => cmds.push(Cmd::SetSelection(None)),
            }
            d.timeline.sel_text_for = None;
        }
        if let Some((x, y)) = d.nav.selection {
            ui.weak(timefmt::duration(y - x));
            if ui.small_button("Clear").clicked() {
                cmds.push(Cmd::SetSelection(None));
            }
        } else {
            ui.weak("shift-drag");
        }
        ui.separator();
        let r = ui.add(
            egui::TextEdit::singleline(&mut d.states.input)
                .desired_width(200.0)
                .hint_text("state row: /mode.data"),
        );
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui
            .small_button("+ state")
            .on_hover_text("Draw a text, boolean or integer field as coloured bands of its values")
            .clicked()
            || enter)
            && !d.states.input.trim().is_empty()
        {
            cmds.push(Cmd::AddStateRow(d.states.input.trim().to_string()));
            d.states.input.clear();
        }
    });
}
