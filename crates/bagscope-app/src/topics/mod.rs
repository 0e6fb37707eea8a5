//! The topic tree: topics under their namespaces, each with type, count, rate and connection
//! count; a filter box; show/hide per topic; details of the selected topic.

pub mod timing;

use std::collections::{BTreeMap, HashSet};

use super::{Cmd, Doc};
use bagscope_ops::timefmt;

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

/// One line of the tree as drawn.
#[derive(Debug, Clone, PartialEq)]
enum Row {
    /// A namespace: its label (`a/b/`, a chain of namespaces that hold only the next one),
    /// its full path (its key for folding), how many topics it holds, and whether it is open.
    Ns {
        depth: usize,
        label: String,
        path: String,
        topics: usize,
        open: bool,
    },
    /// A topic, labelled by what its namespace row does not already say.
    Topic {
        depth: usize,
        ti: usize,
        label: String,
    },
}

/// The tree's state: folded namespaces, and the rows for a filter (worked out when the filter
/// or the folding changes, not every frame).
#[derive(Default)]
pub struct TreeState {
    /// The filter text as typed.
    pub filter: String,
    /// Paths of the folded namespaces.
    folded: HashSet<String>,
    /// The rows, and the filter they were made for.
    rows: Option<(String, Vec<Row>)>,
}

/// The rows of `n`'s children at `depth`: chains of namespaces with one namespace each are
/// joined into one row (`rise/v0/ais/`), and a namespace holding only one topic is that
/// topic's row (`209014000/3`).
fn flatten(n: &Ns, path: &str, depth: usize, folded: &HashSet<String>, out: &mut Vec<Row>) {
    for (name, child) in &n.children {
        let mut label = name.clone();
        let mut p = format!("{path}/{name}");
        let mut node = child;
        // Down a chain of namespaces that hold nothing but one child.
        while node.topic.is_none() && node.children.len() == 1 {
            let Some((next_name, next)) = node.children.iter().next() else {
                break;
            };
            label = format!("{label}/{next_name}");
            p = format!("{p}/{next_name}");
            node = next;
        }
        match (node.topic, node.children.is_empty()) {
            (Some(ti), true) => out.push(Row::Topic { depth, ti, label }),
            _ => {
                let open = !folded.contains(&p);
                out.push(Row::Ns {
                    depth,
                    label: format!("{label}/"),
                    path: p.clone(),
                    topics: count_topics(node),
                    open,
                });
                if open {
                    if let Some(ti) = node.topic {
                        out.push(Row::Topic {
                            depth: depth + 1,
                            ti,
                            label: "(this topic)".into(),
                        });
                    }
                    flatten(node, &p, depth + 1, folded, out);
                }
            }
        }
    }
}

/// The rows of the topics whose name or type contains `filter` (lowercase).
fn rows_for(d: &Doc, filter: &str, folded: &HashSet<String>) -> Vec<Row> {
    let mut root = Ns::default();
    for (ti, t) in d.rec.bag.summary().topics.iter().enumerate() {
        if filter.is_empty()
            || t.name.to_lowercase().contains(filter)
            || t.datatype.to_lowercase().contains(filter)
        {
            insert(&mut root, &t.name, ti);
        }
    }
    let mut out = Vec::new();
    flatten(&root, "", 0, folded, &mut out);
    out
}

/// Indentation of a tree level (px).
const INDENT: f32 = 14.0;

/// Mean rate of a topic over the recording (count / duration, Hz): a bursty topic's median
/// period would claim thousands of Hz.
pub fn rate(d: &Doc, ti: usize) -> Option<f64> {
    let s = d.rec.bag.summary();
    let t = s.topics.get(ti)?;
    let dur = s.duration_ns() as f64 / 1e9;
    (dur > 0.0 && t.message_count > 1).then(|| t.message_count as f64 / dur)
}

/// Median time between two messages of a topic (ns), once the tables are built.
pub fn median_period(d: &Doc, ti: usize) -> Option<u64> {
    d.rec
        .indexed
        .as_ref()?
        .median_period
        .get(ti)
        .copied()
        .flatten()
}

fn topic_row(ui: &mut egui::Ui, d: &Doc, ti: usize, label: &str, cmds: &mut Vec<Cmd>) {
    let t = &d.rec.bag.summary().topics[ti];
    ui.horizontal(|ui| {
        let mut vis = d.nav.visible[ti];
        if ui
            .checkbox(&mut vis, "")
            .on_hover_text("Show on the timeline")
            .changed()
        {
            cmds.push(Cmd::SetVisible(ti, vis));
        }
        let sel = d.nav.selected == Some(ti);
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
        if bagscope_ops::media::image::is_image_type(&t.datatype)
            && ui
                .small_button("image")
                .on_hover_text("Open an image panel on this topic")
                .clicked()
        {
            cmds.push(Cmd::OpenImage(ti));
        }
        if bagscope_ops::spatial::scene::Kind::of(&t.datatype).is_some()
            && ui
                .small_button("3D")
                .on_hover_text("Show this topic in a 3D panel")
                .clicked()
        {
            cmds.push(Cmd::OpenScene(Some(ti)));
        }
        if bagscope_ops::spatial::geo::FixKind::of(&t.datatype).is_some()
            && ui
                .small_button("map")
                .on_hover_text("Show this topic on a map panel")
                .clicked()
        {
            cmds.push(Cmd::OpenMap(Some(ti)));
        }
    });
}

fn short_type(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

/// The topic panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let s = d.rec.bag.summary();
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
            egui::TextEdit::singleline(&mut d.tree.filter)
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
    let f = d.tree.filter.to_lowercase();
    if d.tree.rows.as_ref().is_none_or(|(k, _)| *k != f) {
        d.tree.rows = Some((f.clone(), rows_for(d, &f, &d.tree.folded)));
    }
    let rows = d.tree.rows.as_ref().map_or(&[][..], |(_, r)| &r[..]);
    let details_h = if d.nav.selected.is_some() { 260.0 } else { 0.0 };
    let row_h = ui.spacing().interact_size.y;
    let mut toggle = None;
    egui::ScrollArea::vertical()
        .id_salt("topic-tree")
        .max_height((ui.available_height() - details_h).max(120.0))
        .auto_shrink([false, true])
        // Only the rows on screen are laid out: a recording of thousands of topics costs what
        // a screenful does.
        .show_rows(ui, row_h, rows.len().max(1), |ui, range| {
            if rows.is_empty() {
                ui.weak("No topic matches the filter.");
            }
            for row in rows.get(range).unwrap_or(&[]) {
                match row {
                    Row::Ns {
                        depth,
                        label,
                        path,
                        topics,
                        open,
                    } => {
                        ui.horizontal(|ui| {
                            ui.add_space(*depth as f32 * INDENT);
                            let hint = if *open { "Fold" } else { "Unfold" };
                            let size = egui::Vec2::splat(ui.spacing().icon_width);
                            let a = ui.allocate_response(size, egui::Sense::click());
                            egui::collapsing_header::paint_default_icon(
                                ui,
                                if *open { 1.0 } else { 0.0 },
                                &a,
                            );
                            let l = ui.add(egui::Label::new(label).sense(egui::Sense::click()));
                            if a.on_hover_text(hint).clicked() || l.on_hover_text(hint).clicked() {
                                toggle = Some(path.clone());
                            }
                            ui.weak(format!(
                                "{topics} topic{}",
                                if *topics == 1 { "" } else { "s" }
                            ));
                        });
                    }
                    Row::Topic { depth, ti, label } => {
                        ui.horizontal(|ui| {
                            ui.add_space(*depth as f32 * INDENT);
                            topic_row(ui, d, *ti, label, cmds);
                        });
                    }
                }
            }
        });
    if let Some(p) = toggle {
        if !d.tree.folded.remove(&p) {
            d.tree.folded.insert(p);
        }
        d.tree.rows = None;
    }
    if let Some(ti) = d.nav.selected {
        ui.separator();
        details(ui, d, ti, cmds);
    }
}

fn details(ui: &mut egui::Ui, d: &mut Doc, ti: usize, cmds: &mut Vec<Cmd>) {
    let s = d.rec.bag.summary();
    let Some(t) = s.topics.get(ti) else { return };
    ui.strong(&t.name);
    ui.label(format!("{} · {} messages", t.datatype, t.message_count));
    egui::ScrollArea::vertical()
        .id_salt("topic-details")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            timing::section(ui, d, ti, cmds);
            let s = d.rec.bag.summary();
            let Some(t) = s.topics.get(ti) else { return };
            for &ci in &t.connections {
                let c = &s.connections[ci];
                let ros1 = c.encoding == "ros1";
                // Worked out on the loader thread (it may read .msg files).
                let info = d.rec.defs.as_ref().and_then(|v| v.get(ci));
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
                                ui.label(bagscope_reader::storage::rosbag2::qos_summary(&c.qos))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(names: &[&str], folded: &[&str]) -> Vec<Row> {
        let mut root = Ns::default();
        for (ti, n) in names.iter().enumerate() {
            insert(&mut root, n, ti);
        }
        let folded: HashSet<String> = folded.iter().map(|s| s.to_string()).collect();
        let mut out = Vec::new();
        flatten(&root, "", 0, &folded, &mut out);
        out
    }

    fn ns(depth: usize, label: &str, path: &str, topics: usize, open: bool) -> Row {
        Row::Ns {
            depth,
            label: label.into(),
            path: path.into(),
            topics,
            open,
        }
    }

    fn topic(depth: usize, ti: usize, label: &str) -> Row {
        Row::Topic {
            depth,
            ti,
            label: label.into(),
        }
    }

    #[test]
    fn chains_are_joined_and_lone_topics_take_their_namespace() {
        let names = [
            "/rise/v0/ais/json/209/3",
            "/rise/v0/ais/json/219/1",
            "/rise/v0/ais/json/219/5",
            "/rise/v0/ais/nmea",
            "/tf",
            "/cam",
            "/cam/info",
        ];
        assert_eq!(
            rows(&names, &[]),
            vec![
                ns(0, "cam/", "/cam", 2, true),
                topic(1, 5, "(this topic)"),
                topic(1, 6, "info"),
                ns(0, "rise/v0/ais/", "/rise/v0/ais", 4, true),
                ns(1, "json/", "/rise/v0/ais/json", 3, true),
                topic(2, 0, "209/3"),
                ns(2, "219/", "/rise/v0/ais/json/219", 2, true),
                topic(3, 1, "1"),
                topic(3, 2, "5"),
                topic(1, 3, "nmea"),
                topic(0, 4, "tf"),
            ]
        );
        // Folded: a namespace's rows are left out, its count stays.
        assert_eq!(
            rows(&names, &["/rise/v0/ais/json", "/cam"]),
            vec![
                ns(0, "cam/", "/cam", 2, false),
                ns(0, "rise/v0/ais/", "/rise/v0/ais", 4, true),
                ns(1, "json/", "/rise/v0/ais/json", 3, false),
                topic(1, 3, "nmea"),
                topic(0, 4, "tf"),
            ]
        );
    }
}
