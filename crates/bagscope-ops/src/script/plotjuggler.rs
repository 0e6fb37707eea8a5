//! PlotJuggler's custom functions: the `<customMathEquations>` of a layout and the
//! `<snippets>` of a snippet file, read as PlotJuggler reads them (`<global>` and `<function>`
//! trimmed, `<linked_source>`, `v1, v2, …` read until the first missing number, a source equal
//! to the linked source dropped from the call), and PlotJuggler's series names
//! (`/imu/data/linear_acceleration/x`) resolved against a recording's topics.
//!
//! Beyond PlotJuggler: the older `<linkedSource>` tag (which PlotJuggler 3 no longer reads) is
//! taken for the linked source. Snippets in another language (Python, the older JavaScript
//! `<equation>` form) are kept and said to be not run.

use bagscope_reader::expr::{Bound, MsgPath, Seg};
use bagscope_reader::Summary;

use super::series::{Dialect, SeriesScript};
use crate::xml::{self, El};

/// A snippet that is kept but not run.
#[derive(Debug, Clone, PartialEq)]
pub struct NotRun {
    /// Its name.
    pub name: String,
    /// Its language (`python`, `javascript`, …).
    pub language: String,
    /// Its text as written (global section, then function or equation).
    pub text: String,
}

/// The custom functions of a PlotJuggler file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// The Lua snippets, as series scripts whose sources are PlotJuggler series names (or other
    /// snippets' names).
    pub scripts: Vec<SeriesScript>,
    /// Snippets in a language bagscope does not run.
    pub not_run: Vec<NotRun>,
}

/// The text of `el`'s child `name`, trimmed.
fn text_of(el: &El, name: &str) -> Option<String> {
    el.child(name).map(|c| c.text.trim().to_string())
}

/// Reads the custom functions of a PlotJuggler layout (`<customMathEquations>`) or snippet file
/// (`<snippets>`).
pub fn read(text: &str) -> Result<Imported, String> {
    let root = xml::parse(text)?;
    let mut out = Imported::default();
    let holders: Vec<&El> = if root.name == "snippets" {
        vec![&root]
    } else {
        root.children_named("customMathEquations").collect()
    };
    for holder in holders {
        for s in holder.children_named("snippet") {
            let name = s.attr("name").unwrap_or("").to_string();
            let global = text_of(s, "global").unwrap_or_default();
            let language = s
                .attr("language")
                .map(str::to_ascii_lowercase)
                .unwrap_or_else(|| "lua".into());
            let function = text_of(s, "function");
            if let (Some(eq), None) = (text_of(s, "equation"), &function) {
                out.not_run.push(NotRun {
                    name,
                    language: "javascript (PlotJuggler 2's <equation>)".into(),
                    text: format!("{global}\n{eq}"),
                });
                continue;
            }
            let function = function.unwrap_or_default();
            if language != "lua" {
                out.not_run.push(NotRun {
                    name,
                    language,
                    text: format!("{global}\n{function}"),
                });
                continue;
            }
            let linked = text_of(s, "linked_source")
                .filter(|l| !l.is_empty())
                .or_else(|| text_of(s, "linkedSource"))
                .unwrap_or_default();
            let mut additional = Vec::new();
            if let Some(a) = s.child("additional_sources") {
                for i in 1.. {
                    match a.child(&format!("v{i}")) {
                        Some(v) => additional.push(v.text.trim().to_string()),
                        None => break,
                    }
                }
            }
            additional.retain(|a| *a != linked);
            out.scripts.push(SeriesScript {
                name,
                global,
                function: Some(function),
                linked,
                additional,
                dialect: Dialect::PlotJuggler,
            });
        }
    }
    Ok(out)
}

/// A PlotJuggler series name as a path of `summary`'s topics: the longest topic that starts it
/// (followed by `/`), then its fields (`/js/position/2`, `/js/position.2` and
/// `/js/position[2]` all index). A name that is a topic itself is its `data` field (a
/// `std_msgs` number, as a CSV column or a log's field is in a recording).
pub fn path(name: &str, summary: &Summary) -> Option<MsgPath> {
    if summary.topic(name).is_some() {
        return Some(MsgPath {
            topic: name.to_string(),
            segs: vec![field("data")],
            mods: Vec::new(),
            at: 0,
            end: 0,
        });
    }
    let topic = summary
        .topics
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| name.strip_prefix(t).is_some_and(|r| r.starts_with('/')))
        .max_by_key(|t| t.len())?;
    let mut segs = Vec::new();
    for seg in name[topic.len() + 1..].split('/') {
        if let Ok(i) = seg.parse::<i64>() {
            segs.push(index(i));
            continue;
        }
        // `position.2` and `position[2]`: an index written after the field.
        if let Some((f, i)) = seg
            .rsplit_once('.')
            .and_then(|(f, i)| Some((f, i.parse().ok()?)))
        {
            segs.push(field(f));
            segs.push(index(i));
            continue;
        }
        if let Some((f, i)) = seg
            .strip_suffix(']')
            .and_then(|s| s.rsplit_once('['))
            .and_then(|(f, i)| Some((f, i.parse().ok()?)))
        {
            segs.push(field(f));
            segs.push(index(i));
            continue;
        }
        segs.push(field(seg));
    }
    Some(MsgPath {
        topic: topic.to_string(),
        segs,
        mods: Vec::new(),
        at: 0,
        end: 0,
    })
}

/// [`path`] as the text of a bagscope path (`/imu/data.linear_acceleration.x`,
/// `/js.position[2]`; a topic or field that is not a plain name written in quotes).
pub fn path_text(name: &str, summary: &Summary) -> Option<String> {
    let p = path(name, summary)?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
    };
    let quoted = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = if p.topic.starts_with('/') && plain(&p.topic) {
        p.topic.clone()
    } else {
        quoted(&p.topic)
    };
    for seg in &p.segs {
        match seg {
            Seg::Field { name, .. } if plain(name) && !name.contains('/') => {
                out.push('.');
                out.push_str(name);
            }
            Seg::Field { name, .. } => {
                out.push('.');
                out.push_str(&quoted(name));
            }
            Seg::Slice {
                start: Bound::Int(i),
                ..
            } => out.push_str(&format!("[{i}]")),
            _ => return None,
        }
    }
    Some(out)
}

fn field(name: &str) -> Seg {
    Seg::Field {
        name: name.to_string(),
        at: 0,
    }
}

fn index(i: i64) -> Seg {
    Seg::Slice {
        start: Bound::Int(i),
        end: Bound::Int(i),
        single: true,
        at: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(topics: &[&str]) -> Summary {
        let mut s = Summary::default();
        for t in topics {
            s.topics.push(bagscope_reader::storage::Topic {
                name: (*t).into(),
                datatype: String::new(),
                connections: Vec::new(),
                message_count: 0,
            });
        }
        s
    }

    #[test]
    fn snippets_are_read_as_plotjuggler_reads_them() {
        let xml = "<root><customMathEquations>\
  <snippet name=\"a\"><global>\n k = 1 \n</global><function>\nreturn value &lt; k\n</function>\
   <linked_source>/x/v</linked_source>\
   <additional_sources><v1>/y/v</v1><v2>/x/v</v2><v3>/z/v</v3><v5>/w/v</v5></additional_sources></snippet>\
  <snippet name=\"old\"><global/><function>return value</function><linkedSource>/x/v</linkedSource></snippet>\
  <snippet name=\"py\" language=\"Python\"><global/><function>return value</function><linked_source>/x/v</linked_source></snippet>\
  <snippet name=\"js\"><global/><equation>$$/x/v$$ * 2</equation><linkedPlot>/x/v</linkedPlot></snippet>\
</customMathEquations></root>";
        let r = read(xml).unwrap();
        assert_eq!(r.scripts.len(), 2);
        let a = &r.scripts[0];
        assert_eq!(
            (a.global.as_str(), a.function.as_deref()),
            ("k = 1", Some("return value < k"))
        );
        // v2 is the linked source (dropped); v4 is missing, so v5 is not read.
        assert_eq!(a.additional, ["/y/v", "/z/v"]);
        assert_eq!(r.scripts[1].linked, "/x/v");
        let langs: Vec<(&str, &str)> = r
            .not_run
            .iter()
            .map(|n| (n.name.as_str(), n.language.as_str()))
            .collect();
        assert_eq!(langs[0], ("py", "python"));
        assert_eq!(langs[1].0, "js");
    }

    #[test]
    fn series_names_become_paths() {
        let s = summary(&["/imu", "/imu/data", "/js", "/GPS/#0", "col"]);
        let p = path("/imu/data/linear_acceleration/x", &s).unwrap();
        assert_eq!(p.topic, "/imu/data");
        assert_eq!(p.segs, [field("linear_acceleration"), field("x")]);
        for n in ["/js/position/2", "/js/position.2", "/js/position[2]"] {
            assert_eq!(
                path(n, &s).unwrap().segs,
                [field("position"), index(2)],
                "{n}"
            );
        }
        assert_eq!(
            path("/GPS/#0/Alt\t[m]", &s).unwrap().segs,
            [field("Alt\t[m]")]
        );
        assert_eq!(path("col", &s).unwrap().segs, [field("data")]);
        // As text that parses back to the same path.
        for n in [
            "/imu/data/linear_acceleration/x",
            "/js/position.2",
            "/GPS/#0/Alt\t[m]",
            "col",
        ] {
            let text = path_text(n, &s).unwrap();
            let back = bagscope_reader::expr::parse_path(&text).unwrap();
            let want = path(n, &s).unwrap();
            assert_eq!(
                (back.topic, back.segs.len()),
                (want.topic, want.segs.len()),
                "{text}"
            );
        }
        assert_eq!(path_text("/js/position[2]", &s).unwrap(), "/js.position[2]");
        assert!(path("/gone/x", &s).is_none());
    }
}
