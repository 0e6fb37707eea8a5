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

use bagscope_reader::definition::msg::{FieldType, MsgDef, MsgType, Primitive};

mod cpp;
mod python;
mod rust;

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
        Lang::Cpp => cpp::cpp(&types),
        Lang::Rust => rust::rust(&types),
        Lang::Python => python::python(&types),
    }
}

fn prim_size(p: Primitive) -> usize {
    p.size().unwrap_or(4)
}
