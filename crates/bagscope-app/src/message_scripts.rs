//! The Scripts window's message scripts: the virtual topics the recording is opened with (a
//! layout's, `--script` files'), each edited as its topic, type, input topics and Lua code.
//! Apply hands the whole set to the loader, which opens the recording again with them on its
//! worker (the virtual topics made once, into bagscope's cache) and shows the same panels; a
//! script that is wrong (an input the recording lacks, a type bagscope does not know, Lua
//! that does not parse, a table that does not fit its type) comes back as its error, shown at
//! its line, and the recording opens without the set. Nothing runs on the UI thread.

use egui::{Color32, RichText, TextEdit};

use bagscope_ops::script::message::MessageScript;

use super::{Cmd, Doc};

/// The message script being edited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Editing {
    /// An index into the recording's message scripts, or a new one.
    pub selected: Option<usize>,
    /// The text being edited.
    pub draft: Draft,
}

/// A message script as edited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    pub topic: String,
    pub output_type: String,
    /// The input topics, one a line.
    pub inputs: String,
    pub code: String,
}

impl Draft {
    fn of(s: &MessageScript) -> Draft {
        Draft {
            topic: s.topic.clone(),
            output_type: s.output_type.clone(),
            inputs: s.inputs.join("\n"),
            code: s.code.clone(),
        }
    }

    /// The script it makes.
    pub fn script(&self) -> MessageScript {
        MessageScript {
            topic: self.topic.trim().to_string(),
            output_type: self.output_type.trim().to_string(),
            inputs: self
                .inputs
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
            code: self.code.clone(),
        }
    }
}

/// What a new script starts as: a function that makes no message yet.
const NEW_CODE: &str = "function message(topic, msg, time)\n  return nil\nend\n";

/// The set with the draft applied (replacing script `at`, or added), or why not (said before
/// anything is handed to the loader: what needs no recording to know).
pub fn with_draft(
    all: &[MessageScript],
    at: Option<usize>,
    s: MessageScript,
) -> Result<Vec<MessageScript>, String> {
    if !s.topic.starts_with('/') || s.topic.len() < 2 {
        return Err("the topic it makes: a name starting with /".into());
    }
    if s.output_type.is_empty() {
        return Err("its type: a ROS 2 message type (visualization_msgs/msg/MarkerArray)".into());
    }
    if s.inputs.is_empty() {
        return Err("its inputs: one topic a line, at least one".into());
    }
    if all
        .iter()
        .enumerate()
        .any(|(i, x)| x.topic == s.topic && Some(i) != at)
    {
        return Err(format!("another script makes {}", s.topic));
    }
    let mut out = all.to_vec();
    match at.filter(|&i| i < out.len()) {
        Some(i) => out[i] = s,
        None => out.push(s),
    }
    Ok(out)
}

/// A recording just opened with the message scripts asked for (`d.scripts.messages`): what
/// they came to (`errors`: it opened without them), and the window shown on script `show`
/// (their Apply).
pub fn opened(
    d: &mut Doc,
    errors: Vec<bagscope_ops::script::ScriptError>,
    show: Option<Option<usize>>,
) {
    let failed = !errors.is_empty();
    d.scripts.message_errors = errors;
    if let Some(at) = show.or(failed.then_some(None)) {
        d.scripts.open = true;
        d.scripts.messages_tab = true;
        let at = at.filter(|&i| i < d.scripts.messages.len());
        d.scripts.message = Editing {
            selected: at,
            draft: at
                .map(|i| Draft::of(&d.scripts.messages[i]))
                .unwrap_or_default(),
        };
    }
}

/// The message scripts' part of the Scripts window.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let red = Color32::from_rgb(252, 129, 129);
    let st = &mut d.scripts;
    if st.message.selected.is_none() && st.message.draft == Draft::default() {
        if let Some(first) = st.messages.first() {
            st.message = Editing {
                selected: Some(0),
                draft: Draft::of(first),
            };
        }
    }
    ui.horizontal_wrapped(|ui| {
        for (i, s) in st.messages.iter().enumerate() {
            if ui
                .selectable_label(st.message.selected == Some(i), &s.topic)
                .clicked()
            {
                st.message = Editing {
                    selected: Some(i),
                    draft: Draft::of(s),
                };
            }
        }
        if ui.button("New").clicked() {
            st.message = Editing {
                selected: None,
                draft: Draft {
                    code: NEW_CODE.into(),
                    ..Default::default()
                },
            };
        }
    });
    ui.separator();
    let was = st
        .message
        .selected
        .and_then(|i| st.messages.get(i))
        .cloned();
    let draft = &mut st.message.draft;
    egui::Grid::new("message-script-head")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("Topic");
            ui.add(
                TextEdit::singleline(&mut draft.topic)
                    .id_salt("message-script-topic")
                    .hint_text("/odom_marker")
                    .desired_width(420.0),
            );
            ui.end_row();
            ui.label("Type");
            ui.add(
                TextEdit::singleline(&mut draft.output_type)
                    .id_salt("message-script-type")
                    .hint_text("visualization_msgs/msg/MarkerArray")
                    .desired_width(420.0),
            );
            ui.end_row();
            ui.label("Inputs")
                .on_hover_text("One topic a line: their messages, in time order, are the calls");
            ui.add(
                TextEdit::multiline(&mut draft.inputs)
                    .id_salt("message-script-inputs")
                    .code_editor()
                    .desired_rows(2)
                    .desired_width(420.0),
            );
            ui.end_row();
        });
    // The error of this script (by its topic) from the last opening, at its line.
    let error = st
        .message_errors
        .iter()
        .find(|e| e.script == draft.topic.trim())
        .or(st.message_errors.first());
    let bad = error
        .filter(|e| e.script == draft.topic.trim())
        .and_then(|e| e.line);
    ui.label("Code: message(topic, msg, time) returns a table of the type, or nil");
    super::scripts::editor(ui, "message-script-code", &mut draft.code, bad);
    if let Some(e) = error {
        ui.label(RichText::new(e.to_string()).color(red));
    }
    if let Some(e) = &st.message_apply_error {
        ui.label(RichText::new(e).color(red));
    }
    ui.horizontal(|ui| {
        if ui
            .button("Apply")
            .on_hover_text("Opens the recording again with the virtual topics (made on a worker)")
            .clicked()
        {
            match with_draft(&st.messages, st.message.selected, st.message.draft.script()) {
                Ok(all) => {
                    st.message_apply_error = None;
                    cmds.push(Cmd::ApplyMessageScripts(all, st.message.selected));
                }
                Err(e) => st.message_apply_error = Some(e),
            }
        }
        let changed = was
            .as_ref()
            .is_some_and(|w| Draft::of(w) != st.message.draft);
        if ui
            .add_enabled(changed, egui::Button::new("Revert"))
            .clicked()
        {
            if let Some(w) = &was {
                st.message.draft = Draft::of(w);
            }
        }
        if let Some(i) = st.message.selected {
            if ui
                .button("Remove")
                .on_hover_text("Opens the recording again without this virtual topic")
                .clicked()
            {
                let mut all = st.messages.clone();
                if i < all.len() {
                    all.remove(i);
                }
                cmds.push(Cmd::ApplyMessageScripts(all, None));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(topic: &str) -> MessageScript {
        MessageScript {
            topic: topic.into(),
            output_type: "std_msgs/msg/Float64".into(),
            inputs: vec!["/odom".into()],
            code: NEW_CODE.into(),
        }
    }

    #[test]
    fn a_draft_replaces_its_script_or_is_added() {
        let all = vec![script("/a"), script("/b")];
        let d = Draft::of(&script("/c"));
        assert_eq!(d.script(), script("/c"));
        let added = with_draft(&all, None, d.script()).unwrap();
        assert_eq!(added.len(), 3);
        let replaced = with_draft(&all, Some(1), script("/c")).unwrap();
        assert_eq!(replaced[1].topic, "/c");
        assert!(with_draft(&all, None, script("/a"))
            .unwrap_err()
            .contains("another script makes /a"));
        assert!(with_draft(&all, None, script("odom")).is_err());
        let mut no_inputs = script("/d");
        no_inputs.inputs.clear();
        assert!(with_draft(&all, None, no_inputs).is_err());
    }
}
