//! Values as text: JSON (`echo --json`) and the YAML-like form of `rostopic echo`.

use std::fmt::Write as _;

use super::{escape_bytes, Value};
use crate::definition::msg::MsgDef;

pub(super) fn json_str(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub(super) fn json_float(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

/// Writes a value as JSON: fields named as in the definition, `time`/`duration` as
/// `{"secs", "nsecs"}`, byte arrays as base64, non-finite floats as strings.
pub fn to_json(def: &MsgDef, v: &Value, out: &mut String) {
    match v {
        Value::F32(x) => {
            // Shortest text of the f32 itself, not of its f64 widening.
            if x.is_finite() {
                let _ = write!(out, "{x:?}");
            } else {
                json_float(f64::from(*x), out);
            }
        }
        Value::F64(x) => json_float(*x, out),
        Value::String(b) => {
            let mut s = String::new();
            escape_bytes(b, &mut s);
            json_str(&s, out);
        }
        Value::Time { sec, nsec } => {
            let _ = write!(out, "{{\"secs\": {sec}, \"nsecs\": {nsec}}}");
        }
        Value::Duration { sec, nsec } => {
            let _ = write!(out, "{{\"secs\": {sec}, \"nsecs\": {nsec}}}");
        }
        Value::Bytes(b) => {
            out.push('"');
            super::base64::encode_into(b, out);
            out.push('"');
        }
        Value::Prims(..) => {
            out.push('[');
            let mut i = 0;
            while let Some((e, _)) = v.element(i) {
                if i > 0 {
                    out.push_str(", ");
                }
                to_json(def, &e, out);
                i += 1;
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, n) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                to_json(def, &n.value, out);
            }
            out.push(']');
        }
        Value::Message { ty, fields } => {
            out.push('{');
            if let Some(t) = def.types.get(*ty) {
                for (i, (f, n)) in t.fields.iter().zip(fields).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json_str(&f.name, out);
                    out.push_str(": ");
                    to_json(def, &n.value, out);
                }
            }
            out.push('}');
        }
        scalar => {
            let _ = write!(out, "{scalar}");
            if let Value::Bool(b) = scalar {
                // Display gives Python's True/False; JSON wants lowercase.
                out.truncate(out.len() - if *b { 4 } else { 5 });
                out.push_str(if *b { "true" } else { "false" });
            }
        }
    }
}

/// Writes a value the way `rostopic echo` does (YAML-like, indented by `indent`).
pub fn to_yaml(def: &MsgDef, v: &Value, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match v {
        Value::Message { ty, fields } => {
            if let Some(t) = def.types.get(*ty) {
                for (f, n) in t.fields.iter().zip(fields) {
                    match &n.value {
                        Value::Message { .. } => {
                            let _ = writeln!(out, "{pad}{}:", f.name);
                            to_yaml(def, &n.value, indent + 1, out);
                        }
                        Value::Time { sec, nsec } => {
                            let _ = writeln!(
                                out,
                                "{pad}{}:\n{pad}  secs: {sec}\n{pad}  nsecs: {nsec}",
                                f.name
                            );
                        }
                        Value::Duration { sec, nsec } => {
                            let _ = writeln!(
                                out,
                                "{pad}{}:\n{pad}  secs: {sec}\n{pad}  nsecs: {nsec}",
                                f.name
                            );
                        }
                        Value::Array(items)
                            if items
                                .iter()
                                .any(|x| matches!(x.value, Value::Message { .. })) =>
                        {
                            let _ = writeln!(out, "{pad}{}:", f.name);
                            for it in items {
                                let _ = writeln!(out, "{pad}  -");
                                to_yaml(def, &it.value, indent + 2, out);
                            }
                        }
                        other => {
                            let _ = write!(out, "{pad}{}: ", f.name);
                            inline(def, other, out);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        other => {
            out.push_str(&pad);
            inline(def, other, out);
            out.push('\n');
        }
    }
}

fn inline(def: &MsgDef, v: &Value, out: &mut String) {
    match v {
        Value::Bytes(_) | Value::Prims(..) | Value::Array(_) => {
            out.push('[');
            let n = v.len().unwrap_or(0);
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                match v {
                    Value::Array(items) => {
                        let _ = write!(out, "{}", items[i].value);
                    }
                    _ => {
                        if let Some((e, _)) = v.element(i) {
                            let _ = write!(out, "{e}");
                        }
                    }
                }
            }
            out.push(']');
        }
        Value::Message { .. } => {
            let mut s = String::new();
            to_json(def, v, &mut s);
            out.push_str(&s);
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}
