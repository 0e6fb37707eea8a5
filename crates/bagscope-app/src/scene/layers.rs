//! The 3D panel's layer list: each layer's topic, colour, size, decay and what it says, the
//! fixed frame and the TF tree's settings.

use egui::Color32;

use bagscope_ops::spatial::scene::{Kind, Layer};

use super::{auto_axes, rgba, ScenePanel};

pub(super) fn layers(
    ui: &mut egui::Ui,
    p: &mut ScenePanel,
    topics: &[(String, String)],
    frames: &[String],
) {
    let status = p
        .scene
        .as_ref()
        .map(|s| s.status.clone())
        .unwrap_or_default();
    let mut remove = None;
    for (i, l) in p.settings.layers.iter_mut().enumerate() {
        let st = status.get(i);
        ui.horizontal(|ui| {
            let mut c = rgba(l.color);
            if ui.color_edit_button_srgba(&mut c).changed() {
                l.color = c.to_srgba_unmultiplied();
            }
            ui.checkbox(&mut l.visible, egui::RichText::new(&l.topic).strong())
                .on_hover_text(format!("{:?}: drawn or not", l.kind));
            if ui
                .small_button("x")
                .on_hover_text("Remove this layer")
                .clicked()
            {
                remove = Some(i);
            }
        });
        ui.indent(("layer", i), |ui| {
            if let Some(st) = st {
                if !st.text.is_empty() {
                    ui.weak(&st.text);
                }
                for pr in &st.problems {
                    ui.colored_label(Color32::from_rgb(240, 170, 60), pr);
                }
            }
            if l.kind.is_points() {
                ui.horizontal(|ui| {
                    let label = ui.label("Colour");
                    let fields: Vec<String> = st.map(|s| s.fields.clone()).unwrap_or_default();
                    egui::ComboBox::from_id_salt(("paint", i))
                        .selected_text(if l.paint.is_empty() { "flat" } else { &l.paint })
                        .show_ui(ui, |ui| {
                            ui.selectable_value(&mut l.paint, String::new(), "flat");
                            for f in ["x", "y", "z"] {
                                ui.selectable_value(&mut l.paint, f.to_string(), f);
                            }
                            if l.kind == Kind::Scan {
                                ui.selectable_value(
                                    &mut l.paint,
                                    "value".to_string(),
                                    "intensity (or range)",
                                );
                            }
                            for f in fields
                                .iter()
                                .filter(|f| !["x", "y", "z"].contains(&f.as_str()))
                            {
                                ui.selectable_value(&mut l.paint, f.clone(), f);
                            }
                        })
                        .response
                        .labelled_by(label.id);
                    if let Some((lo, hi)) = st.and_then(|s| s.range) {
                        ui.weak(format!("{lo:.2} … {hi:.2}"));
                    }
                });
                ui.horizontal(|ui| {
                    let label = ui.label("Size");
                    ui.add(
                        egui::DragValue::new(&mut l.point_size)
                            .range(1.0..=20.0)
                            .suffix(" px"),
                    )
                    .labelled_by(label.id);
                });
            }
            if l.kind != Kind::Map {
                ui.horizontal(|ui| {
                    let label = ui.label("Decay");
                    ui.add(
                        egui::DragValue::new(&mut l.decay_s)
                            .range(0.0..=600.0)
                            .speed(0.1)
                            .suffix(" s"),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Keep the messages of the last this many seconds (0: the latest only)",
                    );
                });
            }
        });
    }
    if let Some(i) = remove {
        p.settings.layers.remove(i);
    }
    let missing: Vec<&(String, String)> = topics
        .iter()
        .filter(|(t, _)| !p.settings.layers.iter().any(|l| l.topic == *t))
        .collect();
    if !missing.is_empty() {
        ui.menu_button("Add layer", |ui| {
            for (t, ty) in missing {
                if ui.button(format!("{t}  ({ty})")).clicked() {
                    if let Some(k) = Kind::of(ty) {
                        let n = p.settings.layers.len();
                        p.settings.layers.push(Layer::new(t, k, n));
                    }
                }
            }
        });
    }
    ui.separator();
    ui.strong("TF");
    let f = &mut p.settings.frames;
    ui.horizontal(|ui| {
        ui.checkbox(&mut f.axes, "axes");
        ui.checkbox(&mut f.names, "names");
        ui.checkbox(&mut f.links, "links");
    });
    // Which frames: all, or those ticked.
    let shown = if f.only.is_empty() {
        "all frames".to_string()
    } else {
        format!("{} of {} frames", f.only.len(), frames.len())
    };
    ui.menu_button(shown, |ui| {
        if ui.button("All").clicked() {
            f.only.clear();
        }
        for n in frames {
            let mut on = f.only.is_empty() || f.only.contains(n);
            if ui.checkbox(&mut on, n).changed() {
                if f.only.is_empty() {
                    f.only = frames.to_vec();
                }
                if on {
                    f.only.push(n.clone());
                } else {
                    f.only.retain(|x| x != n);
                }
                f.only.sort();
                f.only.dedup();
                if f.only.len() == frames.len() {
                    f.only.clear();
                }
            }
        }
    })
    .response
    .on_hover_text("The frames drawn (axes, names, links)");
    ui.horizontal(|ui| {
        ui.label("Axes");
        ui.checkbox(&mut p.settings.axes_auto, "auto")
            .on_hover_text("Their length follows the view as you zoom");
        if p.settings.axes_auto {
            f.size = auto_axes(p.settings.camera.dist);
        }
        ui.add_enabled(
            !p.settings.axes_auto,
            egui::DragValue::new(&mut f.size)
                .range(0.05..=10.0)
                .speed(0.02)
                .suffix(" m"),
        );
    });
    ui.horizontal(|ui| {
        let label = ui.label("Trail of");
        egui::ComboBox::from_id_salt(("trail", p.id))
            .selected_text(if f.trail.is_empty() {
                "(none)"
            } else {
                &f.trail
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut f.trail, String::new(), "(none)");
                for n in frames {
                    ui.selectable_value(&mut f.trail, n.clone(), n);
                }
            })
            .response
            .labelled_by(label.id);
    });
    if let Some(s) = &p.scene {
        ui.weak(&s.frames_status.text);
        for pr in &s.frames_status.problems {
            ui.colored_label(Color32::from_rgb(240, 170, 60), pr);
        }
    }
    let robot = p
        .scene
        .as_ref()
        .map(|s| &s.robot_status)
        .filter(|r| !r.text.is_empty() || !r.problems.is_empty());
    if robot.is_some() || !f.robot {
        ui.separator();
        ui.horizontal(|ui| {
            ui.strong("Robot");
            ui.checkbox(&mut f.robot, "model")
                .on_hover_text("The URDF's links drawn at their frames");
            ui.add_enabled(f.robot, egui::Checkbox::new(&mut f.collision, "collision"))
                .on_hover_text("Its collision geometry rather than its visual");
        });
        if let Some(r) = robot.filter(|_| f.robot) {
            ui.weak(&r.text).on_hover_text(format!("from {}", r.topic));
            for pr in &r.problems {
                ui.colored_label(Color32::from_rgb(240, 170, 60), pr);
            }
        }
    }
    ui.horizontal(|ui| {
        ui.label("Grid");
        ui.add(
            egui::DragValue::new(&mut p.settings.grid)
                .range(0..=500)
                .suffix(" m"),
        );
    });
    if let Some(s) = &p.scene {
        ui.separator();
        ui.weak(format!(
            "{} points · {} lines · {} triangles · built in {:.1} ms",
            s.point_count(),
            s.line_a.len(),
            s.triangle_count(),
            s.build_ms
        ));
    }
}
