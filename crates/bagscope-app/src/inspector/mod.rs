//! The inspector: the selected topic's message at or before the playhead, decoded field by
//! field from its definition (a collapsible tree; long arrays paged; times as seconds and
//! dates; constants beside the values they name), and the raw bytes with the hovered field
//! highlighted. Values and paths can be copied.

use std::collections::HashMap;

use egui::text::LayoutJob;
use egui::{Color32, FontId, TextFormat};

use super::job::Service;
mod worker;
use super::{Cmd, Doc};
use bagscope_ops::timefmt;
use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType};
use bagscope_reader::encoding::{Node, Plan, Value};
pub use worker::{decode_image, inspector, InspectKey, Inspected};

/// Elements of an array shown per page.
const PAGE: usize = 50;

/// The inspector's own state: the message shown and how its tree is shown.
#[derive(Default)]
pub struct InspectorState {
    /// The worker that reads and decodes the message shown (started with the first request).
    pub worker: Option<Service<InspectKey, Inspected>>,
    /// The last message asked for.
    pub key: Option<InspectKey>,
    /// The last message received.
    pub shown: Option<Inspected>,
    /// How the tree is shown.
    pub view: TreeView,
}

/// How the inspector's tree and bytes are shown.
#[derive(Default)]
pub struct TreeView {
    /// Show the raw bytes.
    pub raw: bool,
    /// Bytes of the field under the pointer.
    highlight: Option<(u32, u32)>,
    /// Page shown of each array, by path.
    pages: HashMap<String, usize>,
}

fn time_text(sec: i64, nsec: i64, is_time: bool) -> String {
    let total = sec as i128 * 1_000_000_000 + nsec as i128;
    if is_time && total >= 0 {
        let t = total as u64;
        format!("{} s  ({} UTC)", timefmt::secs(t), timefmt::date(t))
    } else {
        format!("{:.9} s", total as f64 / 1e9)
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Time { sec, nsec } => time_text(i64::from(*sec), i64::from(*nsec), true),
        Value::Duration { sec, nsec } => time_text(i64::from(*sec), i64::from(*nsec), false),
        other => other.to_string(),
    }
}

struct Ctx<'a> {
    plan: &'a Plan,
    topic: &'a str,
    hovered: Option<(u32, u32)>,
    cmds: &'a mut Vec<Cmd>,
}

#[allow(clippy::too_many_arguments)] // one row's facts; a struct would only rename them
fn leaf_row(
    ui: &mut egui::Ui,
    cx: &mut Ctx<'_>,
    label: &str,
    ty: &str,
    v: &Value,
    span: (u32, u32),
    path: &str,
    constants: &[String],
) {
    let r = ui
        .horizontal(|ui| {
            ui.label(egui::RichText::new(label).strong());
            let text = value_text(v);
            ui.add(egui::Label::new(egui::RichText::new(&text).monospace()).selectable(false));
            for c in constants {
                ui.colored_label(Color32::from_rgb(120, 170, 255), c);
            }
            ui.weak(ty);
        })
        .response;
    // A widget of its own, registered after the row's labels, so it gets the row's clicks.
    let r = ui.interact(
        r.rect,
        ui.scope_id().with(("leaf", path)),
        egui::Sense::click(),
    );
    if r.hovered() {
        cx.hovered = Some(span);
    }
    let full = format!("{}{path}", bagscope_reader::encoding::path_topic(cx.topic));
    let vt = v.to_string();
    let numeric = v.as_f64().is_some();
    let r = if numeric {
        r.on_hover_text("Click to plot this field")
    } else {
        r
    };
    if numeric && r.clicked() {
        cx.cmds.push(Cmd::AddSeries(full.clone()));
    }
    r.context_menu(|ui| {
        if numeric && ui.button("Plot").clicked() {
            cx.cmds.push(Cmd::AddSeries(full.clone()));
            ui.close();
        }
        if ui.button("Copy value").clicked() {
            ui.ctx().copy_text(vt.clone());
            ui.close();
        }
        if ui.button("Copy field path").clicked() {
            ui.ctx().copy_text(full.clone());
            ui.close();
        }
    });
}

fn field_label(f: &Field) -> String {
    f.name.clone()
}

#[allow(clippy::too_many_arguments)] // the recursion's context, passed down as is
fn show_value(
    ui: &mut egui::Ui,
    cx: &mut Ctx<'_>,
    st: &mut TreeView,
    label: &str,
    field: Option<&Field>,
    owner: Option<usize>,
    n: &Node,
    path: &str,
    depth: usize,
) {
    let ty = field.map_or(String::new(), |f| f.type_text.clone());
    match &n.value {
        Value::Message { ty: t, fields } => {
            let tdef = &cx.plan.def.types[*t];
            let id = ui.make_persistent_id(("msg", path));
            let resp = egui::collapsing_header::CollapsingState::load_with_default_open(
                ui.ctx(),
                id,
                depth < 2,
            )
            .show_header(ui, |ui| {
                ui.label(egui::RichText::new(label).strong());
                ui.weak(&tdef.name);
                // A ROS 2 `builtin_interfaces/Time` or a protobuf `Timestamp`: its date.
                if let Some(ns) = stamp_ns(tdef, fields) {
                    ui.monospace(format!("{} UTC", timefmt::date(ns)));
                }
            })
            .body(|ui| {
                for (f, child) in tdef.fields.iter().zip(fields) {
                    let p = format!("{path}.{}", f.name);
                    show_value(
                        ui,
                        cx,
                        st,
                        &field_label(f),
                        Some(f),
                        Some(*t),
                        child,
                        &p,
                        depth + 1,
                    );
                }
            });
            if resp.0.hovered() {
                cx.hovered = Some((n.start, n.end));
            }
        }
        Value::Bytes(_) | Value::Prims(..) | Value::Array(_) => {
            let len = n.value.len().unwrap_or(0);
            let id = ui.make_persistent_id(("arr", path));
            let resp = egui::collapsing_header::CollapsingState::load_with_default_open(
                ui.ctx(),
                id,
                false,
            )
            .show_header(ui, |ui| {
                ui.label(egui::RichText::new(label).strong());
                ui.weak(format!("{ty} · {len} items"));
                if let Value::Bytes(b) = &n.value {
                    match printable_text(b) {
                        // Bytes that are text (JSON in a protobuf `bytes` field, a CSV line):
                        // shown as text, whole on hover.
                        Some(t) => {
                            let short: String = t.chars().take(80).collect();
                            let more = if t.chars().count() > 80 { "…" } else { "" };
                            ui.monospace(format!("{:?}{more}", short.trim_end()))
                                .on_hover_text(t);
                        }
                        None => {
                            let preview: String =
                                b.iter().take(12).map(|x| format!("{x:02x} ")).collect();
                            ui.monospace(format!(
                                "{preview}{}",
                                if b.len() > 12 { "…" } else { "" }
                            ));
                        }
                    }
                }
            })
            .body(|ui| {
                let pages = len.div_ceil(PAGE).max(1);
                let page = st.pages.get(path).copied().unwrap_or(0).min(pages - 1);
                if pages > 1 {
                    ui.horizontal(|ui| {
                        if ui.small_button("<").clicked() && page > 0 {
                            st.pages.insert(path.to_string(), page - 1);
                        }
                        ui.label(format!(
                            "{}–{} of {len}",
                            page * PAGE,
                            ((page + 1) * PAGE).min(len) - 1
                        ));
                        if ui.small_button(">").clicked() && page + 1 < pages {
                            st.pages.insert(path.to_string(), page + 1);
                        }
                    });
                }
                let elem_field = field.map(|f| Field {
                    array: ArrayKind::Scalar,
                    ..f.clone()
                });
                let elem_ty = field.map_or(String::new(), |f| {
                    f.type_text.split('[').next().unwrap_or("").to_string()
                });
                for i in page * PAGE..((page + 1) * PAGE).min(len) {
                    let p = format!("{path}[{i}]");
                    match &n.value {
                        Value::Array(items) => {
                            show_value(
                                ui,
                                cx,
                                st,
                                &format!("[{i}]"),
                                elem_field.as_ref(),
                                owner,
                                &items[i],
                                &p,
                                depth + 1,
                            );
                        }
                        v => {
                            if let Some((e, off)) = v.element(i) {
                                let sz = match &n.value {
                                    Value::Prims(pr, _) => pr.size().unwrap_or(1),
                                    _ => 1,
                                };
                                let data_start = n.end as usize - v.len().unwrap_or(0) * sz;
                                let s0 = (data_start + off) as u32;
                                leaf_row(
                                    ui,
                                    cx,
                                    &format!("[{i}]"),
                                    &elem_ty,
                                    &e,
                                    (s0, s0 + sz as u32),
                                    &p,
                                    &[],
                                );
                            }
                        }
                    }
                }
            });
            if resp.0.hovered() {
                cx.hovered = Some((n.start, n.end));
            }
        }
        v => {
            let consts: Vec<String> = match (owner, field) {
                (Some(o), Some(f)) if matches!(f.ty, FieldType::Primitive(_)) => cx.plan.def.types
                    [o]
                    .constants_matching(
                        v.as_f64(),
                        match v {
                            bagscope_reader::encoding::Value::String(s) => Some(s.as_slice()),
                            _ => None,
                        },
                    )
                    .iter()
                    // A protobuf enum's values label that enum's fields only.
                    .filter(|c| {
                        !c.type_text.starts_with("enum ")
                            || f.type_text.trim_start_matches("repeated ") == c.type_text
                    })
                    .map(|c| c.name.clone())
                    .collect(),
                _ => Vec::new(),
            };
            leaf_row(ui, cx, label, &ty, v, (n.start, n.end), path, &consts);
        }
    }
}

fn hex_view(ui: &mut egui::Ui, data: &[u8], hl: Option<(u32, u32)>) {
    let rows = data.len().div_ceil(16);
    let font = FontId::monospace(12.0);
    let normal = ui.visuals().text_color();
    let hl_bg = ui.visuals().selection.bg_fill;
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::both()
        .id_salt("hex")
        .auto_shrink([false, false])
        .show_rows(ui, row_h, rows, |ui, range| {
            for r in range {
                let mut job = LayoutJob::default();
                let base = r * 16;
                job.append(
                    &format!("{base:08x}  "),
                    0.0,
                    TextFormat::simple(font.clone(), ui.visuals().weak_text_color()),
                );
                let fmt = |i: usize| {
                    let on = hl.is_some_and(|(a, b)| (a as usize..b as usize).contains(&i));
                    TextFormat {
                        font_id: font.clone(),
                        color: normal,
                        background: if on { hl_bg } else { Color32::TRANSPARENT },
                        ..Default::default()
                    }
                };
                for i in base..base + 16 {
                    match data.get(i) {
                        Some(b) => job.append(&format!("{b:02x} "), 0.0, fmt(i)),
                        None => job.append("   ", 0.0, fmt(usize::MAX)),
                    }
                }
                job.append(" ", 0.0, fmt(usize::MAX));
                for (i, &c) in data.iter().enumerate().skip(base).take(16) {
                    let ch = if (0x20..0x7f).contains(&c) {
                        c as char
                    } else {
                        '.'
                    };
                    job.append(&ch.to_string(), 0.0, fmt(i));
                }
                ui.add(egui::Label::new(job).wrap_mode(egui::TextWrapMode::Extend));
            }
        });
}

/// The time a `builtin_interfaces/Time` (`sec`, `nanosec`) or `google.protobuf.Timestamp`
/// (`seconds`, `nanos`) message holds, in ns since the epoch; `None` for other types, negative
/// or out-of-range times.
fn stamp_ns(t: &bagscope_reader::definition::msg::MsgType, fields: &[Node]) -> Option<u64> {
    let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
    if !matches!(names.as_slice(), ["sec", "nanosec"] | ["seconds", "nanos"]) {
        return None;
    }
    let secs = fields.first()?.value.as_f64()?;
    let nanos = fields.get(1)?.value.as_f64()?;
    if !(0.0..1e10).contains(&secs) || !(0.0..1e9).contains(&nanos) {
        return None;
    }
    Some(secs as u64 * 1_000_000_000 + nanos as u64)
}

/// `b` as text when it is UTF-8 without control characters (tabs and line ends allowed).
fn printable_text(b: &[u8]) -> Option<&str> {
    let t = std::str::from_utf8(b).ok()?;
    (!t.is_empty()
        && t.chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')))
    .then_some(t)
}

/// The runs of at least 4 printable characters in `data` (UTF-8 text, tabs and spaces
/// included), as `strings` finds them: the readable part of a message bagscope does not decode.
/// At most 200 runs.
fn text_runs(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in data.utf8_chunks() {
        let mut run = String::new();
        for ch in chunk.valid().chars().chain(std::iter::once('\0')) {
            if ch == '\t' || (!ch.is_control() && ch != '\u{fffd}') {
                run.push(ch);
            } else {
                if run.chars().count() >= 4 {
                    out.push(std::mem::take(&mut run));
                    if out.len() == 200 {
                        return out;
                    }
                }
                run.clear();
            }
        }
    }
    out
}

/// The inspector panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    ui.horizontal(|ui| {
        ui.heading("Inspector");
        ui.toggle_value(&mut d.insp.view.raw, "Raw bytes");
    });
    let Some(ti) = d.nav.selected else {
        ui.weak(
            "Select a topic in the tree or on the timeline to see its message at the playhead.",
        );
        return;
    };
    let s = d.rec.bag.summary();
    let topic = s.topics[ti].name.clone();
    if d.rec.indexed.is_none() {
        if d.rec.indexing() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Indexing: messages can be inspected once the tables are built.");
            });
        } else {
            ui.weak("The message tables were not built: reopen the bag to inspect messages.");
        }
        return;
    }
    let Some(key) = d.insp.key else {
        ui.weak(format!("No message of {topic} at or before the playhead."));
        return;
    };
    let Some(got) = &d.insp.shown else {
        ui.spinner();
        return;
    };
    let stale = got.key != key;
    let c = &s.connections[got.key.conn];
    let t = got.key.entry.time_ns;
    ui.label(egui::RichText::new(&topic).strong());
    ui.label(format!(
        "{} · +{:.6} s · {} UTC",
        c.datatype,
        (t - s.start_ns.unwrap_or(0)) as f64 / 1e9,
        timefmt::date(t)
    ));
    let nth = d
        .rec
        .times(ti)
        .map(|v| v.partition_point(|x| x < t))
        .unwrap_or(0);
    ui.weak(format!(
        "message {} of {} · connection {} · {} bytes{}",
        nth + 1,
        s.topics[ti].message_count,
        c.id,
        got.data.as_ref().map_or(0, |b| b.len()),
        if stale { " · loading…" } else { "" }
    ));
    ui.separator();
    let mut hovered = None;
    match (&got.decoded, &got.data) {
        (_, Err(e)) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Cannot read this message: {e}"),
            );
        }
        (Err(e), Ok(data)) => {
            if matches!(c.encoding.as_str(), "ros1" | "" | "cdr") {
                ui.colored_label(ui.visuals().error_fg_color, format!("Cannot decode: {e}"));
            } else {
                // Not a failure: an encoding bagscope does not decode (protobuf, json, ...).
                ui.label(format!(
                    "Encoding {}: not decoded (bagscope decodes ros1 and cdr). Its bytes:",
                    c.encoding
                ));
            }
            let text = text_runs(data);
            if !text.is_empty() {
                let runs = match text.len() {
                    1 => "one run".to_string(),
                    n => format!("{n} runs"),
                };
                egui::CollapsingHeader::new(format!("Text in it ({runs})"))
                    .id_salt("text-runs")
                    .default_open(true)
                    .show(ui, |ui| {
                        egui::ScrollArea::vertical()
                            .id_salt("text-runs-scroll")
                            .max_height(ui.available_height() * 0.5)
                            .show(ui, |ui| {
                                for t in &text {
                                    ui.add(
                                        egui::Label::new(egui::RichText::new(t).monospace()).wrap(),
                                    );
                                }
                            });
                    });
            }
            hex_view(ui, data, None);
        }
        (Ok((plan, node)), Ok(data)) => {
            let plan = std::sync::Arc::clone(plan);
            let mut cx = Ctx {
                plan: &plan,
                topic: &topic,
                hovered: None,
                cmds,
            };
            let raw = d.insp.view.raw;
            let tree_h = if raw {
                ui.available_height() * 0.55
            } else {
                ui.available_height()
            };
            if bagscope_ops::spatial::robot::joint_states::is_joint_state_type(&c.datatype) {
                joints(ui, &plan, node, &topic, cx.cmds);
            }
            egui::ScrollArea::both()
                .id_salt("inspector-tree")
                .max_height(tree_h)
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    if let Value::Message { ty, fields } = &node.value {
                        let tdef = &plan.def.types[*ty];
                        for (f, child) in tdef.fields.iter().zip(fields) {
                            let p = format!(".{}", f.name);
                            show_value(
                                ui,
                                &mut cx,
                                &mut d.insp.view,
                                &f.name,
                                Some(f),
                                Some(*ty),
                                child,
                                &p,
                                1,
                            );
                        }
                        if fields.is_empty() {
                            ui.weak("(a message with no fields)");
                        }
                        if !tdef.constants.is_empty() {
                            ui.collapsing("Constants", |ui| {
                                for k in &tdef.constants {
                                    ui.monospace(format!(
                                        "{} {} = {}",
                                        k.type_text, k.name, k.value
                                    ));
                                }
                            });
                        }
                    }
                });
            hovered = cx.hovered;
            if raw {
                ui.separator();
                hex_view(ui, data, hovered.or(d.insp.view.highlight));
            }
        }
    }
    if hovered.is_some() {
        d.insp.view.highlight = hovered;
    }
}

/// A joint state as a table: each joint's position (radians and degrees: a revolute joint's
/// angle; metres for a prismatic one), velocity and effort; a click on a position plots it.
fn joints(
    ui: &mut egui::Ui,
    plan: &bagscope_reader::encoding::Plan,
    node: &bagscope_reader::encoding::Node,
    topic: &str,
    cmds: &mut Vec<Cmd>,
) {
    let Some(list) = bagscope_ops::spatial::robot::joint_states::joint_state(&plan.def, node)
    else {
        return;
    };
    let num = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    egui::CollapsingHeader::new(format!("Joints ({})", list.len()))
        .id_salt("inspector-joints")
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("inspector-joints-scroll")
                .max_height(ui.available_height() * 0.4)
                .show(ui, |ui| {
                    egui::Grid::new("inspector-joints-grid")
                        .striped(true)
                        .show(ui, |ui| {
                            for h in ["joint", "position", "", "velocity", "effort"] {
                                ui.weak(h);
                            }
                            ui.end_row();
                            for (i, j) in list.iter().enumerate() {
                                ui.monospace(&j.name);
                                let pos = ui
                                    .add(
                                        egui::Label::new(
                                            egui::RichText::new(num(j.position)).monospace(),
                                        )
                                        .sense(egui::Sense::click()),
                                    )
                                    .on_hover_text(format!("Plot {topic}.position[{i}]"));
                                if pos.clicked() {
                                    cmds.push(Cmd::AddSeries(format!("{topic}.position[{i}]")));
                                }
                                ui.weak(
                                    j.position.map_or(String::new(), |v| {
                                        format!("{:.2}°", v.to_degrees())
                                    }),
                                );
                                ui.monospace(num(j.velocity));
                                ui.monospace(num(j.effort));
                                ui.end_row();
                            }
                        });
                });
        });
    ui.separator();
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_runs_are_the_printable_parts() {
        let mut data = vec![0x0a, 0x0c, 0x08, 0xe0, 0x93];
        data.extend_from_slice(b"{\"mmsi\": 209014000}");
        data.extend_from_slice(&[0x12, 0xff, 0xfe]);
        data.extend_from_slice("abc".as_bytes()); // too short
        data.push(0);
        data.extend_from_slice("Göteborg\thamn".as_bytes());
        assert_eq!(
            super::text_runs(&data),
            vec!["{\"mmsi\": 209014000}", "Göteborg\thamn"]
        );
        assert!(super::text_runs(&[1, 2, 3, 0xff]).is_empty());
        assert_eq!(super::printable_text(b"{\"a\": 1}\n"), Some("{\"a\": 1}\n"));
        assert_eq!(super::printable_text(&[0x7b, 0x00]), None);
        assert_eq!(super::printable_text(&[0xff]), None);
        assert_eq!(super::printable_text(b""), None);
    }

    #[test]
    fn stamps_of_ros2_and_protobuf_times() {
        use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType, MsgType, Primitive};
        use bagscope_reader::encoding::{Node, Value};
        let ty = |a: &str, b: &str, pa: Primitive, pb: Primitive| MsgType {
            name: "T".into(),
            fields: [(a, pa), (b, pb)]
                .map(|(n, p)| Field {
                    name: n.into(),
                    type_text: String::new(),
                    ty: FieldType::Primitive(p),
                    array: ArrayKind::Scalar,
                })
                .to_vec(),
            constants: vec![],
        };
        let node = |v| Node {
            value: v,
            start: 0,
            end: 0,
        };
        let ros2 = ty("sec", "nanosec", Primitive::I32, Primitive::U32);
        let pb = ty("seconds", "nanos", Primitive::I64, Primitive::I32);
        let f = [
            node(Value::I32(1_733_577_185)),
            node(Value::U32(365_708_409)),
        ];
        assert_eq!(super::stamp_ns(&ros2, &f), Some(1_733_577_185_365_708_409));
        let f = [node(Value::I64(1_733_577_185)), node(Value::I32(5))];
        assert_eq!(super::stamp_ns(&pb, &f), Some(1_733_577_185_000_000_005));
        let f = [node(Value::I64(-1)), node(Value::I32(5))];
        assert_eq!(super::stamp_ns(&pb, &f), None);
        let other = ty("x", "y", Primitive::F64, Primitive::F64);
        let f = [node(Value::F64(1.0)), node(Value::F64(2.0))];
        assert_eq!(super::stamp_ns(&other, &f), None);
        assert_eq!(super::text_runs(&b"ab ".repeat(1000)).len(), 1);
        assert_eq!(super::text_runs(&b"abcd\n".repeat(1000)).len(), 200);
    }
}
