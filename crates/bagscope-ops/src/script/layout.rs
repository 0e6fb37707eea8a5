//! What a layout plots, as columns: a PlotJuggler layout's curves and custom functions, a
//! Lichtblick/Foxglove layout's plot paths (its user scripts, TypeScript, listed as not run),
//! bagscope's layout's series and scripts. What `bagscope csv --layout` writes.

use bagscope_reader::expr::{Expr, Node};
use bagscope_reader::Summary;
use serde_json::Value;

use super::plotjuggler::{self, NotRun};
use super::series::SeriesScript;
use crate::xml::{self, El};

/// A column of a layout.
#[derive(Debug, Clone, PartialEq)]
pub enum Plot {
    /// An expression of the recording.
    Expr(Expr),
    /// A series a script makes, by name.
    Script(String),
}

/// What a layout plots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plotted {
    /// Its columns, in the layout's order, headed as in the layout; custom series it does not
    /// plot come last.
    pub columns: Vec<(String, Plot)>,
    /// Its scripts.
    pub scripts: Vec<SeriesScript>,
    /// Scripts it holds that are not run (Python, JavaScript, TypeScript).
    pub not_run: Vec<NotRun>,
    /// What did not come across.
    pub notes: Vec<String>,
}

impl Plotted {
    fn push(&mut self, name: &str, p: Plot) {
        if !self.columns.iter().any(|(n, _)| n == name) {
            self.columns.push((name.to_string(), p));
        }
    }

    /// A column for every script's series not plotted yet.
    fn add_scripts(&mut self) {
        let names: Vec<String> = self.scripts.iter().map(|s| s.name.clone()).collect();
        for (k, n) in names.into_iter().enumerate() {
            let one = &self.scripts[k..=k];
            let plotted = self.columns.iter().any(|(_, p)| match p {
                Plot::Script(s) => super::makes(one, s),
                Plot::Expr(_) => false,
            });
            if !plotted {
                self.push(&n, Plot::Script(n.clone()));
            }
        }
    }
}

/// The `name` of every `<curve>`, in document order.
fn curves<'a>(el: &'a El, out: &mut Vec<&'a str>) {
    if el.name == "curve" {
        if let Some(n) = el.attr("name") {
            out.push(n);
        }
    }
    for c in &el.children {
        curves(c, out);
    }
}

/// Reads what a layout (PlotJuggler XML, Lichtblick/Foxglove JSON, bagscope JSON) plots;
/// PlotJuggler's series names are resolved against `summary`'s topics.
pub fn read(text: &str, summary: &Summary) -> Result<Plotted, String> {
    let t = text.trim_start();
    let mut out = Plotted::default();
    if t.starts_with('<') {
        let imported = plotjuggler::read(t)?;
        out.scripts = imported.scripts;
        out.not_run = imported.not_run;
        let root = xml::parse(t)?;
        let mut names = Vec::new();
        curves(&root, &mut names);
        for n in names {
            if out.scripts.iter().any(|s| s.name == n) {
                out.push(n, Plot::Script(n.to_string()));
            } else if out.not_run.iter().any(|s| s.name == n) {
                // Said with the scripts not run.
            } else if let Some(p) = plotjuggler::path(n, summary) {
                let e = Expr {
                    text: n.to_string(),
                    root: Node::Path(p),
                };
                out.push(n, Plot::Expr(e));
            } else {
                out.notes.push(format!(
                    "{n:?}: no topic of this recording starts it (left out)"
                ));
            }
        }
        out.add_scripts();
        return Ok(out);
    }
    let v: Value = serde_json::from_str(t).map_err(|e| format!("not a layout: {e}"))?;
    let paths: Vec<String> = if v.get("bagscope_layout").is_some() {
        for s in v
            .get("scripts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.scripts.push(SeriesScript::from_json(s)?);
        }
        v.get("series")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    } else if let Some(panels) = v.get("configById").and_then(Value::as_object) {
        out.not_run = lichtblick_scripts(&v);
        let mut paths = Vec::new();
        for (id, cfg) in panels {
            if matches!(id.split('!').next(), Some("Plot" | "StateTransitions")) {
                for p in cfg
                    .get("paths")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(s) = p
                        .get("value")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                    {
                        paths.push(s.to_string());
                    }
                }
            }
        }
        paths
    } else {
        return Err("not a layout bagscope reads: bagscope's JSON, a Lichtblick/Foxglove layout or a PlotJuggler XML".into());
    };
    for p in paths {
        if out.scripts.iter().any(|s| s.name == p) {
            out.push(&p, Plot::Script(p.clone()));
            continue;
        }
        match Expr::parse(&p) {
            Ok(e) => out.push(&p, Plot::Expr(e)),
            Err(e) => out.notes.push(format!("{p:?}: {e} (left out)")),
        }
    }
    out.add_scripts();
    Ok(out)
}

/// A Lichtblick/Foxglove layout's user scripts (`userNodes`), kept and not run.
pub fn lichtblick_scripts(layout: &Value) -> Vec<NotRun> {
    layout
        .get("userNodes")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(id, n)| NotRun {
            name: n
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| id.clone(), str::to_string),
            language: "typescript (a Lichtblick/Foxglove user script)".into(),
            text: n
                .get("sourceCode")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
        .collect()
}

/// The message scripts of a bagscope layout (its `message_scripts`: `{topic, type, inputs,
/// code}`): the virtual topics its recording is opened with. Other layouts have none.
pub fn message_scripts(text: &str) -> Result<Vec<super::message::MessageScript>, String> {
    let t = text.trim_start();
    if t.starts_with('<') {
        return Ok(Vec::new());
    }
    let v: Value = serde_json::from_str(t).map_err(|e| format!("not a layout: {e}"))?;
    let mut out = Vec::new();
    for (k, s) in v
        .get("message_scripts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let text = |key: &str| -> Result<String, String> {
            s.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("message_scripts[{k}]: {key}: a string"))
        };
        let (topic, output_type) = (text("topic")?, text("type")?);
        let inputs = s
            .get("inputs")
            .and_then(Value::as_array)
            .map(|v| v.iter().map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or(None)
            .ok_or_else(|| format!("message_scripts[{k}]: inputs: a list of topics"))?;
        out.push(super::message::MessageScript {
            topic,
            output_type,
            inputs,
            code: text("code")?,
        });
    }
    Ok(out)
}
