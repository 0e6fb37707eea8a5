//! `bagscope gen`: typed code from the definitions a recording uses (as `../shared/format-notes/003_*`
//! describes, without its build specifics): C++ (one self-contained header), Rust (one module
//! file, no dependencies) or Python (one module, standard library only). For every type, a
//! struct (dataclass) with its constants, a loader from ROS 1 serialized bytes and one from CDR
//! (little or big endian, with its encapsulation header), and a JSON printer; and one function
//! that decodes any of the types by name to JSON, so a program can load a recording's messages
//! without bagscope or ROS.
//!
//! The JSON follows `bagscope echo --json`: `time`/`duration` as `{"secs", "nsecs"}`, `uint8`
//! arrays as base64, non-finite floats as strings.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use bagscope_reader::definition::msg::{ArrayKind, FieldType, MsgDef, MsgType, Primitive};

/// The languages `gen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A C++17 header.
    Cpp,
    /// A Rust module.
    Rust,
    /// A Python 3 module.
    Python,
}

impl Lang {
    /// Parses `cpp`, `rust`, `python`.
    pub fn parse(s: &str) -> Option<Lang> {
        Some(match s {
            "cpp" | "c++" => Lang::Cpp,
            "rust" | "rs" => Lang::Rust,
            "python" | "py" => Lang::Python,
            _ => return None,
        })
    }

    /// The file name written.
    pub fn file_name(self) -> &'static str {
        match self {
            Lang::Cpp => "bagscope_msgs.hpp",
            Lang::Rust => "bagscope_msgs.rs",
            Lang::Python => "bagscope_msgs.py",
        }
    }
}

/// One type to generate: its package and name, fields with resolved type names.
#[derive(Debug, Clone)]
struct GenType {
    pkg: String,
    name: String,
    full: String,
    ty: MsgType,
    /// For each field of type message, the normalized full name of that type.
    refs: Vec<Option<String>>,
}

/// Collects every type of the definitions (deduplicated by normalized name), in dependency order.
fn collect(defs: &[MsgDef]) -> Vec<GenType> {
    let mut by_name: BTreeMap<String, GenType> = BTreeMap::new();
    for d in defs {
        for t in &d.types {
            let full = bagscope_reader::definition::msg::normalize_type(&t.name);
            if by_name.contains_key(&full) {
                continue;
            }
            let (pkg, name) = full.split_once('/').unwrap_or(("msgs", full.as_str()));
            let refs = t
                .fields
                .iter()
                .map(|f| match f.ty {
                    FieldType::Message(j) => Some(
                        bagscope_reader::definition::msg::normalize_type(&d.types[j].name),
                    ),
                    FieldType::Primitive(_) => None,
                })
                .collect();
            by_name.insert(
                full.clone(),
                GenType {
                    pkg: ident(pkg),
                    name: ident(name),
                    full: full.clone(),
                    ty: t.clone(),
                    refs,
                },
            );
        }
    }
    // Dependencies first.
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    fn visit(
        n: &str,
        all: &BTreeMap<String, GenType>,
        done: &mut BTreeSet<String>,
        out: &mut Vec<GenType>,
    ) {
        if !done.insert(n.to_string()) {
            return;
        }
        let Some(t) = all.get(n) else { return };
        for r in t.refs.iter().flatten() {
            visit(r, all, done, out);
        }
        out.push(t.clone());
    }
    for n in by_name.keys() {
        visit(n, &by_name, &mut done, &mut out);
    }
    out
}

/// A name made safe as an identifier (letters, digits, `_`).
fn ident(s: &str) -> String {
    let mut o: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if o.is_empty() || o.starts_with(|c: char| c.is_ascii_digit()) {
        o.insert(0, '_');
    }
    o
}

fn field_name(lang: Lang, n: &str) -> String {
    const CPP: &[&str] = &[
        "class",
        "new",
        "delete",
        "int",
        "float",
        "double",
        "char",
        "bool",
        "short",
        "long",
        "default",
        "register",
        "operator",
        "template",
        "this",
        "union",
        "virtual",
        "namespace",
        "public",
        "private",
        "protected",
        "struct",
        "enum",
        "switch",
        "case",
        "return",
        "auto",
    ];
    const RUST: &[&str] = &[
        "type", "struct", "enum", "fn", "impl", "mod", "match", "ref", "move", "loop", "use",
        "where", "trait", "self", "super", "crate", "box", "async", "await", "dyn", "let", "mut",
        "pub", "return", "static", "const", "in", "for", "if", "else", "while", "as", "break",
        "continue", "extern", "false", "true", "unsafe", "override", "final", "priv", "yield",
    ];
    const PY: &[&str] = &[
        "from", "class", "def", "import", "global", "lambda", "pass", "yield", "is", "in", "not",
        "and", "or", "del", "as", "with", "try", "except", "raise", "finally", "return", "if",
        "else", "elif", "while", "for", "None", "True", "False", "assert", "async", "await",
        "break", "continue", "nonlocal",
    ];
    let list = match lang {
        Lang::Cpp => CPP,
        Lang::Rust => RUST,
        Lang::Python => PY,
    };
    if list.contains(&n) {
        format!("{n}_")
    } else {
        n.to_string()
    }
}

/// The full names of the types [`generate`] writes, dependencies first.
pub fn type_names(defs: &[MsgDef]) -> Vec<String> {
    collect(defs).into_iter().map(|t| t.full).collect()
}

/// Writes the code for every type the definitions use.
pub fn generate(defs: &[MsgDef], lang: Lang) -> String {
    let types = collect(defs);
    match lang {
        Lang::Cpp => cpp(&types),
        Lang::Rust => rust(&types),
        Lang::Python => python(&types),
    }
}

fn prim_size(p: Primitive) -> usize {
    p.size().unwrap_or(4)
}

// ---------------------------------------------------------------------------------------------
// C++

fn cpp_prim(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::I8 => "int8_t",
        Primitive::U8 => "uint8_t",
        Primitive::I16 => "int16_t",
        Primitive::U16 => "uint16_t",
        Primitive::I32 => "int32_t",
        Primitive::U32 => "uint32_t",
        Primitive::I64 => "int64_t",
        Primitive::U64 => "uint64_t",
        Primitive::F32 => "float",
        Primitive::F64 => "double",
        Primitive::String => "std::string",
        Primitive::Time => "bagscope::Time",
        Primitive::Duration => "bagscope::Duration",
    }
}

fn cpp_elem(t: &GenType, i: usize) -> String {
    match (&t.ty.fields[i].ty, &t.refs[i]) {
        (FieldType::Primitive(p), _) => cpp_prim(*p).to_string(),
        (_, Some(r)) => {
            let (pkg, name) = r.split_once('/').unwrap_or(("msgs", r));
            format!("::{}::{}", ident(pkg), ident(name))
        }
        _ => "void".into(),
    }
}

const CPP_RUNTIME: &str = r#"// Generated by bagscope gen: message types, loaders (ROS 1 serialization and CDR) and JSON
// printers for the types a recording uses. Self-contained C++17; no ROS needed.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace bagscope {
struct Time { uint32_t sec = 0, nsec = 0; };
struct Duration { int32_t sec = 0, nsec = 0; };

// Reads ROS 1 serialization (packed, little endian) or CDR (aligned from the end of the
// 4-byte encapsulation header, either byte order).
class Reader {
 public:
  static Reader ros1(const uint8_t* d, size_t n) { return Reader(d, n, false); }
  static Reader cdr(const uint8_t* d, size_t n) {
    Reader r(d, n, true);
    if (n < 4 || d[0] != 0) throw std::runtime_error("not a CDR message");
    switch (d[1]) {
      case 0: r.be_ = true; break;
      case 1: r.be_ = false; break;
      case 6: r.be_ = true; r.max_align_ = 4; break;
      case 7: r.be_ = false; r.max_align_ = 4; break;
      default: throw std::runtime_error("unknown CDR representation");
    }
    r.pos_ = 4;
    r.origin_ = 4;
    return r;
  }
  void align(size_t n) {
    if (!cdr_ || n <= 1) return;
    if (n > max_align_) n = max_align_;
    size_t rel = pos_ - origin_;
    size_t pad = (n - rel % n) % n;
    need(pad);
    pos_ += pad;
  }
  template <typename T> T prim() {
    align(sizeof(T));
    need(sizeof(T));
    uint8_t b[sizeof(T)];
    std::memcpy(b, d_ + pos_, sizeof(T));
    if (cdr_ && be_) for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    T v;
    std::memcpy(&v, b, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  bool boolean() { return prim<uint8_t>() != 0; }
  uint32_t count() { return prim<uint32_t>(); }
  std::string string() {
    uint32_t n = count();
    need(n);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), n);
    pos_ += n;
    if (cdr_ && !s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }
  Time time() { Time t; t.sec = prim<uint32_t>(); t.nsec = prim<uint32_t>(); return t; }
  Duration duration() { Duration t; t.sec = prim<int32_t>(); t.nsec = prim<int32_t>(); return t; }
  size_t left() const { return n_ - pos_; }
  bool is_cdr() const { return cdr_; }

 private:
  Reader(const uint8_t* d, size_t n, bool cdr) : d_(d), n_(n), cdr_(cdr) {}
  void need(size_t k) const { if (k > n_ - pos_) throw std::runtime_error("message too short"); }
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
  size_t origin_ = 0;
  size_t max_align_ = 8;
  bool cdr_;
  bool be_ = false;
};

inline void json(std::string& o, bool v) { o += v ? "true" : "false"; }
inline void json(std::string& o, int64_t v) { o += std::to_string(v); }
inline void json(std::string& o, uint64_t v) { o += std::to_string(v); }
inline void json(std::string& o, int32_t v) { o += std::to_string(v); }
inline void json(std::string& o, uint32_t v) { o += std::to_string(v); }
inline void json(std::string& o, int16_t v) { o += std::to_string(v); }
inline void json(std::string& o, uint16_t v) { o += std::to_string(v); }
inline void json(std::string& o, int8_t v) { o += std::to_string(v); }
inline void json(std::string& o, uint8_t v) { o += std::to_string(v); }
inline void json_float(std::string& o, double v, int digits) {
  if (std::isnan(v)) { o += "\"NaN\""; return; }
  if (std::isinf(v)) { o += v > 0 ? "\"Infinity\"" : "\"-Infinity\""; return; }
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  o += b;
  if (!std::strpbrk(b, ".eE")) o += ".0";
}
inline void json(std::string& o, float v) { json_float(o, v, 9); }
inline void json(std::string& o, double v) { json_float(o, v, 17); }
inline void json(std::string& o, const std::string& s) {
  o += '"';
  for (unsigned char c : s) {
    if (c == '"') o += "\\\"";
    else if (c == '\\') o += "\\\\";
    else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += static_cast<char>(c);
  }
  o += '"';
}
inline void json(std::string& o, const Time& t) { o += "{\"secs\": " + std::to_string(t.sec) + ", \"nsecs\": " + std::to_string(t.nsec) + "}"; }
inline void json(std::string& o, const Duration& t) { o += "{\"secs\": " + std::to_string(t.sec) + ", \"nsecs\": " + std::to_string(t.nsec) + "}"; }
inline void base64(std::string& o, const uint8_t* d, size_t n) {
  static const char* A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  o += '"';
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = d[i] << 16 | (i + 1 < n ? d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
    o += A[v >> 18 & 63];
    o += A[v >> 12 & 63];
    o += i + 1 < n ? A[v >> 6 & 63] : '=';
    o += i + 2 < n ? A[v & 63] : '=';
  }
  o += '"';
}
template <typename T> void read_value(Reader& r, T& v) { v = T::read(r); }
inline void read_value(Reader& r, bool& v) { v = r.boolean(); }
inline void read_value(Reader& r, std::string& v) { v = r.string(); }
inline void read_value(Reader& r, Time& v) { v = r.time(); }
inline void read_value(Reader& r, Duration& v) { v = r.duration(); }
#define BAGSCOPE_PRIM(T) inline void read_value(Reader& r, T& v) { v = r.prim<T>(); }
BAGSCOPE_PRIM(int8_t) BAGSCOPE_PRIM(uint8_t) BAGSCOPE_PRIM(int16_t) BAGSCOPE_PRIM(uint16_t)
BAGSCOPE_PRIM(int32_t) BAGSCOPE_PRIM(uint32_t) BAGSCOPE_PRIM(int64_t) BAGSCOPE_PRIM(uint64_t)
BAGSCOPE_PRIM(float) BAGSCOPE_PRIM(double)
#undef BAGSCOPE_PRIM
template <typename T> void json_value(std::string& o, const T& v) { v.to_json(o); }
#define BAGSCOPE_JSON(T) inline void json_value(std::string& o, const T& v) { json(o, v); }
BAGSCOPE_JSON(bool) BAGSCOPE_JSON(int8_t) BAGSCOPE_JSON(uint8_t) BAGSCOPE_JSON(int16_t)
BAGSCOPE_JSON(uint16_t) BAGSCOPE_JSON(int32_t) BAGSCOPE_JSON(uint32_t) BAGSCOPE_JSON(int64_t)
BAGSCOPE_JSON(uint64_t) BAGSCOPE_JSON(float) BAGSCOPE_JSON(double) BAGSCOPE_JSON(std::string)
BAGSCOPE_JSON(Time) BAGSCOPE_JSON(Duration)
#undef BAGSCOPE_JSON
template <typename T> void json_array(std::string& o, const T& a) {
  o += '[';
  bool first = true;
  for (const auto& e : a) { if (!first) o += ", "; first = false; json_value(o, e); }
  o += ']';
}
}  // namespace bagscope
"#;

fn cpp(types: &[GenType]) -> String {
    let mut o = String::from(CPP_RUNTIME);
    for t in types {
        let _ = writeln!(
            o,
            "\nnamespace {} {{\n// {}\nstruct {} {{",
            t.pkg, t.full, t.name
        );
        for c in &t.ty.constants {
            let v = if c.ty == Primitive::String {
                format!("\"{}\"", c.value.replace('\\', "\\\\").replace('"', "\\\""))
            } else {
                c.value.clone()
            };
            let ty = if c.ty == Primitive::String {
                "const char*".to_string()
            } else {
                cpp_prim(c.ty).to_string()
            };
            let _ = writeln!(
                o,
                "  static constexpr {ty} {} = {v};",
                field_name(Lang::Cpp, &c.name)
            );
        }
        for (i, f) in t.ty.fields.iter().enumerate() {
            let e = cpp_elem(t, i);
            let ty = match f.array {
                ArrayKind::Scalar => e,
                ArrayKind::Fixed(n) => format!("std::array<{e}, {n}>"),
                ArrayKind::Variable => format!("std::vector<{e}>"),
            };
            let _ = writeln!(o, "  {ty} {}{{}};", field_name(Lang::Cpp, &f.name));
        }
        let _ = writeln!(
            o,
            "\n  static {} read(::bagscope::Reader& r) {{\n    {} m;",
            t.name, t.name
        );
        for f in &t.ty.fields {
            let n = field_name(Lang::Cpp, &f.name);
            match f.array {
                ArrayKind::Scalar => {
                    let _ = writeln!(o, "    ::bagscope::read_value(r, m.{n});");
                }
                ArrayKind::Fixed(_) => {
                    let e = cpp_elem(
                        t,
                        t.ty.fields
                            .iter()
                            .position(|g| g.name == f.name)
                            .unwrap_or(0),
                    );
                    let _ = writeln!(o, "    for (size_t i = 0; i < m.{n}.size(); ++i) {{ {e} v{{}}; ::bagscope::read_value(r, v); m.{n}[i] = std::move(v); }}");
                }
                ArrayKind::Variable => {
                    let min = match f.ty {
                        FieldType::Primitive(p) => prim_size(p),
                        FieldType::Message(_) => 0,
                    };
                    let e = cpp_elem(
                        t,
                        t.ty.fields
                            .iter()
                            .position(|g| g.name == f.name)
                            .unwrap_or(0),
                    );
                    let _ = writeln!(
                        o,
                        "    {{ uint32_t k = r.count(); if ({min} > 0 && k > r.left() / ({min} > 0 ? {min} : 1)) throw std::runtime_error(\"array too long\"); m.{n}.resize(k); for (size_t i = 0; i < k; ++i) {{ {e} v{{}}; ::bagscope::read_value(r, v); m.{n}[i] = std::move(v); }} }}"
                    );
                }
            }
        }
        if t.ty.fields.is_empty() {
            // An empty type is one byte in CDR (rosidl's placeholder member).
            o.push_str("    if (r.is_cdr()) r.prim<uint8_t>();\n");
        }
        o.push_str("    return m;\n  }\n");
        let _ = writeln!(
            o,
            "  static {0} from_ros1(const uint8_t* d, size_t n) {{ auto r = ::bagscope::Reader::ros1(d, n); return read(r); }}\n  static {0} from_cdr(const uint8_t* d, size_t n) {{ auto r = ::bagscope::Reader::cdr(d, n); return read(r); }}",
            t.name
        );
        o.push_str("  void to_json(std::string& o) const {\n    o += '{';\n");
        for (i, f) in t.ty.fields.iter().enumerate() {
            let n = field_name(Lang::Cpp, &f.name);
            let sep = if i == 0 { "" } else { ", " };
            let _ = writeln!(o, "    o += \"{sep}\\\"{}\\\": \";", f.name);
            let is_bytes =
                matches!(f.ty, FieldType::Primitive(Primitive::U8)) && f.array != ArrayKind::Scalar;
            if is_bytes {
                let _ = writeln!(o, "    ::bagscope::base64(o, {n}.data(), {n}.size());");
            } else if f.array == ArrayKind::Scalar {
                let _ = writeln!(o, "    ::bagscope::json_value(o, {n});");
            } else {
                let _ = writeln!(o, "    ::bagscope::json_array(o, {n});");
            }
        }
        o.push_str("    o += '}';\n  }\n};\n}  // namespace\n");
    }
    o.push_str(
        "\nnamespace bagscope {\n// Decodes a message of any generated type (its name with or without /msg/) to JSON.\ninline std::string decode_json(const std::string& type, bool cdr, const uint8_t* d, size_t n) {\n  std::string t = type;\n  auto p = t.find(\"/msg/\");\n  if (p != std::string::npos) t.erase(p, 4);\n  std::string o;\n",
    );
    for t in types {
        let _ = writeln!(
            o,
            "  if (t == \"{}\") {{ auto m = cdr ? ::{1}::{2}::from_cdr(d, n) : ::{1}::{2}::from_ros1(d, n); m.to_json(o); return o; }}",
            t.full, t.pkg, t.name
        );
    }
    o.push_str("  throw std::runtime_error(\"type not generated: \" + type);\n}\n}  // namespace bagscope\n");
    o
}

// ---------------------------------------------------------------------------------------------
// Rust

fn rust_prim(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::I8 => "i8",
        Primitive::U8 => "u8",
        Primitive::I16 => "i16",
        Primitive::U16 => "u16",
        Primitive::I32 => "i32",
        Primitive::U32 => "u32",
        Primitive::I64 => "i64",
        Primitive::U64 => "u64",
        Primitive::F32 => "f32",
        Primitive::F64 => "f64",
        Primitive::String => "::std::string::String",
        Primitive::Time => "super::Time",
        Primitive::Duration => "super::Duration",
    }
}

const RUST_RUNTIME: &str = r#"//! Generated by bagscope gen: message types, loaders (ROS 1 serialization and CDR) and JSON
//! printers for the types a recording uses. Plain Rust, no dependencies, no ROS needed.
#![allow(dead_code, non_snake_case, non_camel_case_types, clippy::all)]

/// A ROS 1 `time`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Time { pub sec: u32, pub nsec: u32 }
/// A ROS 1 `duration`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Duration { pub sec: i32, pub nsec: i32 }

/// Reads ROS 1 serialization (packed, little endian) or CDR (aligned from the end of the
/// 4-byte encapsulation header, either byte order).
pub struct Reader<'a> { d: &'a [u8], pos: usize, cdr: bool, be: bool, origin: usize, max_align: usize }

impl<'a> Reader<'a> {
    pub fn ros1(d: &'a [u8]) -> Self { Reader { d, pos: 0, cdr: false, be: false, origin: 0, max_align: 8 } }
    pub fn cdr(d: &'a [u8]) -> Result<Self, String> {
        if d.len() < 4 || d[0] != 0 { return Err("not a CDR message".into()); }
        let (be, max_align) = match d[1] { 0 => (true, 8), 1 => (false, 8), 6 => (true, 4), 7 => (false, 4), k => return Err(format!("unknown CDR representation {k}")) };
        Ok(Reader { d, pos: 4, cdr: true, be, origin: 4, max_align })
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.d.len() - self.pos { return Err("message too short".into()); }
        let s = &self.d[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn align(&mut self, n: usize) -> Result<(), String> {
        if !self.cdr || n <= 1 { return Ok(()); }
        let n = n.min(self.max_align);
        let pad = (n - (self.pos - self.origin) % n) % n;
        self.take(pad).map(|_| ())
    }
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], String> {
        self.align(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        if self.cdr && self.be { a.reverse(); }
        Ok(a)
    }
    pub fn count(&mut self) -> Result<usize, String> { Ok(u32::from_le_bytes(self.bytes::<4>()?) as usize) }
    pub fn left(&self) -> usize { self.d.len() - self.pos }
    /// An empty type: one byte in CDR (rosidl's placeholder member), nothing in ROS 1.
    pub fn empty(&mut self) -> Result<(), String> { if self.cdr { self.take(1)?; } Ok(()) }
}

pub trait Read: Sized { fn read(r: &mut Reader) -> Result<Self, String>; }
macro_rules! prim { ($($t:ty),*) => { $(impl Read for $t { fn read(r: &mut Reader) -> Result<Self, String> { Ok(<$t>::from_le_bytes(r.bytes()?)) } })* } }
prim!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
impl Read for bool { fn read(r: &mut Reader) -> Result<Self, String> { Ok(u8::read(r)? != 0) } }
impl Read for String {
    fn read(r: &mut Reader) -> Result<Self, String> {
        let n = r.count()?;
        let mut b = r.take(n)?;
        if r.cdr { if let Some((0, rest)) = b.split_last() { b = rest; } }
        Ok(String::from_utf8_lossy(b).into_owned())
    }
}
impl Read for Time { fn read(r: &mut Reader) -> Result<Self, String> { Ok(Time { sec: u32::read(r)?, nsec: u32::read(r)? }) } }
impl Read for Duration { fn read(r: &mut Reader) -> Result<Self, String> { Ok(Duration { sec: i32::read(r)?, nsec: i32::read(r)? }) } }
impl<T: Read + Default + Copy, const N: usize> Read for [T; N] {
    fn read(r: &mut Reader) -> Result<Self, String> { let mut a = [T::default(); N]; for e in a.iter_mut() { *e = T::read(r)?; } Ok(a) }
}
pub fn read_fixed<T: Read>(r: &mut Reader, n: usize) -> Result<Vec<T>, String> { (0..n).map(|_| T::read(r)).collect() }
pub fn read_seq<T: Read>(r: &mut Reader, min: usize) -> Result<Vec<T>, String> {
    let n = r.count()?;
    if min > 0 && n > r.left() / min { return Err("array too long".into()); }
    read_fixed(r, n)
}

pub trait Json { fn json(&self, o: &mut String); }
macro_rules! ints { ($($t:ty),*) => { $(impl Json for $t { fn json(&self, o: &mut String) { o.push_str(&self.to_string()); } })* } }
ints!(i8, u8, i16, u16, i32, u32, i64, u64);
impl Json for bool { fn json(&self, o: &mut String) { o.push_str(if *self { "true" } else { "false" }); } }
fn float(o: &mut String, v: f64, text: String) {
    if v.is_nan() { o.push_str("\"NaN\""); } else if v.is_infinite() { o.push_str(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" }); } else { o.push_str(&text); }
}
impl Json for f32 { fn json(&self, o: &mut String) { float(o, *self as f64, format!("{:?}", self)) } }
impl Json for f64 { fn json(&self, o: &mut String) { float(o, *self, format!("{:?}", self)) } }
impl Json for String {
    fn json(&self, o: &mut String) {
        o.push('"');
        for c in self.chars() { match c { '"' => o.push_str("\\\""), '\\' => o.push_str("\\\\"), c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)), c => o.push(c) } }
        o.push('"');
    }
}
impl Json for Time { fn json(&self, o: &mut String) { o.push_str(&format!("{{\"secs\": {}, \"nsecs\": {}}}", self.sec, self.nsec)); } }
impl Json for Duration { fn json(&self, o: &mut String) { o.push_str(&format!("{{\"secs\": {}, \"nsecs\": {}}}", self.sec, self.nsec)); } }
pub fn json_array<T: Json>(o: &mut String, a: &[T]) {
    o.push('[');
    for (i, e) in a.iter().enumerate() { if i > 0 { o.push_str(", "); } e.json(o); }
    o.push(']');
}
pub fn base64(o: &mut String, d: &[u8]) {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    o.push('"');
    for c in d.chunks(3) {
        let v = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        o.push(A[(v >> 18 & 63) as usize] as char);
        o.push(A[(v >> 12 & 63) as usize] as char);
        o.push(if c.len() > 1 { A[(v >> 6 & 63) as usize] as char } else { '=' });
        o.push(if c.len() > 2 { A[(v & 63) as usize] as char } else { '=' });
    }
    o.push('"');
}
"#;

fn rust_elem(t: &GenType, i: usize) -> String {
    match (&t.ty.fields[i].ty, &t.refs[i]) {
        (FieldType::Primitive(p), _) => rust_prim(*p).to_string(),
        (_, Some(r)) => {
            let (pkg, name) = r.split_once('/').unwrap_or(("msgs", r));
            format!("super::{}::{}", ident(pkg), ident(name))
        }
        _ => "()".into(),
    }
}

fn rust_field(n: &str) -> String {
    field_name(Lang::Rust, n)
}

fn rust(types: &[GenType]) -> String {
    let mut o = String::from(RUST_RUNTIME);
    let mut by_pkg: BTreeMap<&str, Vec<&GenType>> = BTreeMap::new();
    for t in types {
        by_pkg.entry(&t.pkg).or_default().push(t);
    }
    for (pkg, ts) in by_pkg {
        // Paths to the runtime are spelled out: a ROS type may be named `String` or `Time`.
        let _ = writeln!(o, "\npub mod {pkg} {{\n    type S = ::std::string::String;");
        for t in ts {
            let _ = writeln!(o, "\n    /// `{}`.\n    #[derive(Debug, Clone, Default, PartialEq)]\n    pub struct {} {{", t.full, t.name);
            for (i, f) in t.ty.fields.iter().enumerate() {
                let e = rust_elem(t, i);
                let ty = match f.array {
                    ArrayKind::Scalar => e,
                    _ => format!("Vec<{e}>"),
                };
                let _ = writeln!(o, "        pub {}: {ty},", rust_field(&f.name));
            }
            o.push_str("    }\n");
            let _ = writeln!(o, "    impl {} {{", t.name);
            for c in &t.ty.constants {
                let (ty, v) = if c.ty == Primitive::String {
                    ("&str".to_string(), format!("{:?}", c.value))
                } else if c.ty == Primitive::Bool {
                    (
                        "bool".to_string(),
                        (c.value.trim() == "1" || c.value.trim().eq_ignore_ascii_case("true"))
                            .to_string(),
                    )
                } else {
                    let ty = rust_prim(c.ty).to_string();
                    (ty.clone(), format!("({}) as {ty}", c.value.trim()))
                };
                let _ = writeln!(o, "        pub const {}: {ty} = {v};", ident(&c.name));
            }
            o.push_str("        pub fn from_ros1(d: &[u8]) -> Result<Self, S> { <Self as super::Read>::read(&mut super::Reader::ros1(d)) }\n");
            o.push_str("        pub fn from_cdr(d: &[u8]) -> Result<Self, S> { <Self as super::Read>::read(&mut super::Reader::cdr(d)?) }\n    }\n");
            let _ = writeln!(o, "    impl super::Read for {} {{\n        fn read(r: &mut super::Reader) -> Result<Self, S> {{", t.name);
            if t.ty.fields.is_empty() {
                o.push_str("            r.empty()?;\n");
            }
            let _ = writeln!(o, "            Ok({} {{", t.name);
            for (i, f) in t.ty.fields.iter().enumerate() {
                let e = rust_elem(t, i);
                let n = rust_field(&f.name);
                let expr = match f.array {
                    ArrayKind::Scalar => format!("<{e} as super::Read>::read(r)?"),
                    ArrayKind::Fixed(k) => format!("super::read_fixed::<{e}>(r, {k})?"),
                    ArrayKind::Variable => {
                        let min = match f.ty {
                            FieldType::Primitive(p) => prim_size(p),
                            FieldType::Message(_) => 0,
                        };
                        format!("super::read_seq::<{e}>(r, {min})?")
                    }
                };
                let _ = writeln!(o, "                {n}: {expr},");
            }
            o.push_str("            })\n        }\n    }\n");
            let _ = writeln!(o, "    impl super::Json for {} {{\n        fn json(&self, o: &mut S) {{\n            o.push('{{');", t.name);
            for (i, f) in t.ty.fields.iter().enumerate() {
                let n = rust_field(&f.name);
                let sep = if i == 0 { "" } else { ", " };
                let _ = writeln!(o, "            o.push_str(\"{sep}\\\"{}\\\": \");", f.name);
                let is_bytes = matches!(f.ty, FieldType::Primitive(Primitive::U8))
                    && f.array != ArrayKind::Scalar;
                if is_bytes {
                    let _ = writeln!(o, "            super::base64(o, &self.{n});");
                } else if f.array == ArrayKind::Scalar {
                    let _ = writeln!(o, "            super::Json::json(&self.{n}, o);");
                } else {
                    let _ = writeln!(o, "            super::json_array(o, &self.{n});");
                }
            }
            o.push_str("            o.push('}');\n        }\n    }\n");
        }
        o.push_str("}\n");
    }
    o.push_str("\n/// Decodes a message of any generated type (its name with or without /msg/) to JSON.\npub fn decode_json(ty: &str, cdr: bool, d: &[u8]) -> Result<String, String> {\n    let t = ty.replace(\"/msg/\", \"/\");\n    let mut o = String::new();\n    match t.as_str() {\n");
    for t in types {
        let _ = writeln!(
            o,
            "        \"{}\" => {{ let m = if cdr {{ {1}::{2}::from_cdr(d)? }} else {{ {1}::{2}::from_ros1(d)? }}; m.json(&mut o); }}",
            t.full, t.pkg, t.name
        );
    }
    o.push_str(
        "        _ => return Err(format!(\"type not generated: {ty}\")),\n    }\n    Ok(o)\n}\n",
    );
    o
}

// ---------------------------------------------------------------------------------------------
// Python

const PY_RUNTIME: &str = r#""""Generated by bagscope gen: message types, loaders (ROS 1 serialization and CDR) and JSON
printers for the types a recording uses. Python 3 standard library only; no ROS needed."""
from __future__ import annotations

import base64
import json as _json
import math
import struct
from dataclasses import dataclass, field


class Reader:
    """Reads ROS 1 serialization (packed, little endian) or CDR (aligned from the end of the
    4-byte encapsulation header, either byte order)."""

    def __init__(self, data: bytes, cdr: bool):
        self.d, self.pos, self.cdr, self.be, self.origin, self.max_align = memoryview(data), 0, cdr, False, 0, 8
        if cdr:
            if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1, 6, 7):
                raise ValueError('not a CDR message')
            self.be = data[1] in (0, 6)
            self.max_align = 4 if data[1] in (6, 7) else 8
            self.pos = self.origin = 4

    def align(self, n):
        if self.cdr and n > 1:
            n = min(n, self.max_align)
            self.pos += (n - (self.pos - self.origin) % n) % n

    def prim(self, fmt, size):
        self.align(size)
        if self.pos + size > len(self.d):
            raise ValueError('message too short')
        v = struct.unpack_from(('>' if self.cdr and self.be else '<') + fmt, self.d, self.pos)[0]
        self.pos += size
        return v

    def count(self):
        return self.prim('I', 4)

    def string(self):
        n = self.count()
        if self.pos + n > len(self.d):
            raise ValueError('message too short')
        b = bytes(self.d[self.pos:self.pos + n])
        self.pos += n
        if self.cdr and b.endswith(b'\0'):
            b = b[:-1]
        return b.decode('utf-8', 'replace')

    def bytes_(self, n):
        if self.pos + n > len(self.d):
            raise ValueError('message too short')
        b = bytes(self.d[self.pos:self.pos + n])
        self.pos += n
        return b


PRIMS = {'bool': ('B', 1), 'int8': ('b', 1), 'uint8': ('B', 1), 'int16': ('h', 2), 'uint16': ('H', 2),
         'int32': ('i', 4), 'uint32': ('I', 4), 'int64': ('q', 8), 'uint64': ('Q', 8),
         'float32': ('f', 4), 'float64': ('d', 8)}


def read_prim(r, name):
    if name == 'string':
        return r.string()
    if name == 'time':
        return {'secs': r.prim('I', 4), 'nsecs': r.prim('I', 4)}
    if name == 'duration':
        return {'secs': r.prim('i', 4), 'nsecs': r.prim('i', 4)}
    fmt, size = PRIMS[name]
    v = r.prim(fmt, size)
    return bool(v) if name == 'bool' else v


def to_json_value(v, kind):
    if kind in ('float32', 'float64'):
        if math.isnan(v):
            return 'NaN'
        if math.isinf(v):
            return 'Infinity' if v > 0 else '-Infinity'
    return v


def jsonable(m):
    return m.to_dict() if hasattr(m, 'to_dict') else m
"#;

fn python(types: &[GenType]) -> String {
    let mut o = String::from(PY_RUNTIME);
    let cls = |full: &str| ident(&full.replace('/', "__"));
    for t in types {
        let _ = writeln!(
            o,
            "\n\n@dataclass\nclass {}:\n    \"\"\"`{}`.\"\"\"",
            cls(&t.full),
            t.full
        );
        for c in &t.ty.constants {
            let v = if c.ty == Primitive::String {
                format!("{:?}", c.value)
            } else if c.ty == Primitive::Bool {
                if c.value.trim() == "1" || c.value.trim().eq_ignore_ascii_case("true") {
                    "True".into()
                } else {
                    "False".into()
                }
            } else {
                c.value.trim().to_string()
            };
            let _ = writeln!(o, "    {} = {v}", ident(&c.name));
        }
        for f in &t.ty.fields {
            let default = if f.array == ArrayKind::Scalar {
                match f.ty {
                    FieldType::Message(_) => "None",
                    FieldType::Primitive(Primitive::String) => "''",
                    FieldType::Primitive(_) => "None",
                }
            } else {
                "field(default_factory=list)"
            };
            let _ = writeln!(
                o,
                "    {}: object = {default}",
                field_name(Lang::Python, &f.name)
            );
        }
        if t.ty.fields.is_empty() {
            o.push_str("    pass\n");
        }
        o.push_str("\n    @classmethod\n    def read(cls, r):\n        m = cls()\n");
        if t.ty.fields.is_empty() {
            // An empty type is one byte in CDR (rosidl's placeholder member).
            o.push_str("        if r.cdr:\n            r.bytes_(1)\n");
        }
        for (i, f) in t.ty.fields.iter().enumerate() {
            let n = field_name(Lang::Python, &f.name);
            let elem = match (&f.ty, &t.refs[i]) {
                (FieldType::Message(_), Some(r)) => format!("{}.read(r)", cls(r)),
                (FieldType::Primitive(p), _) => format!("read_prim(r, {:?})", p.name()),
                _ => "None".into(),
            };
            let is_bytes = matches!(f.ty, FieldType::Primitive(Primitive::U8));
            match f.array {
                ArrayKind::Scalar => {
                    let _ = writeln!(o, "        m.{n} = {elem}");
                }
                ArrayKind::Fixed(k) if is_bytes => {
                    let _ = writeln!(o, "        m.{n} = r.bytes_({k})");
                }
                ArrayKind::Variable if is_bytes => {
                    let _ = writeln!(o, "        m.{n} = r.bytes_(r.count())");
                }
                ArrayKind::Fixed(k) => {
                    let _ = writeln!(o, "        m.{n} = [{elem} for _ in range({k})]");
                }
                ArrayKind::Variable => {
                    let _ = writeln!(o, "        k = r.count()\n        if k > len(r.d):\n            raise ValueError('array too long')\n        m.{n} = [{elem} for _ in range(k)]");
                }
            }
        }
        o.push_str("        return m\n\n    @classmethod\n    def from_ros1(cls, data):\n        return cls.read(Reader(data, False))\n\n    @classmethod\n    def from_cdr(cls, data):\n        return cls.read(Reader(data, True))\n\n    def to_dict(self):\n        return {\n");
        for f in &t.ty.fields {
            let n = field_name(Lang::Python, &f.name);
            let kind = match f.ty {
                FieldType::Primitive(p) => p.name(),
                FieldType::Message(_) => "msg",
            };
            let is_bytes =
                matches!(f.ty, FieldType::Primitive(Primitive::U8)) && f.array != ArrayKind::Scalar;
            let expr = if is_bytes {
                format!("base64.b64encode(self.{n}).decode()")
            } else if f.array == ArrayKind::Scalar {
                if kind == "msg" {
                    format!("jsonable(self.{n})")
                } else {
                    format!("to_json_value(self.{n}, {kind:?})")
                }
            } else if kind == "msg" {
                format!("[jsonable(e) for e in self.{n}]")
            } else {
                format!("[to_json_value(e, {kind:?}) for e in self.{n}]")
            };
            let _ = writeln!(o, "            {:?}: {expr},", f.name);
        }
        o.push_str("        }\n");
    }
    o.push_str("\n\nTYPES = {\n");
    for t in types {
        let _ = writeln!(o, "    {:?}: {},", t.full, cls(&t.full));
    }
    o.push_str("}\n\n\ndef decode_json(type_name: str, cdr: bool, data: bytes) -> str:\n    \"\"\"Decodes a message of any generated type (its name with or without /msg/) to JSON.\"\"\"\n    c = TYPES[type_name.replace('/msg/', '/')]\n    m = c.from_cdr(data) if cdr else c.from_ros1(data)\n    return _json.dumps(m.to_dict())\n");
    o
}
