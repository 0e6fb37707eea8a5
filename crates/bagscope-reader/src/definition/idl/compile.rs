//! From declarations to definitions: names resolved in their scopes, constant expressions
//! evaluated, typedefs unfolded, each struct reached from the root compiled into a [`MsgType`].

use std::collections::HashMap;

use super::parser::{Decl, Expr, Item, Member, TypeSpec};
use super::{ArrayKind, Constant, Field, FieldType, Primitive, MAX_DEPTH, MAX_FIXED};
use crate::error::DefError;

/// A constant's value once evaluated.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// What names resolve to: the items by full path.
pub(super) struct Scope<'a> {
    pub(super) items: HashMap<Vec<String>, &'a Item>,
}

impl<'a> Scope<'a> {
    /// Resolves `name` written in `scope` (innermost first, then outwards), as IDL does.
    pub(super) fn find(
        &self,
        scope: &[String],
        name: &[String],
        absolute: bool,
    ) -> Option<&'a Item> {
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

    pub(super) fn eval(&self, scope: &[String], e: &Expr, depth: usize) -> Result<Val, DefError> {
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

    pub(super) fn bound(&self, scope: &[String], e: &Expr) -> Result<u64, DefError> {
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
pub(super) struct Resolved {
    pub(super) base: Base,
    /// Fixed dimensions outside in (flattened into one array on the wire).
    pub(super) dims: Vec<u64>,
    /// A sequence (bounded or not) of `base` after `dims` … only one level is representable.
    pub(super) sequence: Option<Option<u64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Base {
    Prim(Primitive, Option<u64>),
    /// A primitive written with its own word (`byte` for `octet`, `char`).
    Word(Primitive, &'static str),
    Struct(Vec<String>),
    Enum(Vec<String>, Primitive),
}

pub(super) struct Compiler<'a> {
    /// The type the schema is compiled for (named in errors).
    pub(super) datatype: &'a str,
    pub(super) scope: Scope<'a>,
    /// Structs by full path, in the order they are first reached from the root.
    pub(super) order: Vec<Vec<String>>,
    pub(super) index: HashMap<Vec<String>, usize>,
}

impl<'a> Compiler<'a> {
    pub(super) fn resolve(
        &self,
        scope: &[String],
        ty: &TypeSpec,
        depth: usize,
    ) -> Result<Resolved, DefError> {
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
            TypeSpec::Word(p, w) => plain(Base::Word(*p, w)),
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

    /// An error in the schema of `self.datatype`, at `line` when known.
    fn err(&self, line: Option<usize>, reason: String) -> DefError {
        let e = DefError::invalid(reason).of(self.datatype);
        match line {
            Some(l) => e.on_line(l),
            None => e,
        }
    }

    /// The members of struct `path` as on the wire (its base structs' first), each with the
    /// scope its type is named in.
    fn members(&self, path: &[String]) -> Result<Vec<(&'a Member, &'a [String])>, DefError> {
        let item =
            *self.scope.items.get(path).ok_or_else(|| {
                self.err(None, format!("struct {} is not defined", path.join("::")))
            })?;
        let Decl::Struct { members, base } = &item.decl else {
            return Err(self.err(
                Some(item.line),
                format!("{} is not a struct", path.join("::")),
            ));
        };
        let own: &'a [String] = &item.path[..item.path.len() - 1];
        let mut all: Vec<(&Member, &[String])> = Vec::new();
        // A base struct's members come first, as on the wire.
        if let Some((bn, abs)) = base {
            let mut chain = Vec::new();
            let mut cur = self.scope.find(own, bn, *abs);
            while let Some(b) = cur {
                if chain.len() > MAX_DEPTH {
                    return Err(self.err(Some(item.line), "base structs nest too deep".into()));
                }
                let Decl::Struct { members, base } = &b.decl else {
                    return Err(self.err(
                        Some(item.line),
                        format!("base {} is not a struct", bn.join("::")),
                    ));
                };
                let b_own = &b.path[..b.path.len() - 1];
                chain.push((members, b_own));
                cur = base
                    .as_ref()
                    .and_then(|(n, a)| self.scope.find(b_own, n, *a));
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
        Ok(all)
    }

    /// The fields of struct `path`, and the constants its enums' values give.
    pub(super) fn struct_fields(
        &mut self,
        path: &[String],
    ) -> Result<(Vec<Field>, Vec<Constant>), DefError> {
        let all = self.members(path)?;
        let mut fields = Vec::with_capacity(all.len());
        let mut constants = Vec::new();
        for (m, sc) in all {
            let mut r = self.resolve(sc, &m.ty, 0).map_err(|e| {
                self.err(
                    Some(m.line),
                    format!("member {} of {}: {}", m.name, path.join("::"), e.reason),
                )
            })?;
            let mut dims = Vec::new();
            for d in &m.dims {
                dims.push(self.scope.bound(sc, d).map_err(|e| {
                    self.err(Some(m.line), format!("member {}: {}", m.name, e.reason))
                })?);
            }
            if !dims.is_empty() && r.sequence.is_some() {
                return Err(self.err(
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
                    return Err(self.err(
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
                Base::Word(p, w) => (FieldType::Primitive(*p), w.to_string()),
                Base::Struct(sp) => (FieldType::Message(self.struct_index(sp)), type_name(sp)),
                Base::Enum(ep, width) => {
                    let ename = ep.last().cloned().unwrap_or_default();
                    let et = format!("enum {ename}");
                    if let Some(Item {
                        decl: Decl::Enum { values, .. },
                        ..
                    }) = self.scope.items.get(ep).copied()
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
        Ok((fields, constants))
    }

    /// The constants of struct `path`: rosidl writes them in a module `Type_Constants` beside
    /// it.
    pub(super) fn type_constants(
        &self,
        items: &[Item],
        path: &[String],
    ) -> Result<Vec<Constant>, DefError> {
        let datatype = self.datatype;
        let mut constants = Vec::new();
        // rosidl writes a type's constants in a module `Type_Constants` beside it.
        let mut cpath = path.to_vec();
        if let Some(last) = cpath.last_mut() {
            last.push_str("_Constants");
        }
        for it in items {
            if it.path.len() == cpath.len() + 1 && it.path.starts_with(&cpath) {
                if let Decl::Const { ty, value } = &it.decl {
                    let v = self
                        .scope
                        .eval(&cpath, value, 0)
                        .map_err(|e| e.of(datatype).on_line(it.line))?;
                    let r = self
                        .resolve(&cpath, ty, 0)
                        .map_err(|e| e.of(datatype).on_line(it.line))?;
                    let (prim, text) = match r.base {
                        Base::Prim(p, Some(b)) if p == Primitive::String => {
                            (p, format!("string<={b}"))
                        }
                        Base::Prim(p, _) | Base::Word(p, _) => (p, p.name().to_string()),
                        Base::Enum(_, w) => (w, w.name().to_string()),
                        Base::Struct(_) => {
                            return Err(
                                self.err(Some(it.line), "a constant of a struct type".into())
                            )
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
        Ok(constants)
    }

    pub(super) fn struct_index(&mut self, path: &[String]) -> usize {
        if let Some(&i) = self.index.get(path) {
            return i;
        }
        let i = self.order.len();
        self.order.push(path.to_vec());
        self.index.insert(path.to_vec(), i);
        i
    }
}

pub(super) fn type_name(path: &[String]) -> String {
    path.join("/")
}

pub(super) fn val_text(v: &Val) -> String {
    match v {
        Val::Int(n) => n.to_string(),
        Val::Float(f) => f.to_string(),
        Val::Str(s) => s.clone(),
        Val::Bool(b) => u8::from(*b).to_string(),
    }
}
