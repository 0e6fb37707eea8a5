//! OMG IDL 4 schemas, as rosbag2 stores them (`ros2idl`: rosidl's generated `.idl` text, the
//! root type first and each dependency after a `====` line and an `IDL: pkg/msg/Type` line) and
//! as eProsima's DDS recorder and Foxglove's tools write them (`omgidl`: one text of modules
//! and structs, the root named by the schema).
//!
//! The text is compiled into the same [`MsgDef`] model as a `.msg` definition, so every
//! operation works on such channels; messages are CDR as for `ros2msg`. What is read:
//! modules (reopened freely), structs (forward declarations, nested use), typedefs (of arrays
//! and sequences too), enums (with `@value` and `@bit_bound`), constants (rosidl's
//! `Type_Constants` modules become the type's constants), sequences bounded or not, strings
//! bounded or not, fixed arrays of any rank, every integer and float spelling, and names
//! scoped from anywhere (`::pkg::msg::T`, `msg::T`, `T`). Comments, preprocessor lines
//! (`#include`, `#pragma`) and annotations are passed over; `@optional` and `@mutable` change
//! the wire format and are refused, as are unions, `wchar`/`wstring`, `fixed` and `any`.

use std::collections::HashMap;

use super::msg::{ArrayKind, Constant, Field, FieldType, MsgDef, MsgType, Primitive};
use crate::error::DefError;

/// Deepest nesting of modules and of typedefs resolving through each other.
const MAX_DEPTH: usize = 64;
/// Largest fixed array (elements) a schema may declare.
const MAX_FIXED: u64 = 1 << 28;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(u64),
    Float(String),
    Str(String),
    Char(u8),
    Punct(&'static str),
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
}

const PUNCTS: [&str; 20] = [
    "::", "<<", ">>", "{", "}", ";", "<", ">", "[", "]", "(", ")", ",", ":", "=", "-", "+", "*",
    "/", "|",
];

impl<'a> Lexer<'a> {
    fn tokens(text: &'a str) -> Result<Vec<(Tok, usize)>, DefError> {
        let mut l = Lexer {
            s: text.as_bytes(),
            pos: 0,
            line: 1,
        };
        let mut out = Vec::new();
        let mut line_start = true;
        while l.pos < l.s.len() {
            let c = l.s[l.pos];
            if c == b'\n' {
                l.line += 1;
                l.pos += 1;
                line_start = true;
                continue;
            }
            if c.is_ascii_whitespace() {
                l.pos += 1;
                continue;
            }
            // Preprocessor lines (`#include`, `#pragma`, guards) and rosbag2's section lines.
            if line_start && (c == b'#' || l.rest().starts_with(b"IDL:")) {
                l.skip_line();
                continue;
            }
            if line_start && c == b'=' && l.rest().starts_with(b"===") {
                l.skip_line();
                continue;
            }
            line_start = false;
            if l.rest().starts_with(b"//") {
                l.skip_line();
                continue;
            }
            if l.rest().starts_with(b"/*") {
                let start = l.line;
                l.pos += 2;
                loop {
                    if l.pos + 1 >= l.s.len() {
                        return Err(DefError::invalid("unclosed /* comment").on_line(start));
                    }
                    if l.s[l.pos] == b'\n' {
                        l.line += 1;
                    }
                    if l.s[l.pos] == b'*' && l.s[l.pos + 1] == b'/' {
                        l.pos += 2;
                        break;
                    }
                    l.pos += 1;
                }
                continue;
            }
            let line = l.line;
            let tok = if c.is_ascii_alphabetic() || c == b'_' {
                let start = l.pos;
                while l.pos < l.s.len()
                    && (l.s[l.pos].is_ascii_alphanumeric() || l.s[l.pos] == b'_')
                {
                    l.pos += 1;
                }
                Tok::Ident(String::from_utf8_lossy(&l.s[start..l.pos]).into_owned())
            } else if c.is_ascii_digit()
                || (c == b'.' && l.peek(1).is_some_and(|d| d.is_ascii_digit()))
            {
                l.number().map_err(|e| e.on_line(line))?
            } else if c == b'"' {
                Tok::Str(l.string().map_err(|e| e.on_line(line))?)
            } else if c == b'\'' {
                let s = l.quoted(b'\'').map_err(|e| e.on_line(line))?;
                match s.as_bytes() {
                    [b] => Tok::Char(*b),
                    _ => {
                        return Err(DefError::invalid(format!(
                            "character literal '{s}' is not one character"
                        ))
                        .on_line(line))
                    }
                }
            } else if c == b'@' {
                l.pos += 1;
                Tok::Punct("@")
            } else {
                match PUNCTS.iter().find(|p| l.rest().starts_with(p.as_bytes())) {
                    Some(p) => {
                        l.pos += p.len();
                        Tok::Punct(p)
                    }
                    None => {
                        return Err(DefError::invalid(format!(
                            "unexpected character {:?}",
                            char::from(c)
                        ))
                        .on_line(line))
                    }
                }
            };
            out.push((tok, line));
        }
        Ok(out)
    }

    fn rest(&self) -> &[u8] {
        &self.s[self.pos..]
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.pos + k).copied()
    }

    fn skip_line(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<Tok, DefError> {
        let start = self.pos;
        if self.rest().starts_with(b"0x") || self.rest().starts_with(b"0X") {
            self.pos += 2;
            let h = self.pos;
            while self.pos < self.s.len() && self.s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            let t = String::from_utf8_lossy(&self.s[h..self.pos]).into_owned();
            return u64::from_str_radix(&t, 16)
                .map(Tok::Int)
                .map_err(|_| DefError::invalid(format!("bad hexadecimal number 0x{t}")));
        }
        let mut float = false;
        while self.pos < self.s.len() {
            let b = self.s[self.pos];
            if b.is_ascii_digit() {
                self.pos += 1;
            } else if b == b'.' || b == b'e' || b == b'E' {
                float = true;
                self.pos += 1;
                if (b == b'e' || b == b'E') && matches!(self.peek(0), Some(b'-' | b'+')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let t = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        // Suffixes (`1.0d`, `10L`) are passed over.
        while self.pos < self.s.len()
            && matches!(
                self.s[self.pos],
                b'd' | b'D' | b'f' | b'F' | b'l' | b'L' | b'u' | b'U'
            )
        {
            self.pos += 1;
        }
        if float {
            t.parse::<f64>()
                .map_err(|_| DefError::invalid(format!("bad number {t}")))?;
            return Ok(Tok::Float(t));
        }
        if t.len() > 1 && t.starts_with('0') && t.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return u64::from_str_radix(&t[1..], 8)
                .map(Tok::Int)
                .map_err(|_| DefError::invalid(format!("bad octal number {t}")));
        }
        t.parse::<u64>()
            .map(Tok::Int)
            .map_err(|_| DefError::invalid(format!("bad number {t}")))
    }

    fn quoted(&mut self, q: u8) -> Result<String, DefError> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek(0) else {
                return Err(DefError::invalid("unclosed literal"));
            };
            self.pos += 1;
            match b {
                b'\n' => return Err(DefError::invalid("literal runs past the end of its line")),
                b'\\' => {
                    let Some(e) = self.peek(0) else {
                        return Err(DefError::invalid("unclosed literal"));
                    };
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        other => other,
                    });
                }
                b if b == q => break,
                b => out.push(b),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn string(&mut self) -> Result<String, DefError> {
        let mut s = self.quoted(b'"')?;
        // Adjacent literals join ("a" "b").
        loop {
            let save = self.pos;
            while self.peek(0).is_some_and(|b| b == b' ' || b == b'\t') {
                self.pos += 1;
            }
            if self.peek(0) == Some(b'"') {
                s.push_str(&self.quoted(b'"')?);
            } else {
                self.pos = save;
                return Ok(s);
            }
        }
    }
}

/// A type as written, before names are resolved.
#[derive(Debug, Clone)]
enum TypeSpec {
    Prim(Primitive),
    /// `string` or `string<N>`.
    String(Option<Expr>),
    Sequence(Box<TypeSpec>, Option<Expr>),
    /// A scoped name and the scope it was written in.
    Named(Vec<String>, bool),
}

/// An expression as written (constants, bounds).
#[derive(Debug, Clone)]
enum Expr {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    Name(Vec<String>, bool),
    Neg(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone)]
struct Member {
    name: String,
    ty: TypeSpec,
    dims: Vec<Expr>,
    line: usize,
}

#[derive(Debug, Clone)]
enum Decl {
    Struct {
        members: Vec<Member>,
        base: Option<(Vec<String>, bool)>,
    },
    Typedef {
        ty: TypeSpec,
        dims: Vec<Expr>,
    },
    Enum {
        values: Vec<(String, i128)>,
        width: Primitive,
    },
    Const {
        ty: TypeSpec,
        value: Expr,
    },
    /// An enumerator: its enum's scoped name and its value.
    Enumerator(i128),
}

#[derive(Debug, Clone)]
struct Item {
    /// The full scoped name.
    path: Vec<String>,
    decl: Decl,
    line: usize,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    scope: Vec<String>,
    items: Vec<Item>,
}

type PResult<T> = Result<T, DefError>;

impl Parser {
    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.1)
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(DefError::invalid(msg).on_line(self.line()))
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some((t, _)) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => self.err("the schema ends too early"),
        }
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if i == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            let found = self.describe();
            self.err(format!("expected `{p}`, found {found}"))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the schema".into(),
            Some(Tok::Ident(i)) => format!("`{i}`"),
            Some(Tok::Int(n)) => format!("`{n}`"),
            Some(Tok::Float(f)) => format!("`{f}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Char(c)) => format!("'{}'", char::from(*c)),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    fn ident(&mut self) -> PResult<String> {
        match self.peek() {
            Some(Tok::Ident(i)) => {
                // An escaped identifier (`_module`) stands for the word without its underscore.
                let name = i
                    .strip_prefix('_')
                    .filter(|s| !s.is_empty())
                    .unwrap_or(i)
                    .to_string();
                self.pos += 1;
                Ok(name)
            }
            _ => {
                let found = self.describe();
                self.err(format!("expected a name, found {found}"))
            }
        }
    }

    /// Annotations before a declaration or member: their names (lowercase) and arguments.
    fn annotations(&mut self) -> PResult<Vec<(String, Vec<Tok>)>> {
        let mut out = Vec::new();
        while self.eat_punct("@") {
            let mut name = self.ident()?;
            while self.eat_punct("::") {
                name = self.ident()?;
            }
            let mut args = Vec::new();
            if self.eat_punct("(") {
                let mut depth = 1usize;
                loop {
                    let t = self.next()?;
                    match t {
                        Tok::Punct("(") => depth += 1,
                        Tok::Punct(")") => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    args.push(t);
                }
            }
            out.push((name.to_ascii_lowercase(), args));
        }
        Ok(out)
    }

    fn refuse(&self, anns: &[(String, Vec<Tok>)]) -> PResult<()> {
        for (a, args) in anns {
            match a.as_str() {
                "optional" => {
                    return self.err("@optional members change the wire format; not supported")
                }
                "mutable" => return self.err("@mutable types are not plain CDR; not supported"),
                "extensibility"
                    if args.iter().any(
                        |t| matches!(t, Tok::Ident(i) if i.eq_ignore_ascii_case("MUTABLE")),
                    ) =>
                {
                    return self
                        .err("@extensibility(MUTABLE) types are not plain CDR; not supported")
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn definitions(&mut self, depth: usize) -> PResult<()> {
        if depth > MAX_DEPTH {
            return self.err("modules nest too deep");
        }
        while self.peek().is_some() && !self.is_punct("}") {
            self.definition(depth)?;
        }
        Ok(())
    }

    fn definition(&mut self, depth: usize) -> PResult<()> {
        let anns = self.annotations()?;
        self.refuse(&anns)?;
        if self.eat_punct(";") {
            return Ok(());
        }
        let line = self.line();
        let word = match self.peek() {
            Some(Tok::Ident(w)) => w.clone(),
            _ => {
                let found = self.describe();
                return self.err(format!("expected a declaration, found {found}"));
            }
        };
        self.pos += 1;
        match word.as_str() {
            "module" => {
                let name = self.ident()?;
                self.expect("{")?;
                self.scope.push(name);
                self.definitions(depth + 1)?;
                self.scope.pop();
                self.expect("}")?;
                self.eat_punct(";");
            }
            "struct" => {
                let name = self.ident()?;
                if self.eat_punct(";") {
                    return Ok(()); // a forward declaration
                }
                let base = if self.eat_punct(":") {
                    Some(self.scoped_name()?)
                } else {
                    None
                };
                self.expect("{")?;
                let mut members = Vec::new();
                while !self.eat_punct("}") {
                    let anns = self.annotations()?;
                    self.refuse(&anns)?;
                    if self.eat_punct(";") {
                        continue;
                    }
                    let line = self.line();
                    let ty = self.type_spec()?;
                    for (name, dims) in self.declarators()? {
                        members.push(Member {
                            name,
                            ty: ty.clone(),
                            dims,
                            line,
                        });
                    }
                }
                self.eat_punct(";");
                self.push(name, Decl::Struct { members, base }, line);
            }
            "typedef" => {
                let ty = self.type_spec()?;
                for (name, dims) in self.declarators()? {
                    let decl = Decl::Typedef {
                        ty: ty.clone(),
                        dims,
                    };
                    self.push(name, decl, line);
                }
            }
            "enum" => {
                let width = anns
                    .iter()
                    .find(|(a, _)| a == "bit_bound")
                    .and_then(|(_, args)| match args.first() {
                        Some(Tok::Int(n)) if *n <= 8 => Some(Primitive::U8),
                        Some(Tok::Int(n)) if *n <= 16 => Some(Primitive::U16),
                        _ => None,
                    })
                    .unwrap_or(Primitive::U32);
                let name = self.ident()?;
                self.expect("{")?;
                let mut values = Vec::new();
                let mut next = 0i128;
                while !self.eat_punct("}") {
                    let anns = self.annotations()?;
                    let e_line = self.line();
                    let e = self.ident()?;
                    let mut v = next;
                    if let Some((_, args)) = anns.iter().find(|(a, _)| a == "value") {
                        v = match args.as_slice() {
                            [Tok::Int(n)] => i128::from(*n),
                            [Tok::Punct("-"), Tok::Int(n)] => -i128::from(*n),
                            _ => {
                                return Err(DefError::invalid(format!(
                                    "enumerator {e}: @value needs a whole number"
                                ))
                                .on_line(e_line))
                            }
                        };
                    }
                    if self.eat_punct("=") {
                        v = match self.expr()? {
                            Expr::Int(n) => n,
                            Expr::Neg(b) => match *b {
                                Expr::Int(n) => -n,
                                _ => {
                                    return self.err(format!("enumerator {e}: not a whole number"))
                                }
                            },
                            _ => return self.err(format!("enumerator {e}: not a whole number")),
                        };
                    }
                    next = v + 1;
                    values.push((e.clone(), v));
                    // An enumerator is named in the enclosing scope and in the enum's.
                    let mut path = self.scope.clone();
                    path.push(e.clone());
                    let mut scoped = self.scope.clone();
                    scoped.extend([name.clone(), e.clone()]);
                    for path in [path, scoped] {
                        self.items.push(Item {
                            path,
                            decl: Decl::Enumerator(v),
                            line: e_line,
                        });
                    }
                    if !self.eat_punct(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                self.eat_punct(";");
                self.push(name, Decl::Enum { values, width }, line);
            }
            "const" => {
                let ty = self.type_spec()?;
                let name = self.ident()?;
                self.expect("=")?;
                let value = self.expr()?;
                self.expect(";")?;
                self.push(name, Decl::Const { ty, value }, line);
            }
            "union" => return Err(DefError::invalid("unions are not supported").on_line(line)),
            "interface" | "valuetype" | "exception" | "component" | "native" | "bitset"
            | "bitmask" => {
                return Err(
                    DefError::invalid(format!("{word} declarations are not supported"))
                        .on_line(line),
                )
            }
            other => {
                return Err(
                    DefError::invalid(format!("expected a declaration, found `{other}`"))
                        .on_line(line),
                )
            }
        }
        Ok(())
    }

    /// `name[2][3], other;`: the names declared after a type, each with its array sizes, and
    /// the `;` that ends them.
    fn declarators(&mut self) -> PResult<Vec<(String, Vec<Expr>)>> {
        let mut out = Vec::new();
        loop {
            let name = self.ident()?;
            out.push((name, self.dims()?));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect(";")?;
        Ok(out)
    }

    fn push(&mut self, name: String, decl: Decl, line: usize) {
        let mut path = self.scope.clone();
        path.push(name);
        self.items.push(Item { path, decl, line });
    }

    /// The `>` that closes `sequence<...>` or `string<...>`; of a `>>`, the first half (the
    /// second closes the enclosing one).
    fn close_angle(&mut self) -> PResult<()> {
        if self.is_punct(">>") {
            self.toks[self.pos].0 = Tok::Punct(">");
            return Ok(());
        }
        self.expect(">")
    }

    fn scoped_name(&mut self) -> PResult<(Vec<String>, bool)> {
        let absolute = self.eat_punct("::");
        let mut parts = vec![self.ident()?];
        while self.eat_punct("::") {
            parts.push(self.ident()?);
        }
        Ok((parts, absolute))
    }

    fn dims(&mut self) -> PResult<Vec<Expr>> {
        let mut dims = Vec::new();
        while self.eat_punct("[") {
            dims.push(self.expr()?);
            self.expect("]")?;
        }
        Ok(dims)
    }

    fn type_spec(&mut self) -> PResult<TypeSpec> {
        let word = match self.peek() {
            Some(Tok::Ident(w)) => w.clone(),
            Some(Tok::Punct("::")) => {
                let (n, a) = self.scoped_name()?;
                return Ok(TypeSpec::Named(n, a));
            }
            _ => {
                let found = self.describe();
                return self.err(format!("expected a type, found {found}"));
            }
        };
        let prim = |p| Ok(TypeSpec::Prim(p));
        match word.as_str() {
            "unsigned" => {
                self.pos += 1;
                if self.eat_word("short") {
                    return prim(Primitive::U16);
                }
                if self.eat_word("long") {
                    if self.eat_word("long") {
                        return prim(Primitive::U64);
                    }
                    return prim(Primitive::U32);
                }
                self.err("expected `short` or `long` after `unsigned`")
            }
            "long" => {
                self.pos += 1;
                if self.eat_word("long") {
                    return prim(Primitive::I64);
                }
                if self.is_word("double") {
                    return self.err("long double is not supported");
                }
                prim(Primitive::I32)
            }
            "string" => {
                self.pos += 1;
                let bound = if self.eat_punct("<") {
                    let b = self.expr_no_gt()?;
                    self.close_angle()?;
                    Some(b)
                } else {
                    None
                };
                Ok(TypeSpec::String(bound))
            }
            "sequence" => {
                self.pos += 1;
                self.expect("<")?;
                let inner = self.type_spec()?;
                let bound = if self.eat_punct(",") {
                    Some(self.expr_no_gt()?)
                } else {
                    None
                };
                self.close_angle()?;
                Ok(TypeSpec::Sequence(Box::new(inner), bound))
            }
            "wstring" | "wchar" | "fixed" | "any" | "Object" | "ValueBase" | "map" => {
                self.err(format!("{word} is not supported"))
            }
            _ => {
                let p = match word.as_str() {
                    "short" | "int16" => Some(Primitive::I16),
                    "int8" => Some(Primitive::I8),
                    "uint8" | "octet" | "char" => Some(Primitive::U8),
                    "uint16" => Some(Primitive::U16),
                    "int32" => Some(Primitive::I32),
                    "uint32" => Some(Primitive::U32),
                    "int64" => Some(Primitive::I64),
                    "uint64" => Some(Primitive::U64),
                    "float" => Some(Primitive::F32),
                    "double" => Some(Primitive::F64),
                    "boolean" => Some(Primitive::Bool),
                    _ => None,
                };
                match p {
                    Some(p) => {
                        self.pos += 1;
                        prim(p)
                    }
                    None => {
                        let (n, a) = self.scoped_name()?;
                        Ok(TypeSpec::Named(n, a))
                    }
                }
            }
        }
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    /// An expression inside `<...>`, where `>>` closes rather than shifts.
    fn expr_no_gt(&mut self) -> PResult<Expr> {
        self.binary(1)
    }

    /// Binary operators from the loosest binding (`|`, shifts) to the tightest (`*`, `/`).
    const LEVELS: [&'static [&'static str]; 3] = [&["|", "<<", ">>"], &["+", "-"], &["*", "/"]];

    fn binary(&mut self, level: usize) -> PResult<Expr> {
        let operand = |p: &mut Parser| {
            if level + 1 < Parser::LEVELS.len() {
                p.binary(level + 1)
            } else {
                p.expr_unary()
            }
        };
        let mut e = operand(self)?;
        while let Some(op) = self.operator(Parser::LEVELS[level]) {
            let r = operand(self)?;
            e = Expr::Bin(op, Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    /// The next token if it is one of `ops`, taken.
    fn operator(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        let op = ops.iter().copied().find(|p| self.is_punct(p))?;
        self.pos += 1;
        Some(op)
    }

    fn expr_unary(&mut self) -> PResult<Expr> {
        if self.eat_punct("-") {
            return Ok(Expr::Neg(Box::new(self.expr_unary()?)));
        }
        if self.eat_punct("+") {
            return self.expr_unary();
        }
        if self.eat_punct("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        match self.peek().cloned() {
            Some(Tok::Int(n)) => {
                self.pos += 1;
                Ok(Expr::Int(i128::from(n)))
            }
            Some(Tok::Float(f)) => {
                self.pos += 1;
                f.parse::<f64>()
                    .map(Expr::Float)
                    .or_else(|_| self.err(format!("bad number {f}")))
            }
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(Expr::Str(s))
            }
            Some(Tok::Char(c)) => {
                self.pos += 1;
                Ok(Expr::Int(i128::from(c)))
            }
            Some(Tok::Ident(w)) if w == "TRUE" || w == "true" => {
                self.pos += 1;
                Ok(Expr::Bool(true))
            }
            Some(Tok::Ident(w)) if w == "FALSE" || w == "false" => {
                self.pos += 1;
                Ok(Expr::Bool(false))
            }
            Some(Tok::Ident(_)) | Some(Tok::Punct("::")) => {
                let (n, a) = self.scoped_name()?;
                Ok(Expr::Name(n, a))
            }
            _ => {
                let found = self.describe();
                self.err(format!("expected a value, found {found}"))
            }
        }
    }
}

/// A constant's value once evaluated.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// What names resolve to: the items by full path.
struct Scope<'a> {
    items: HashMap<Vec<String>, &'a Item>,
}

impl<'a> Scope<'a> {
    /// Resolves `name` written in `scope` (innermost first, then outwards), as IDL does.
    fn find(&self, scope: &[String], name: &[String], absolute: bool) -> Option<&'a Item> {
        if absolute {
            return self.items.get(name).copied();
        }
        for k in (0..=scope.len()).rev() {
            let mut p = scope[..k].to_vec();
            p.extend_from_slice(name);
            if let Some(i) = self.items.get(&p) {
                return Some(i);
            }
        }
        None
    }

    fn eval(&self, scope: &[String], e: &Expr, depth: usize) -> Result<Val, DefError> {
        if depth > MAX_DEPTH {
            return Err(DefError::invalid(
                "constants refer to each other too deeply",
            ));
        }
        Ok(match e {
            Expr::Int(n) => Val::Int(*n),
            Expr::Float(f) => Val::Float(*f),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Neg(b) => match self.eval(scope, b, depth + 1)? {
                Val::Int(n) => Val::Int(-n),
                Val::Float(f) => Val::Float(-f),
                _ => return Err(DefError::invalid("`-` before a value that is not a number")),
            },
            Expr::Bin(op, a, b) => {
                let (a, b) = (
                    self.eval(scope, a, depth + 1)?,
                    self.eval(scope, b, depth + 1)?,
                );
                match (a, b) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(
                        match *op {
                            "+" => x.checked_add(y),
                            "-" => x.checked_sub(y),
                            "*" => x.checked_mul(y),
                            "/" => x.checked_div(y),
                            "|" => Some(x | y),
                            "<<" => u32::try_from(y).ok().filter(|s| *s < 64).map(|s| x << s),
                            ">>" => u32::try_from(y).ok().filter(|s| *s < 64).map(|s| x >> s),
                            _ => None,
                        }
                        .ok_or_else(|| DefError::invalid(format!("{x} {op} {y} has no value")))?,
                    ),
                    (Val::Float(x), Val::Float(y)) => Val::Float(match *op {
                        "+" => x + y,
                        "-" => x - y,
                        "*" => x * y,
                        "/" => x / y,
                        _ => {
                            return Err(DefError::invalid(format!(
                                "`{op}` between floating-point values"
                            )))
                        }
                    }),
                    _ => {
                        return Err(DefError::invalid(format!(
                            "`{op}` between values of different kinds"
                        )))
                    }
                }
            }
            Expr::Name(n, abs) => match self.find(scope, n, *abs) {
                Some(Item {
                    decl: Decl::Const { value, .. },
                    path,
                    ..
                }) => self.eval(&path[..path.len() - 1], value, depth + 1)?,
                Some(Item {
                    decl: Decl::Enumerator(v),
                    ..
                }) => Val::Int(*v),
                _ => {
                    return Err(DefError::invalid(format!(
                        "{} names no constant",
                        n.join("::")
                    )))
                }
            },
        })
    }

    fn bound(&self, scope: &[String], e: &Expr) -> Result<u64, DefError> {
        match self.eval(scope, e, 0)? {
            Val::Int(n) if (0..=i128::from(u32::MAX)).contains(&n) => Ok(n as u64),
            other => Err(DefError::invalid(format!(
                "{} is not a size",
                val_text(&other)
            ))),
        }
    }
}

/// A field's type once names are resolved.
struct Resolved {
    base: Base,
    /// Fixed dimensions outside in (flattened into one array on the wire).
    dims: Vec<u64>,
    /// A sequence (bounded or not) of `base` after `dims` … only one level is representable.
    sequence: Option<Option<u64>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Base {
    Prim(Primitive, Option<u64>),
    Struct(Vec<String>),
    Enum(Vec<String>, Primitive),
}

struct Compiler<'a> {
    scope: Scope<'a>,
    /// Structs by full path, in the order they are first reached from the root.
    order: Vec<Vec<String>>,
    index: HashMap<Vec<String>, usize>,
}

impl<'a> Compiler<'a> {
    fn resolve(&self, scope: &[String], ty: &TypeSpec, depth: usize) -> Result<Resolved, DefError> {
        if depth > MAX_DEPTH {
            return Err(DefError::invalid("typedefs refer to each other too deeply"));
        }
        let plain = |base| Resolved {
            base,
            dims: Vec::new(),
            sequence: None,
        };
        Ok(match ty {
            TypeSpec::Prim(p) => plain(Base::Prim(*p, None)),
            TypeSpec::String(b) => plain(Base::Prim(
                Primitive::String,
                b.as_ref().map(|e| self.scope.bound(scope, e)).transpose()?,
            )),
            TypeSpec::Sequence(inner, b) => {
                let r = self.resolve(scope, inner, depth + 1)?;
                if r.sequence.is_some() || !r.dims.is_empty() {
                    return Err(DefError::invalid(
                        "a sequence of sequences or of arrays has no .msg counterpart; not supported",
                    ));
                }
                Resolved {
                    base: r.base,
                    dims: Vec::new(),
                    sequence: Some(b.as_ref().map(|e| self.scope.bound(scope, e)).transpose()?),
                }
            }
            TypeSpec::Named(name, abs) => {
                let item = self.scope.find(scope, name, *abs).ok_or_else(|| {
                    DefError::invalid(format!(
                        "type {} is not defined in the schema",
                        name.join("::")
                    ))
                })?;
                let own = &item.path[..item.path.len() - 1];
                match &item.decl {
                    Decl::Struct { .. } => plain(Base::Struct(item.path.clone())),
                    Decl::Enum { width, .. } => plain(Base::Enum(item.path.clone(), *width)),
                    Decl::Typedef { ty, dims } => {
                        let mut r = self.resolve(own, ty, depth + 1)?;
                        let mut outer = Vec::new();
                        for d in dims {
                            outer.push(self.scope.bound(own, d)?);
                        }
                        if !outer.is_empty() && r.sequence.is_some() {
                            return Err(DefError::invalid(format!(
                                "{} is an array of sequences, which has no .msg counterpart; not supported",
                                name.join("::")
                            )));
                        }
                        outer.append(&mut r.dims);
                        r.dims = outer;
                        r
                    }
                    _ => {
                        return Err(DefError::invalid(format!(
                            "{} is not a type",
                            name.join("::")
                        )))
                    }
                }
            }
        })
    }

    fn struct_index(&mut self, path: &[String]) -> usize {
        if let Some(&i) = self.index.get(path) {
            return i;
        }
        let i = self.order.len();
        self.order.push(path.to_vec());
        self.index.insert(path.to_vec(), i);
        i
    }
}

fn type_name(path: &[String]) -> String {
    path.join("/")
}

fn val_text(v: &Val) -> String {
    match v {
        Val::Int(n) => n.to_string(),
        Val::Float(f) => f.to_string(),
        Val::Str(s) => s.clone(),
        Val::Bool(b) => u8::from(*b).to_string(),
    }
}

/// Parses an IDL schema and compiles the type named `datatype` (`pkg/msg/Type`,
/// `pkg::msg::Type` or `Type`) with every type it uses.
///
/// ```
/// let idl = "module geo { struct Point { double x; double y; }; \
///            struct Path { sequence<Point, 100> points; string<16> frame; }; };";
/// let def = bagscope::definition::idl::parse("geo::Path", idl).unwrap();
/// let f: Vec<&str> = def.root().fields.iter().map(|f| f.type_text.as_str()).collect();
/// assert_eq!(f, ["geo/Point[<=100]", "string<=16"]);
/// // A definition like a `.msg` one: it compiles into a plan that decodes CDR.
/// let plan = bagscope::encoding::Plan::new_cdr(def);
/// let cdr = [0, 1, 0, 0, /* no points */ 0, 0, 0, 0, /* "map" */ 4, 0, 0, 0, b'm', b'a', b'p', 0];
/// let mut json = String::new();
/// bagscope::encoding::to_json(&plan.def, &plan.decode(&cdr).unwrap().value, &mut json);
/// assert_eq!(json, r#"{"points": [], "frame": "map"}"#);
/// ```
pub fn parse(datatype: &str, text: &str) -> Result<MsgDef, DefError> {
    let derr = |line: Option<usize>, reason: String| DefError {
        kind: crate::error::DefErrorKind::Invalid,
        datatype: datatype.to_string(),
        line,
        reason,
    };
    let toks = Lexer::tokens(text).map_err(|e| e.of(datatype))?;
    let mut p = Parser {
        toks,
        pos: 0,
        scope: Vec::new(),
        items: Vec::new(),
    };
    p.definitions(0).map_err(|e| e.of(datatype))?;
    if p.peek().is_some() {
        let found = p.describe();
        return Err(derr(Some(p.line()), format!("unexpected {found}")));
    }
    let items = p.items;
    let mut by_path: HashMap<Vec<String>, &Item> = HashMap::new();
    for it in &items {
        // A struct reopened or repeated in two sections keeps its first definition.
        by_path.entry(it.path.clone()).or_insert(it);
    }
    let structs: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i.decl, Decl::Struct { .. }))
        .collect();
    let want: Vec<String> = datatype
        .replace("::", "/")
        .replace('.', "/")
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let norm = |p: &[String]| -> Vec<String> {
        p.iter().filter(|s| s.as_str() != "msg").cloned().collect()
    };
    let root = structs
        .iter()
        .find(|s| s.path == want)
        .or_else(|| structs.iter().find(|s| norm(&s.path) == norm(&want)))
        .or_else(|| {
            // A name without its package (or with another prefix, `fastdds/`): a unique match
            // on the last parts.
            let tail: Vec<&&Item> = structs
                .iter()
                .filter(|s| {
                    let n = norm(&s.path);
                    let w = norm(&want);
                    n.ends_with(&w) || w.ends_with(&n)
                })
                .collect();
            match tail[..] {
                [one] => Some(one),
                _ => None,
            }
        })
        .or_else(|| match structs[..] {
            [ref one] => Some(one),
            _ => None,
        })
        .ok_or_else(|| {
            let names: Vec<String> = structs.iter().map(|s| s.path.join("::")).collect();
            derr(
                None,
                format!(
                    "the schema defines no struct named {datatype} (structs: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
            )
        })?;
    let mut c = Compiler {
        scope: Scope { items: by_path },
        order: Vec::new(),
        index: HashMap::new(),
    };
    c.struct_index(&root.path);
    let mut types: Vec<MsgType> = Vec::new();
    let mut k = 0;
    while k < c.order.len() {
        let path = c.order[k].clone();
        let item = *c
            .scope
            .items
            .get(&path)
            .ok_or_else(|| derr(None, format!("struct {} is not defined", path.join("::"))))?;
        let Decl::Struct { members, base } = &item.decl else {
            return Err(derr(
                Some(item.line),
                format!("{} is not a struct", path.join("::")),
            ));
        };
        let own = &path[..path.len() - 1];
        let mut all: Vec<(&Member, &[String])> = Vec::new();
        // A base struct's members come first, as on the wire.
        if let Some((bn, abs)) = base {
            let mut chain = Vec::new();
            let mut cur = c.scope.find(own, bn, *abs);
            while let Some(b) = cur {
                if chain.len() > MAX_DEPTH {
                    return Err(derr(Some(item.line), "base structs nest too deep".into()));
                }
                let Decl::Struct { members, base } = &b.decl else {
                    return Err(derr(
                        Some(item.line),
                        format!("base {} is not a struct", bn.join("::")),
                    ));
                };
                let b_own = &b.path[..b.path.len() - 1];
                chain.push((members, b_own));
                cur = base.as_ref().and_then(|(n, a)| c.scope.find(b_own, n, *a));
            }
            for (ms, sc) in chain.into_iter().rev() {
                all.extend(ms.iter().map(|m| (m, sc)));
            }
        }
        all.extend(members.iter().map(|m| (m, own)));
        // rosidl gives an empty message this one member; it is the byte an empty type takes
        // in CDR, no field (as for a `.msg` definition).
        if let [(m, _)] = all[..] {
            if m.name == "structure_needs_at_least_one_member" && m.dims.is_empty() {
                all.clear();
            }
        }
        let mut fields = Vec::with_capacity(all.len());
        let mut constants = Vec::new();
        for (m, sc) in all {
            let mut r = c.resolve(sc, &m.ty, 0).map_err(|e| {
                derr(
                    Some(m.line),
                    format!("member {} of {}: {}", m.name, path.join("::"), e.reason),
                )
            })?;
            let mut dims = Vec::new();
            for d in &m.dims {
                dims.push(
                    c.scope.bound(sc, d).map_err(|e| {
                        derr(Some(m.line), format!("member {}: {}", m.name, e.reason))
                    })?,
                );
            }
            if !dims.is_empty() && r.sequence.is_some() {
                return Err(derr(
                    Some(m.line),
                    format!(
                        "member {}: an array of sequences has no .msg counterpart; not supported",
                        m.name
                    ),
                ));
            }
            dims.append(&mut r.dims);
            let fixed = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            let array = match (fixed, dims.is_empty(), r.sequence) {
                (_, true, None) => ArrayKind::Scalar,
                (_, true, Some(_)) => ArrayKind::Variable,
                (Some(n), false, None) if n <= MAX_FIXED => ArrayKind::Fixed(n as usize),
                _ => {
                    return Err(derr(
                        Some(m.line),
                        format!("member {}: array of {dims:?} elements is too large", m.name),
                    ))
                }
            };
            let (ty, base_text) = match &r.base {
                Base::Prim(p, bound) => (
                    FieldType::Primitive(*p),
                    match (p, bound) {
                        (Primitive::String, Some(b)) => format!("string<={b}"),
                        (p, _) => p.name().to_string(),
                    },
                ),
                Base::Struct(sp) => (FieldType::Message(c.struct_index(sp)), type_name(sp)),
                Base::Enum(ep, width) => {
                    let ename = ep.last().cloned().unwrap_or_default();
                    let et = format!("enum {ename}");
                    if let Some(Item {
                        decl: Decl::Enum { values, .. },
                        ..
                    }) = c.scope.items.get(ep).copied()
                    {
                        for (n, v) in values {
                            if !constants
                                .iter()
                                .any(|k: &Constant| k.type_text == et && k.name == *n)
                            {
                                constants.push(Constant {
                                    ty: *width,
                                    type_text: et.clone(),
                                    name: n.clone(),
                                    value: v.to_string(),
                                });
                            }
                        }
                    }
                    (FieldType::Primitive(*width), et)
                }
            };
            let suffix = match (array, r.sequence) {
                (ArrayKind::Scalar, _) => String::new(),
                (ArrayKind::Fixed(n), _) => format!("[{n}]"),
                (ArrayKind::Variable, Some(Some(b))) => format!("[<={b}]"),
                (ArrayKind::Variable, _) => "[]".into(),
            };
            fields.push(Field {
                name: m.name.clone(),
                type_text: format!("{base_text}{suffix}"),
                ty,
                array,
            });
        }
        // rosidl writes a type's constants in a module `Type_Constants` beside it.
        let mut cpath = path.clone();
        if let Some(last) = cpath.last_mut() {
            last.push_str("_Constants");
        }
        for it in &items {
            if it.path.len() == cpath.len() + 1 && it.path.starts_with(&cpath) {
                if let Decl::Const { ty, value } = &it.decl {
                    let v = c
                        .scope
                        .eval(&cpath, value, 0)
                        .map_err(|e| e.of(datatype).on_line(it.line))?;
                    let r = c
                        .resolve(&cpath, ty, 0)
                        .map_err(|e| e.of(datatype).on_line(it.line))?;
                    let (prim, text) = match r.base {
                        Base::Prim(p, Some(b)) if p == Primitive::String => {
                            (p, format!("string<={b}"))
                        }
                        Base::Prim(p, _) => (p, p.name().to_string()),
                        Base::Enum(_, w) => (w, w.name().to_string()),
                        Base::Struct(_) => {
                            return Err(derr(Some(it.line), "a constant of a struct type".into()))
                        }
                    };
                    constants.push(Constant {
                        ty: prim,
                        type_text: text,
                        name: it.path.last().cloned().unwrap_or_default(),
                        value: val_text(&v),
                    });
                }
            }
        }
        types.push(MsgType {
            name: type_name(&path),
            fields,
            constants,
        });
        k += 1;
    }
    let def = MsgDef { types };
    def.check_recursion()?;
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMU: &str = r#"// generated from rosidl_adapter/resource/msg.idl.em
// with input from sensor_msgs/msg/Imu.msg
// generated code does not contain a copyright notice

#include "geometry_msgs/msg/Quaternion.idl"
#include "std_msgs/msg/Header.idl"

module sensor_msgs {
  module msg {
    typedef double double__9[9];
    @verbatim (language="comment", text=
      "This is a message to hold data from an IMU")
    struct Imu {
      std_msgs::msg::Header header;

      geometry_msgs::msg::Quaternion orientation;

      double__9 orientation_covariance;
    };
  };
};

================================================================================
IDL: std_msgs/msg/Header
module std_msgs { module msg {
  struct Header {
    builtin_interfaces::msg::Time stamp;
    string frame_id;
  };
}; };
================================================================================
IDL: builtin_interfaces/msg/Time
module builtin_interfaces { module msg {
  struct Time { int32 sec; uint32 nanosec; };
}; };
================================================================================
IDL: geometry_msgs/msg/Quaternion
module geometry_msgs { module msg {
  struct Quaternion {
    @default (value=0.0)
    double x;
    @default (value=0.0)
    double y;
    double z;
    @default (value=1.0)
    double w;
  };
}; };
"#;

    #[test]
    fn rosidl_imu_with_dependencies() {
        let d = parse("sensor_msgs/msg/Imu", IMU).unwrap();
        let names: Vec<&str> = d.types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sensor_msgs/msg/Imu",
                "std_msgs/msg/Header",
                "geometry_msgs/msg/Quaternion",
                "builtin_interfaces/msg/Time"
            ]
        );
        let f = &d.types[0].fields;
        assert_eq!(f[2].type_text, "float64[9]");
        assert_eq!(f[2].array, ArrayKind::Fixed(9));
        assert_eq!(f[1].ty, FieldType::Message(2));
        assert_eq!(
            d.types[3].fields[1].ty,
            FieldType::Primitive(Primitive::U32)
        );
    }

    #[test]
    fn omgidl_constructs() {
        let text = r#"
module fastdds { module demo {
  const long MAX = 4;
  const string GREETING = "hi";
  @bit_bound(8) enum Small { @value(3) A, B };
  enum Mode { OFF, ON = 5, AUTO };
  typedef sequence<double, MAX> Row;
  struct Inner { @key unsigned long id; char c; };
  struct Outer {
    Inner inner;
    sequence<Inner> many, more;
    string<10> name;
    Row row;
    long grid[2][3];
    Mode mode;
    Small small;
    unsigned long long big; long long neg; unsigned short us; short s;
    octet o; boolean b; float f; double d; int8 i8; uint64 u64;
  };
}; };
module Outer_Constants { const long X = 1; };
"#;
        let d = parse("fastdds/demo/Outer", text).unwrap();
        let t = &d.types[0];
        let tt: Vec<(&str, &str)> = t
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.type_text.as_str()))
            .collect();
        assert_eq!(
            tt[..7],
            [
                ("inner", "fastdds/demo/Inner"),
                ("many", "fastdds/demo/Inner[]"),
                ("more", "fastdds/demo/Inner[]"),
                ("name", "string<=10"),
                ("row", "float64[<=4]"),
                ("grid", "int32[6]"),
                ("mode", "enum Mode"),
            ]
        );
        assert_eq!(t.fields[7].ty, FieldType::Primitive(Primitive::U8));
        let c: Vec<(&str, &str, &str)> = t
            .constants
            .iter()
            .map(|c| (c.type_text.as_str(), c.name.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            c,
            [
                ("enum Mode", "OFF", "0"),
                ("enum Mode", "ON", "5"),
                ("enum Mode", "AUTO", "6"),
                ("enum Small", "A", "3"),
                ("enum Small", "B", "4"),
            ]
        );
        // Without the prefix, and by the short name.
        assert!(parse("demo::Outer", text).is_ok());
        assert!(parse("Outer", text).is_ok());
    }

    #[test]
    fn rosidl_constants_and_bounded_types() {
        let text = r#"
module pkg { module msg {
  module State_Constants {
    const uint8 IDLE = 0;
    const uint8 BUSY = 1 + 1;
    const string NAME = "state";
    const double HALF = 0.5;
    const boolean YES = TRUE;
  };
  struct State {
    uint8 state;
    sequence<string<5>, 3> tags;
  };
  struct Empty { uint8 structure_needs_at_least_one_member; };
}; };
"#;
        let d = parse("pkg/msg/State", text).unwrap();
        let c: Vec<(&str, &str)> = d.types[0]
            .constants
            .iter()
            .map(|c| (c.name.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            c,
            [
                ("IDLE", "0"),
                ("BUSY", "2"),
                ("NAME", "state"),
                ("HALF", "0.5"),
                ("YES", "1")
            ]
        );
        assert_eq!(d.types[0].fields[1].type_text, "string<=5[<=3]");
        assert_eq!(d.types.len(), 1);
        // Constant expressions bind as in C; `>>` closes two angle brackets.
        let t = parse(
            "m/T",
            "module m { const long A = 1 + 2 * 3; const long B = (1 << 2) | 1; const long C = A - B / 5;\n struct T { sequence<string<5>> s; sequence<long, A> x; long y[C]; }; };",
        )
        .unwrap();
        let f: Vec<&str> = t.types[0]
            .fields
            .iter()
            .map(|f| f.type_text.as_str())
            .collect();
        assert_eq!(f, ["string<=5[]", "int32[<=7]", "int32[6]"]);
        // rosidl's member of an empty message is no field.
        let e = parse("pkg/msg/Empty", text).unwrap();
        assert!(e.types[0].fields.is_empty());
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = parse("a/B", "module a { struct B { wstring w; }; };").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.reason.contains("wstring is not supported"), "{e}");
        let e = parse("a/B", "module a {\n struct B { long x };\n};").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.reason.contains("expected a name") || e.reason.contains("expected `;`"),
            "{e}"
        );
        let e = parse("a/B", "module a { struct B { C c; }; };").unwrap_err();
        assert!(e.reason.contains("type C is not defined"), "{e}");
        let e = parse(
            "a/B",
            "module a { union U switch (long) { case 1: long x; }; };",
        )
        .unwrap_err();
        assert!(e.reason.contains("unions are not supported"), "{e}");
        let e = parse("a/B", "module a { struct B { @optional long x; }; };").unwrap_err();
        assert!(e.reason.contains("@optional"), "{e}");
        let e = parse(
            "a/Z",
            "module a { struct B { long x; }; struct C { long y; }; };",
        )
        .unwrap_err();
        assert!(
            e.reason
                .contains("no struct named a/Z (structs: a::B, a::C)"),
            "{e}"
        );
        let e = parse("a/B", "module a { struct B { B b; }; };").unwrap_err();
        assert!(
            e.to_string().contains("recurs") || e.to_string().contains("itself"),
            "{e}"
        );
        // Deep nesting and garbage never panic.
        let deep = "module a {".repeat(200);
        assert!(parse("a/B", &deep).is_err());
        assert!(parse("a/B", "struct B { long x[99999999999]; };").is_err());
        assert!(parse("a/B", "\"unclosed").is_err());
    }
}
