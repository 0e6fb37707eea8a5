//! XML-RPC, as the ROS 1 master and every node speak it: values, the call and response
//! documents, a blocking HTTP client for one call, and a small HTTP server that hands each
//! call to a handler. Only what ROS uses (`int`, `i4`, `boolean`, `string`, `double`, `array`,
//! `struct`, `base64`, `nil`); everything read is bounded.

use std::time::Duration;

use crate::{Error, Result};

mod http;

pub(crate) use http::bind_host;
pub use http::{call, split_uri, Handler, Server};

/// The largest request or response body read (the master's whole system state fits many
/// times over).
const MAX_BODY: usize = 64 << 20;
/// The largest header section of an HTTP message.
const MAX_HEAD: usize = 64 << 10;
/// How long a call waits to connect, and then for each read.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An XML-RPC value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `int` / `i4`.
    Int(i32),
    /// `boolean`.
    Bool(bool),
    /// `string` (or an untyped value).
    Str(String),
    /// `double`.
    Double(f64),
    /// `base64`, decoded.
    Bytes(Vec<u8>),
    /// `array`.
    Array(Vec<Value>),
    /// `struct`, members in document order.
    Struct(Vec<(String, Value)>),
    /// `nil`.
    Nil,
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i32> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i32::from(*b)),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The ROS API's answer `[code, status, value]`, `value` when `code` is 1, else an error
    /// naming `what` and the status message.
    pub fn ros_result(self, what: &str) -> Result<Value> {
        let Value::Array(mut items) = self else {
            return Err(live_err(what, "the answer is not [code, status, value]"));
        };
        if items.len() != 3 {
            return Err(live_err(what, "the answer is not [code, status, value]"));
        }
        let value = items.pop().unwrap_or(Value::Nil);
        let status = items.pop().unwrap_or(Value::Nil);
        match items.first().and_then(Value::as_int) {
            Some(1) => Ok(value),
            code => Err(live_err(
                what,
                &format!(
                    "failed (code {}): {}",
                    code.map_or_else(|| "?".into(), |c| c.to_string()),
                    status.as_str().unwrap_or("")
                ),
            )),
        }
    }

    fn write(&self, out: &mut String) {
        out.push_str("<value>");
        match self {
            Value::Int(i) => {
                out.push_str("<i4>");
                out.push_str(&i.to_string());
                out.push_str("</i4>");
            }
            Value::Bool(b) => {
                out.push_str(if *b {
                    "<boolean>1</boolean>"
                } else {
                    "<boolean>0</boolean>"
                });
            }
            Value::Str(s) => {
                out.push_str("<string>");
                escape(s, out);
                out.push_str("</string>");
            }
            Value::Double(d) => {
                out.push_str("<double>");
                out.push_str(&format!("{d:?}"));
                out.push_str("</double>");
            }
            Value::Bytes(b) => {
                out.push_str("<base64>");
                bagscope_reader::encoding::base64::encode_into(b, out);
                out.push_str("</base64>");
            }
            Value::Array(items) => {
                out.push_str("<array><data>");
                for v in items {
                    v.write(out);
                }
                out.push_str("</data></array>");
            }
            Value::Struct(members) => {
                out.push_str("<struct>");
                for (k, v) in members {
                    out.push_str("<member><name>");
                    escape(k, out);
                    out.push_str("</name>");
                    v.write(out);
                    out.push_str("</member>");
                }
                out.push_str("</struct>");
            }
            Value::Nil => out.push_str("<nil/>"),
        }
        out.push_str("</value>");
    }
}

/// An error about a live peer or protocol exchange.
pub(crate) fn live_err(what: &str, reason: &str) -> Error {
    Error::Live {
        peer: what.to_string(),
        reason: reason.to_string(),
    }
}

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
}

/// The document of a call of `method` with `params`.
pub fn call_document(method: &str, params: &[Value]) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodCall><methodName>");
    escape(method, &mut out);
    out.push_str("</methodName><params>");
    for p in params {
        out.push_str("<param>");
        p.write(&mut out);
        out.push_str("</param>");
    }
    out.push_str("</params></methodCall>\n");
    out
}

/// The document answering a call with `value`.
pub fn response_document(value: &Value) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodResponse><params><param>");
    value.write(&mut out);
    out.push_str("</param></params></methodResponse>\n");
    out
}

/// The document answering a call with a fault.
pub fn fault_document(code: i32, message: &str) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodResponse><fault>");
    Value::Struct(vec![
        ("faultCode".into(), Value::Int(code)),
        ("faultString".into(), Value::str(message)),
    ])
    .write(&mut out);
    out.push_str("</fault></methodResponse>\n");
    out
}

/// One piece of an XML document.
#[derive(Debug, PartialEq)]
enum Tok {
    Open(String),
    Close(String),
    /// `<x/>`.
    Empty(String),
    Text(String),
}

/// The document's tags and texts (declarations, comments and attributes skipped; entities
/// decoded).
fn tokens(doc: &str) -> std::result::Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut rest = doc;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            let end = r.find("-->").ok_or("a comment is not closed")?;
            rest = &r[end + 3..];
        } else if let Some(r) = rest.strip_prefix("<?") {
            let end = r.find("?>").ok_or("a declaration is not closed")?;
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('<') {
            let end = r.find('>').ok_or("a tag is not closed")?;
            let tag = &r[..end];
            rest = &r[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                out.push(Tok::Close(name.trim().to_string()));
            } else if let Some(t) = tag.strip_suffix('/') {
                out.push(Tok::Empty(tag_name(t)));
            } else {
                out.push(Tok::Open(tag_name(tag)));
            }
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            out.push(Tok::Text(unescape(&rest[..end])?));
            rest = &rest[end..];
        }
    }
    Ok(out)
}

fn tag_name(tag: &str) -> String {
    tag.split_whitespace().next().unwrap_or("").to_string()
}

fn unescape(s: &str) -> std::result::Result<String, String> {
    if !s.contains('&') {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let r = &rest[i + 1..];
        let end = r.find(';').ok_or("an entity is not closed")?;
        let ent = &r[..end];
        match ent {
            "lt" => out.push('<'),
            "gt" => out.push('>'),
            "amp" => out.push('&'),
            "quot" => out.push('"'),
            "apos" => out.push('\''),
            _ => {
                let code = if let Some(h) = ent.strip_prefix("#x") {
                    u32::from_str_radix(h, 16).ok()
                } else if let Some(d) = ent.strip_prefix('#') {
                    d.parse().ok()
                } else {
                    None
                };
                out.push(
                    code.and_then(char::from_u32)
                        .ok_or_else(|| format!("unknown entity &{ent};"))?,
                );
            }
        }
        rest = &r[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A cursor over a document's tokens, whitespace-only texts between tags skipped where a tag
/// is expected.
struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

/// How deep values may nest (a hostile document cannot exhaust the stack).
const MAX_DEPTH: usize = 64;

impl Parser {
    fn skip_space(&mut self) {
        while let Some(Tok::Text(t)) = self.toks.get(self.at) {
            if t.trim().is_empty() {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn open(&mut self, name: &str) -> std::result::Result<(), String> {
        self.skip_space();
        match self.toks.get(self.at) {
            Some(Tok::Open(n)) if n == name => {
                self.at += 1;
                Ok(())
            }
            other => Err(format!("expected <{name}>, found {other:?}")),
        }
    }

    fn close(&mut self, name: &str) -> std::result::Result<(), String> {
        self.skip_space();
        match self.toks.get(self.at) {
            Some(Tok::Close(n)) if n == name => {
                self.at += 1;
                Ok(())
            }
            other => Err(format!("expected </{name}>, found {other:?}")),
        }
    }

    /// The text up to `</name>` (empty if there is none).
    fn text_until(&mut self, name: &str) -> std::result::Result<String, String> {
        let mut s = String::new();
        if let Some(Tok::Text(t)) = self.toks.get(self.at) {
            s = t.clone();
            self.at += 1;
        }
        self.close(name)?;
        Ok(s)
    }

    fn peek_open(&mut self) -> Option<&Tok> {
        self.skip_space();
        self.toks.get(self.at)
    }

    fn value(&mut self, depth: usize) -> std::result::Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("values nested deeper than {MAX_DEPTH}"));
        }
        self.skip_space();
        match self.toks.get(self.at) {
            Some(Tok::Empty(n)) if n == "value" => {
                self.at += 1;
                return Ok(Value::Str(String::new()));
            }
            _ => self.open("value")?,
        }
        // An untyped value is a string, whitespace included.
        let tok = self.toks.get(self.at);
        let v = match tok {
            Some(Tok::Close(n)) if n == "value" => {
                self.at += 1;
                return Ok(Value::Str(String::new()));
            }
            Some(Tok::Text(t)) => {
                let t = t.clone();
                match self.toks.get(self.at + 1) {
                    Some(Tok::Close(n)) if n == "value" => {
                        self.at += 2;
                        return Ok(Value::Str(t));
                    }
                    _ => {
                        self.at += 1;
                        self.typed(depth)?
                    }
                }
            }
            _ => self.typed(depth)?,
        };
        self.close("value")?;
        Ok(v)
    }

    fn typed(&mut self, depth: usize) -> std::result::Result<Value, String> {
        self.skip_space();
        let name = match self.toks.get(self.at) {
            Some(Tok::Open(n)) => n.clone(),
            Some(Tok::Empty(n)) => {
                let n = n.clone();
                self.at += 1;
                return Ok(match n.as_str() {
                    "nil" => Value::Nil,
                    "string" => Value::Str(String::new()),
                    "array" | "data" => Value::Array(Vec::new()),
                    "struct" => Value::Struct(Vec::new()),
                    "base64" => Value::Bytes(Vec::new()),
                    other => return Err(format!("<{other}/> is not a value")),
                });
            }
            other => return Err(format!("expected a value's type, found {other:?}")),
        };
        self.at += 1;
        Ok(match name.as_str() {
            "i4" | "int" | "i8" => {
                let t = self.text_until(&name)?;
                let t = t.trim();
                match t.parse::<i32>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::Double(
                        t.parse::<f64>()
                            .map_err(|_| format!("{t:?} is not an integer"))?,
                    ),
                }
            }
            "boolean" => {
                let t = self.text_until(&name)?;
                Value::Bool(t.trim() == "1" || t.trim().eq_ignore_ascii_case("true"))
            }
            "string" => Value::Str(self.text_until(&name)?),
            "double" => {
                let t = self.text_until(&name)?;
                Value::Double(
                    t.trim()
                        .parse()
                        .map_err(|_| format!("{t:?} is not a double"))?,
                )
            }
            "base64" => {
                let t = self.text_until(&name)?;
                Value::Bytes(
                    bagscope_reader::encoding::base64::decode(t.as_bytes())
                        .ok_or("base64 that does not decode")?,
                )
            }
            "nil" => {
                self.close("nil")?;
                Value::Nil
            }
            "array" => {
                let mut items = Vec::new();
                match self.peek_open() {
                    Some(Tok::Empty(n)) if n == "data" => self.at += 1,
                    _ => {
                        self.open("data")?;
                        loop {
                            match self.peek_open() {
                                Some(Tok::Close(n)) if n == "data" => {
                                    self.at += 1;
                                    break;
                                }
                                _ => items.push(self.value(depth + 1)?),
                            }
                        }
                    }
                }
                self.close("array")?;
                Value::Array(items)
            }
            "struct" => {
                let mut members = Vec::new();
                loop {
                    match self.peek_open() {
                        Some(Tok::Close(n)) if n == "struct" => {
                            self.at += 1;
                            break;
                        }
                        _ => {
                            self.open("member")?;
                            self.open("name")?;
                            let k = self.text_until("name")?;
                            let v = self.value(depth + 1)?;
                            self.close("member")?;
                            members.push((k, v));
                        }
                    }
                }
                Value::Struct(members)
            }
            other => return Err(format!("<{other}> is not a value type")),
        })
    }
}

/// A call's method name and parameters.
pub fn parse_call(doc: &str) -> std::result::Result<(String, Vec<Value>), String> {
    let mut p = Parser {
        toks: tokens(doc)?,
        at: 0,
    };
    p.open("methodCall")?;
    p.open("methodName")?;
    let method = p.text_until("methodName")?.trim().to_string();
    let mut params = Vec::new();
    match p.peek_open() {
        Some(Tok::Empty(n)) if n == "params" => p.at += 1,
        Some(Tok::Open(n)) if n == "params" => {
            p.at += 1;
            loop {
                match p.peek_open() {
                    Some(Tok::Close(n)) if n == "params" => {
                        p.at += 1;
                        break;
                    }
                    _ => {
                        p.open("param")?;
                        params.push(p.value(0)?);
                        p.close("param")?;
                    }
                }
            }
        }
        _ => {}
    }
    p.close("methodCall")?;
    Ok((method, params))
}

/// A response's value, or its fault as an error text.
pub fn parse_response(doc: &str) -> std::result::Result<Value, String> {
    let mut p = Parser {
        toks: tokens(doc)?,
        at: 0,
    };
    p.open("methodResponse")?;
    match p.peek_open() {
        Some(Tok::Open(n)) if n == "fault" => {
            p.at += 1;
            let v = p.value(0)?;
            let (mut code, mut msg) = (String::new(), String::new());
            if let Value::Struct(m) = v {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("faultCode", Value::Int(c)) => code = c.to_string(),
                        ("faultString", Value::Str(s)) => msg = s,
                        _ => {}
                    }
                }
            }
            Err(format!("fault {code}: {msg}"))
        }
        _ => {
            p.open("params")?;
            p.open("param")?;
            let v = p.value(0)?;
            p.close("param")?;
            p.close("params")?;
            p.close("methodResponse")?;
            Ok(v)
        }
    }
}

#[cfg(test)]
mod tests;
