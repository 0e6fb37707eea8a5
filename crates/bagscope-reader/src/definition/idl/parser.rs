//! The IDL parser: declarations (modules, structs, typedefs, enums, constants) as written, each
//! with its full scoped name, before any name is resolved.

use super::lexer::Tok;
use super::{Primitive, MAX_DEPTH};
use crate::error::DefError;

/// A type as written, before names are resolved.
#[derive(Debug, Clone)]
pub(super) enum TypeSpec {
    Prim(Primitive),
    /// A primitive that keeps its own word: `octet` (written `byte`, as `.msg` names an
    /// octet) and `char`, which a type hash tells from `uint8`.
    Word(Primitive, &'static str),
    /// `string` or `string<N>`.
    String(Option<Expr>),
    Sequence(Box<TypeSpec>, Option<Expr>),
    /// A scoped name and the scope it was written in.
    Named(Vec<String>, bool),
}

/// An expression as written (constants, bounds).
#[derive(Debug, Clone)]
pub(super) enum Expr {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    Name(Vec<String>, bool),
    Neg(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone)]
pub(super) struct Member {
    pub(super) name: String,
    pub(super) ty: TypeSpec,
    pub(super) dims: Vec<Expr>,
    pub(super) line: usize,
}

#[derive(Debug, Clone)]
pub(super) enum Decl {
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
pub(super) struct Item {
    /// The full scoped name.
    pub(super) path: Vec<String>,
    pub(super) decl: Decl,
    pub(super) line: usize,
}

pub(super) struct Parser {
    pub(super) toks: Vec<(Tok, usize)>,
    pub(super) pos: usize,
    pub(super) scope: Vec<String>,
    pub(super) items: Vec<Item>,
}

pub(super) type PResult<T> = Result<T, DefError>;

impl Parser {
    pub(super) fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.1)
    }

    pub(super) fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(DefError::invalid(msg).on_line(self.line()))
    }

    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    pub(super) fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some((t, _)) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => self.err("the schema ends too early"),
        }
    }

    pub(super) fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    pub(super) fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if i == w)
    }

    pub(super) fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            let found = self.describe();
            self.err(format!("expected `{p}`, found {found}"))
        }
    }

    pub(super) fn describe(&self) -> String {
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

    pub(super) fn ident(&mut self) -> PResult<String> {
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
    pub(super) fn annotations(&mut self) -> PResult<Vec<(String, Vec<Tok>)>> {
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

    pub(super) fn refuse(&self, anns: &[(String, Vec<Tok>)]) -> PResult<()> {
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

    pub(super) fn definitions(&mut self, depth: usize) -> PResult<()> {
        if depth > MAX_DEPTH {
            return self.err("modules nest too deep");
        }
        while self.peek().is_some() && !self.is_punct("}") {
            self.definition(depth)?;
        }
        Ok(())
    }

    pub(super) fn definition(&mut self, depth: usize) -> PResult<()> {
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
    pub(super) fn declarators(&mut self) -> PResult<Vec<(String, Vec<Expr>)>> {
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

    pub(super) fn push(&mut self, name: String, decl: Decl, line: usize) {
        let mut path = self.scope.clone();
        path.push(name);
        self.items.push(Item { path, decl, line });
    }

    /// The `>` that closes `sequence<...>` or `string<...>`; of a `>>`, the first half (the
    /// second closes the enclosing one).
    pub(super) fn close_angle(&mut self) -> PResult<()> {
        if self.is_punct(">>") {
            self.toks[self.pos].0 = Tok::Punct(">");
            return Ok(());
        }
        self.expect(">")
    }

    pub(super) fn scoped_name(&mut self) -> PResult<(Vec<String>, bool)> {
        let absolute = self.eat_punct("::");
        let mut parts = vec![self.ident()?];
        while self.eat_punct("::") {
            parts.push(self.ident()?);
        }
        Ok((parts, absolute))
    }

    pub(super) fn dims(&mut self) -> PResult<Vec<Expr>> {
        let mut dims = Vec::new();
        while self.eat_punct("[") {
            dims.push(self.expr()?);
            self.expect("]")?;
        }
        Ok(dims)
    }

    pub(super) fn type_spec(&mut self) -> PResult<TypeSpec> {
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
                    "uint8" => Some(Primitive::U8),
                    "octet" | "char" => {
                        self.pos += 1;
                        let w = if word == "char" { "char" } else { "byte" };
                        return Ok(TypeSpec::Word(Primitive::U8, w));
                    }
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

    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    /// An expression inside `<...>`, where `>>` closes rather than shifts.
    pub(super) fn expr_no_gt(&mut self) -> PResult<Expr> {
        self.binary(1)
    }

    /// Binary operators from the loosest binding (`|`, shifts) to the tightest (`*`, `/`).
    const LEVELS: [&'static [&'static str]; 3] = [&["|", "<<", ">>"], &["+", "-"], &["*", "/"]];

    pub(super) fn binary(&mut self, level: usize) -> PResult<Expr> {
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
    pub(super) fn operator(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        let op = ops.iter().copied().find(|p| self.is_punct(p))?;
        self.pos += 1;
        Some(op)
    }

    pub(super) fn expr_unary(&mut self) -> PResult<Expr> {
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
