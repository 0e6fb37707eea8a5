//! bagscope's own forms of a series script:
//!
//! - a **script file** (`.lua`): a header of comments naming the series and its sources, then
//!   Lua run once that defines `calc(time, value, v1, …)`:
//!
//!   ```lua
//!   -- name: yaw
//!   -- source: /imu.orientation.w
//!   -- source: /imu.orientation.x, /imu.orientation.y, /imu.orientation.z
//!   function calc(time, w, x, y, z)
//!     return math.atan(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
//!   end
//!   ```
//!
//! - an **inline snippet** (`NAME(SOURCE, …) = BODY`, as `--lua` takes it): the body of a
//!   PlotJuggler function (`time`, `value`, `v1…`): `kmh(/odom.twist.twist.linear.x) = return
//!   value * 3.6`.
//!
//! The first source is the main series (its samples drive the calls), the others are aligned on
//! it (nearest sample). A source is an expression of the recording or another script's name.

use super::series::{Dialect, SeriesScript};

/// Splits `text` at commas outside brackets and quotes.
fn split_top(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Reads a script file; `stem` names it when its header does not. Errors say the line.
pub fn read_file(text: &str, stem: &str) -> Result<SeriesScript, String> {
    let mut name = None;
    let mut sources = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("#!") {
            continue;
        }
        let Some(c) = t.strip_prefix("--") else { break };
        let c = c.trim();
        if let Some(n) = c.strip_prefix("name:") {
            let n = n.trim();
            if n.is_empty() {
                return Err(format!("line {}: `-- name:` gives no name", i + 1));
            }
            name = Some(n.to_string());
        } else if let Some(s) = c
            .strip_prefix("source:")
            .or_else(|| c.strip_prefix("sources:"))
        {
            let more = split_top(s);
            if more.is_empty() {
                return Err(format!("line {}: `-- source:` names no source", i + 1));
            }
            sources.extend(more);
        }
    }
    if sources.is_empty() {
        return Err(
            "names no source: start it with `-- source: /topic.field` (the main series), then more sources"
                .into(),
        );
    }
    let linked = sources.remove(0);
    Ok(SeriesScript {
        name: name.unwrap_or_else(|| stem.to_string()),
        global: text.to_string(),
        function: None,
        linked,
        additional: sources,
        dialect: Dialect::Bagscope,
    })
}

/// Reads an inline snippet, `NAME(SOURCE, …) = BODY`.
pub fn read_inline(text: &str) -> Result<SeriesScript, String> {
    let want = "an inline script is NAME(SOURCE, ...) = BODY, e.g. `kmh(/odom.twist.twist.linear.x) = return value * 3.6`";
    let open = text.find('(').ok_or_else(|| want.to_string())?;
    let name = text[..open].trim();
    if name.is_empty() {
        return Err(format!("no name: {want}"));
    }
    // The closing parenthesis of the sources.
    let mut depth = 0;
    let mut close = None;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| format!("the sources' `(` is not closed: {want}"))?;
    let mut sources = split_top(&text[open + 1..close]);
    let body = text[close + 1..]
        .trim_start()
        .strip_prefix('=')
        .ok_or_else(|| format!("no `=` after the sources: {want}"))?
        .trim();
    if sources.is_empty() {
        return Err(format!("no source: {want}"));
    }
    let linked = sources.remove(0);
    Ok(SeriesScript {
        name: name.to_string(),
        global: String::new(),
        function: Some(body.to_string()),
        linked,
        additional: sources,
        dialect: Dialect::Bagscope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_names_its_series_and_sources() {
        let s = read_file(
            "-- name: yaw\n-- source: /imu.orientation.w\n-- sources: /imu.orientation.x, hypot(/a.x, /a.y)\nfunction calc(t, w, x, h) return w end\n",
            "f",
        )
        .unwrap();
        assert_eq!(s.name, "yaw");
        assert_eq!(s.linked, "/imu.orientation.w");
        assert_eq!(s.additional, ["/imu.orientation.x", "hypot(/a.x, /a.y)"]);
        assert!(read_file("function calc() end", "f")
            .unwrap_err()
            .contains("source"));
        assert_eq!(read_file("-- source: /a.x\n", "stem").unwrap().name, "stem");
    }

    #[test]
    fn an_inline_snippet_is_name_sources_body() {
        let s = read_inline("kmh(/odom.v.x, /odom.v.y{a==1}) = return value * 3.6").unwrap();
        assert_eq!((s.name.as_str(), s.linked.as_str()), ("kmh", "/odom.v.x"));
        assert_eq!(s.additional, ["/odom.v.y{a==1}"]);
        assert_eq!(s.function.as_deref(), Some("return value * 3.6"));
        assert!(read_inline("kmh = 1").is_err());
        assert!(read_inline("kmh(/a.x) return 1").unwrap_err().contains("="));
    }
}
