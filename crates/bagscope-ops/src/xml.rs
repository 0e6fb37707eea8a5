//! A small element tree over quick-xml's events: names, attributes, children and text with the
//! line each element starts on (the predefined entities and character references in text
//! resolved), bounded in count and depth (comments are not kept).

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Elements at most.
const MAX_ELEMENTS: usize = 1 << 20;
/// Nesting at most.
const MAX_DEPTH: usize = 128;

/// An element.
#[derive(Debug, Default)]
pub(crate) struct El {
    pub(crate) name: String,
    pub(crate) attrs: Vec<(String, String)>,
    pub(crate) children: Vec<El>,
    /// Its text (and CDATA), trimmed of nothing.
    pub(crate) text: String,
    /// `line N`.
    pub(crate) at: String,
}

impl El {
    pub(crate) fn attr(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn child(&self, name: &str) -> Option<&El> {
        self.children.iter().find(|c| c.name == name)
    }

    pub(crate) fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a El> {
        self.children.iter().filter(move |c| c.name == name)
    }
}

fn line_of(text: &str, pos: u64) -> usize {
    Lines::default().at(text, pos)
}

/// Line numbers of positions met in order: each byte counted once, not once an element.
#[derive(Default)]
struct Lines {
    pos: usize,
    line: usize,
}

impl Lines {
    fn at(&mut self, text: &str, pos: u64) -> usize {
        let pos = (pos as usize).min(text.len());
        if pos < self.pos {
            *self = Lines::default();
        }
        self.line += text.as_bytes()[self.pos..pos]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.pos = pos;
        self.line + 1
    }
}

fn element(lines: &mut Lines, text: &str, e: &BytesStart<'_>, pos: u64) -> Result<El, String> {
    let at = format!("line {}", lines.at(text, pos));
    let name = e.local_name().into_inner().to_string();
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| format!("{at}: {err}"))?;
        let v = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|err| format!("{at}: {err}"))?;
        attrs.push((a.key.local_name().into_inner().to_string(), v.into_owned()));
    }
    Ok(El {
        name,
        attrs,
        children: Vec::new(),
        text: String::new(),
        at,
    })
}

/// The document's root element.
pub(crate) fn parse(text: &str) -> Result<El, String> {
    let mut r = Reader::from_str(text);
    let mut stack: Vec<El> = Vec::new();
    let mut root: Option<El> = None;
    let mut count = 0usize;
    let mut lines = Lines::default();
    loop {
        let pos = r.buffer_position();
        let ev = r
            .read_event()
            .map_err(|e| format!("not XML at line {}: {e}", line_of(text, r.error_position())))?;
        let done = |el: El, stack: &mut Vec<El>, root: &mut Option<El>| match stack.last_mut() {
            Some(p) => p.children.push(el),
            None => {
                if root.is_none() {
                    *root = Some(el);
                }
            }
        };
        match ev {
            Event::Start(_) | Event::Empty(_) if count >= MAX_ELEMENTS => {
                return Err(format!("more than {MAX_ELEMENTS} elements"));
            }
            Event::Start(e) => {
                count += 1;
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "nested more than {MAX_DEPTH} deep at line {}",
                        lines.at(text, pos)
                    ));
                }
                stack.push(element(&mut lines, text, &e, pos)?);
            }
            Event::Empty(e) => {
                count += 1;
                let el = element(&mut lines, text, &e, pos)?;
                done(el, &mut stack, &mut root);
            }
            Event::End(_) => {
                if let Some(el) = stack.pop() {
                    done(el, &mut stack, &mut root);
                }
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(top) = stack.last_mut() {
                    let c = match r.resolve_char_ref() {
                        Ok(Some(c)) => c,
                        _ => match &*r.xml10_content() {
                            "lt" => '<',
                            "gt" => '>',
                            "amp" => '&',
                            "apos" => '\'',
                            "quot" => '"',
                            other => {
                                return Err(format!(
                                    "an entity &{other}; at line {} that XML does not define",
                                    lines.at(text, pos)
                                ))
                            }
                        },
                    };
                    top.text.push(c);
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!("<{}> at {} is not closed", open.name, open.at));
    }
    root.ok_or_else(|| "no element".to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn entities_in_text_are_resolved() {
        let el = super::parse("<a>if x &lt; 1 &amp;&amp; y &gt; 2 then&#10;&#x41;</a>").unwrap();
        assert_eq!(el.text, "if x < 1 && y > 2 then\nA");
        assert!(super::parse("<a>&nope;</a>")
            .unwrap_err()
            .contains("&nope;"));
    }
}
