//! The topic tree: topics under their namespaces, each with type, count, rate and connection
//! count; a filter box; show/hide per topic; details of the selected topic.

use std::collections::BTreeMap;

use super::{Cmd, Doc};
use crate::timefmt;

#[derive(Default)]
struct Ns {
    children: BTreeMap<String, Ns>,
    /// Topic index, when a topic ends here.
    topic: Option<usize>,
}

fn insert(root: &mut Ns, name: &str, ti: usize) {
    let mut n = root;
    for part in name.split('/').filter(|p| !p.is_empty()) {
        n = n.children.entry(part.to_string()).or_default();
    }
    n.topic = Some(ti);
}

fn count_topics(n: &Ns) -> usize {
    usize::from(n.topic.is_some()) + n.children.values().map(count_topics).sum::<usize>()
}

/// Mean rate of a topic over the recording (count / duration, Hz): a bursty topic's median
/// period would claim thousands of Hz.
pub fn rate(d: &Doc, ti: usize) -> Option<f64> {
    let s = d.bag.summary();
    let t = s.topics.get(ti)?;
    let dur = s.duration_ns() as f64 / 1e9;
    (dur > 0.0 && t.message_count > 1).then(|| t.message_count as f64 / dur)
}

/// Median time between two messages of a topic (ns), once the tables are built.
pub fn median_period(d: &Doc, ti: usize) -> Option<u64> {
    d.indexed.as_ref()?.median_period.get(ti).copied().flatten()
}

fn topic_row(ui: &mut egui::Ui, d: &Doc, ti: usize, label: &str, cmds: &mut Vec<Cmd>) {
    let t = &d.bag.summary().topics[ti];
    ui.horizontal(|ui| {
        let mut vis = d.visible[ti];
        if ui
            .checkbox(&mut vis, "")
            .on_hover_text("Show on the timeline")
            .changed()
        {
            cmds.push(Cmd::SetVisible(ti, vis));
        }
        let sel = d.selected == Some(ti);
        let r = ui.selectable_label(sel, label);
        if r.clicked() {
            cmds.push(Cmd::SelectTopic(if sel { None } else { Some(ti) }));
        }
        r.on_hover_text(format!(
            "{}\n{}\n{} messages, {} connection(s)",
            t.name,
            t.datatype,
            t.message_count,
            t.connections.len()
        ));
        let hz = rate(d, ti).map_or(String::new(), |r| format!(" · {r:.1} Hz"));
        let med = median_period(d, ti).map_or(String::new(), |p| {
            format!(" · med {}", timefmt::period(p))
        });
        let conns = if t.connections.len() > 1 {
            format!(" · {} conns", t.connections.len())
        } else {
            String::new()
        };
        ui.weak(format!(
            "{} · {}{hz}{med}{conns}",
            short_type(&t.datatype),
            t.message_count
        ))
        .on_hover_text(
            "mean rate over the recording (count / duration), and the median period between two messages",
        );
        if crate::image::is_image_type(&t.datatype)
            && ui
                .small_button("image")
                .on_hover_text("Open an image panel on this topic")
                .clicked()
        {
            cmds.push(Cmd::OpenImage(ti));
        }
    });
}

fn short_type(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

fn show_ns(ui: &mut egui::Ui, d: &Doc, n: &Ns, path: &str, cmds: &mut Vec<Cmd>) {
    for (name, child) in &n.children {
        let p = format!("{path}/{name}");
        if child.children.is_empty() {
            if let Some(ti) = child.topic {
                topic_row(ui, d, ti, name, cmds);
            }
            continue;
        }
        let id = ui.make_persistent_id(("ns", &p));
        egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true)
            .show_header(ui, |ui| {
                ui.label(format!("{name}/"));
                let n = count_topics(child);
                ui.weak(format!("{n} topic{}", if n == 1 { "" } else { "s" }));
            })
            .body(|ui| {
                if let Some(ti) = child.topic {
                    topic_row(ui, d, ti, "(this topic)", cmds);
                }
                show_ns(ui, d, child, &p, cmds);
            });
    }
}

/// The topic panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let s = d.bag.summary();
    ui.horizontal(|ui| {
        ui.heading("Topics");
        ui.weak(format!(
            "{} topics · {} messages",
            s.topics.len(),
            s.message_count
        ));
    });
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::singleline(&mut d.filter)
                .hint_text("Filter topics and types")
                .desired_width(180.0),
        );
        if ui
            .small_button("All")
            .on_hover_text("Show every topic")
            .clicked()
        {
            cmds.push(Cmd::SetAllVisible(true));
        }
        if ui
            .small_button("None")
            .on_hover_text("Hide every topic")
            .clicked()
        {
            cmds.push(Cmd::SetAllVisible(false));
        }
    });
    let f = d.filter.to_lowercase();
    let mut root = Ns::default();
    for (ti, t) in s.topics.iter().enumerate() {
        if f.is_empty()
            || t.name.to_lowercase().contains(&f)
            || t.datatype.to_lowercase().contains(&f)
        {
            insert(&mut root, &t.name, ti);
        }
    }
    let details_h = if d.selected.is_some() { 260.0 } else { 0.0 };
    egui::ScrollArea::vertical()
        .id_salt("topic-tree")
        .max_height((ui.available_height() - details_h).max(120.0))
        .auto_shrink([false, true])
        .show(ui, |ui| {
            if root.children.is_empty() {
                ui.weak("No topic matches the filter.");
            }
            show_ns(ui, d, &root, "", cmds);
        });
    if let Some(ti) = d.selected {
        ui.separator();
        details(ui, d, ti, cmds);
    }
}

fn details(ui: &mut egui::Ui, d: &mut Doc, ti: usize, cmds: &mut Vec<Cmd>) {
    let s = d.bag.summary();
    let Some(t) = s.topics.get(ti) else { return };
    ui.strong(&t.name);
    ui.label(format!("{} · {} messages", t.datatype, t.message_count));
    egui::ScrollArea::vertical()
        .id_salt("topic-details")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            super::timing::section(ui, d, ti, cmds);
            let s = d.bag.summary();
            let Some(t) = s.topics.get(ti) else { return };
            for &ci in &t.connections {
                let c = &s.connections[ci];
                let ros1 = c.encoding == "ros1";
                // Worked out on the loader thread (it may read .msg files).
                let info = d.defs.as_ref().and_then(|v| v.get(ci));
                let (md5, source, search) = match info {
                    Some(i) => (
                        i.md5.clone().unwrap_or_default(),
                        i.source.clone(),
                        i.search_path.clone(),
                    ),
                    None => (String::new(), "…".to_string(), "…".to_string()),
                };
                egui::CollapsingHeader::new(format!(
                    "connection {} · {} msgs · {}",
                    c.id,
                    c.message_count,
                    match (&c.callerid, c.encoding.as_str()) {
                        (Some(id), _) => id.clone(),
                        (None, "ros1") => "(no callerid)".to_string(),
                        (None, enc) => format!("{enc} · {}", s.version.as_str()),
                    }
                ))
                .id_salt(("conn", ci))
                .show(ui, |ui| {
                    egui::Grid::new(("conn-grid", ci))
                        .num_columns(2)
                        .show(ui, |ui| {
                            ui.label("type");
                            ui.label(&c.datatype);
                            ui.end_row();
                            ui.label("encoding");
                            ui.label(&c.encoding);
                            ui.end_row();
                            ui.label("definition");
                            ui.label(&source);
                            ui.end_row();
                            ui.label("search path");
                            ui.label(&search);
                            ui.end_row();
                            if ros1 {
                                ui.label("md5sum");
                                ui.label(&c.md5sum);
                                ui.end_row();
                                ui.label("");
                                ui.label(&md5);
                                ui.end_row();
                            }
                            if !c.qos.trim().is_empty() {
                                ui.label("QoS");
                                ui.label(crate::rosbag2::qos_summary(&c.qos))
                                    .on_hover_text(&c.qos);
                                ui.end_row();
                            }
                            if s.files.len() > 1 {
                                ui.label("storage file");
                                ui.label(
                                    s.files
                                        .get(c.file as usize)
                                        .and_then(|f| f.file_name())
                                        .map(|f| f.to_string_lossy().into_owned())
                                        .unwrap_or_default(),
                                );
                                ui.end_row();
                            }
                            ui.label("callerid");
                            ui.label(c.callerid.as_deref().unwrap_or("—"));
                            ui.end_row();
                            ui.label("latching");
                            ui.label(if c.latching { "yes" } else { "no" });
                            ui.end_row();
                        });
                    ui.collapsing("Definition", |ui| {
                        ui.add(
                            egui::Label::new(
                                egui::RichText::new(&c.message_definition).monospace(),
                            )
                            .selectable(true),
                        );
                    });
                });
            }
        });
}
