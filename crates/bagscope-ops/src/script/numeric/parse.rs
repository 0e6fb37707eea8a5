//! A numeric snippet parsed (`lparser.c`'s grammar and priorities, restricted): assignments
//! to names, `local`, `if`/`elseif`/`else`, `do`, `return`, and expressions of numbers,
//! booleans, `nil`, names, the arithmetic, bitwise, comparison and logical operators and calls
//! of `math` functions. Anything else — a loop, a function, a table, a string, an index, a call
//! of anything but `math` — gives `None`: Lua runs that snippet.

use std::collections::HashMap;

use super::lex::Tok;
use super::num::{math_constant, MathFn, V};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    IDiv,
    Mod,
    Pow,
    BAnd,
    BOr,
    BXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Un {
    Neg,
    Not,
    BNot,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(V),
    /// A constant of `math` (`math.pi`): a value, but read when it runs, as Lua reads it.
    Field(V),
    Local(usize),
    Global(usize),
    Un(Un, Box<Expr>),
    Bin(Bin, Box<Expr>, Box<Expr>),
    Math(MathFn, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Local(usize),
    Global(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `a, b = x, y` (and `local a, b = x, y`, whose places are new slots).
    Assign(Vec<Place>, Vec<Expr>),
    If(Vec<(Expr, Vec<Stmt>)>, Vec<Stmt>),
    Do(Vec<Stmt>),
    Return(Vec<Expr>),
}

/// A chunk parsed: its statements and how many local slots it uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub body: Vec<Stmt>,
    pub slots: usize,
}

/// Names a snippet may not take as its own: the sandbox's globals (and what a Lua state may
/// hold beyond them), `calc` and `_ENV`. A snippet naming one is run by Lua.
const RESERVED: &[&str] = &[
    "_ENV",
    "_G",
    "_VERSION",
    "assert",
    "bit32",
    "calc",
    "collectgarbage",
    "coroutine",
    "debug",
    "dofile",
    "error",
    "getmetatable",
    "io",
    "ipairs",
    "jit",
    "load",
    "loadfile",
    "loadstring",
    "math",
    "module",
    "next",
    "os",
    "package",
    "pairs",
    "pcall",
    "print",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "require",
    "select",
    "setmetatable",
    "string",
    "table",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "utf8",
    "warn",
    "xpcall",
];

pub fn reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

/// Parses chunks that share one set of globals.
pub struct Parser<'g> {
    toks: Vec<Tok>,
    at: usize,
    globals: &'g mut HashMap<String, usize>,
    /// Names in scope, innermost last, with their slots.
    scope: Vec<(String, usize)>,
    slots: usize,
    /// How deep the expressions and blocks nest here.
    depth: usize,
}

/// Lua's own limits: locals a function may have (`MAXVARS`), and how deep a snippet here may
/// nest (Lua's is `LUAI_MAXCCALLS`, 200; deeper snippets are left to it).
const MAX_LOCALS: usize = 200;
const MAX_DEPTH: usize = 100;

type P<T> = Option<T>;

impl<'g> Parser<'g> {
    /// A parser of `toks`, with `params` as its first locals.
    pub fn new(toks: Vec<Tok>, params: &[String], globals: &'g mut HashMap<String, usize>) -> Self {
        let scope: Vec<(String, usize)> = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        Parser {
            toks,
            at: 0,
            globals,
            slots: scope.len(),
            scope,
            depth: 0,
        }
    }

    /// The whole chunk.
    pub fn chunk(mut self) -> P<Chunk> {
        let body = self.block()?;
        if self.at != self.toks.len() || self.slots > MAX_LOCALS {
            return None;
        }
        Some(Chunk {
            body,
            slots: self.slots,
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn is(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(t)) if *t == s)
    }

    fn eat(&mut self, s: &str) -> bool {
        let yes = self.is(s);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, s: &str) -> P<()> {
        self.eat(s).then_some(())
    }

    fn name(&mut self) -> P<String> {
        match self.peek() {
            Some(Tok::Name(n)) => {
                let n = n.clone();
                self.at += 1;
                Some(n)
            }
            _ => None,
        }
    }

    /// Whether the block ends here (`block_follow`).
    fn block_ends(&self) -> bool {
        self.peek().is_none()
            || ["end", "else", "elseif", "until"]
                .iter()
                .any(|s| self.is(s))
    }

    fn block(&mut self) -> P<Vec<Stmt>> {
        self.deeper()?;
        let depth = self.scope.len();
        let mut out = Vec::new();
        while !self.block_ends() {
            if self.eat("return") {
                let vals = if self.block_ends() || self.is(";") {
                    Vec::new()
                } else {
                    self.exprs()?
                };
                self.eat(";");
                if !self.block_ends() {
                    return None;
                }
                out.push(Stmt::Return(vals));
                break;
            }
            if let Some(s) = self.statement()? {
                out.push(s);
            }
        }
        self.scope.truncate(depth);
        self.depth -= 1;
        Some(out)
    }

    /// One level deeper, if within [`MAX_DEPTH`].
    fn deeper(&mut self) -> P<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// One statement (`None` inside for `;`).
    fn statement(&mut self) -> P<Option<Stmt>> {
        if self.eat(";") {
            return Some(None);
        }
        if self.eat("if") {
            let mut arms = Vec::new();
            let cond = self.expr(0)?;
            self.expect("then")?;
            arms.push((cond, self.block()?));
            let mut other = Vec::new();
            loop {
                if self.eat("elseif") {
                    let cond = self.expr(0)?;
                    self.expect("then")?;
                    arms.push((cond, self.block()?));
                } else if self.eat("else") {
                    other = self.block()?;
                    self.expect("end")?;
                    break;
                } else {
                    self.expect("end")?;
                    break;
                }
            }
            return Some(Some(Stmt::If(arms, other)));
        }
        if self.eat("do") {
            let b = self.block()?;
            self.expect("end")?;
            return Some(Some(Stmt::Do(b)));
        }
        if self.eat("local") {
            let mut names = vec![self.name()?];
            while self.eat(",") {
                names.push(self.name()?);
            }
            if names.iter().any(|n| reserved(n)) {
                return None;
            }
            // `local x <const>`: left to Lua.
            let vals = if self.eat("=") {
                self.exprs()?
            } else {
                Vec::new()
            };
            let places = names
                .into_iter()
                .map(|n| {
                    let slot = self.slots;
                    self.slots += 1;
                    self.scope.push((n, slot));
                    Place::Local(slot)
                })
                .collect();
            return Some(Some(Stmt::Assign(places, vals)));
        }
        // What is left of the subset: an assignment to names.
        let mut places = vec![self.place()?];
        while self.eat(",") {
            places.push(self.place()?);
        }
        self.expect("=")?;
        let vals = self.exprs()?;
        Some(Some(Stmt::Assign(places, vals)))
    }

    /// A name assigned to.
    fn place(&mut self) -> P<Place> {
        let n = self.name()?;
        if self.suffix_follows() {
            return None;
        }
        Some(match self.resolve(&n)? {
            Expr::Local(s) => Place::Local(s),
            Expr::Global(s) => Place::Global(s),
            _ => return None,
        })
    }

    /// A local's or a global's slot (a reserved global is not the subset's).
    fn resolve(&mut self, n: &str) -> P<Expr> {
        if let Some((_, slot)) = self.scope.iter().rev().find(|(m, _)| m == n) {
            return Some(Expr::Local(*slot));
        }
        if reserved(n) {
            return None;
        }
        let k = self.globals.len();
        Some(Expr::Global(
            *self.globals.entry(n.to_string()).or_insert(k),
        ))
    }

    /// An index, a call or a method after a primary expression: not the subset's.
    fn suffix_follows(&self) -> bool {
        [".", "[", "(", ":", "{"].iter().any(|s| self.is(s))
    }

    fn exprs(&mut self) -> P<Vec<Expr>> {
        let mut v = vec![self.expr(0)?];
        while self.eat(",") {
            v.push(self.expr(0)?);
        }
        Some(v)
    }

    /// `subexpr` with Lua 5.4's priorities.
    fn expr(&mut self, limit: u8) -> P<Expr> {
        self.deeper()?;
        let un = if self.eat("not") {
            Some(Un::Not)
        } else if self.eat("-") {
            Some(Un::Neg)
        } else if self.eat("~") {
            Some(Un::BNot)
        } else {
            None
        };
        let mut e = match un {
            Some(op) => Expr::Un(op, Box::new(self.expr(12)?)),
            None => self.simple()?,
        };
        // A chain of operators nests its tree as deep as it is long: bounded too.
        let mut chain = 0;
        while let Some((op, left, right)) = self.binop() {
            if left <= limit {
                break;
            }
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return None;
            }
            self.at += 1;
            let r = self.expr(right)?;
            e = Expr::Bin(op, Box::new(e), Box::new(r));
        }
        self.depth -= 1;
        Some(e)
    }

    /// The binary operator here, with its left and right priorities.
    fn binop(&self) -> Option<(Bin, u8, u8)> {
        let Some(Tok::Sym(s)) = self.peek() else {
            return None;
        };
        Some(match *s {
            "+" => (Bin::Add, 10, 10),
            "-" => (Bin::Sub, 10, 10),
            "*" => (Bin::Mul, 11, 11),
            "%" => (Bin::Mod, 11, 11),
            "^" => (Bin::Pow, 14, 13),
            "/" => (Bin::Div, 11, 11),
            "//" => (Bin::IDiv, 11, 11),
            "&" => (Bin::BAnd, 6, 6),
            "|" => (Bin::BOr, 4, 4),
            "~" => (Bin::BXor, 5, 5),
            "<<" => (Bin::Shl, 7, 7),
            ">>" => (Bin::Shr, 7, 7),
            "==" => (Bin::Eq, 3, 3),
            "~=" => (Bin::Ne, 3, 3),
            "<" => (Bin::Lt, 3, 3),
            "<=" => (Bin::Le, 3, 3),
            ">" => (Bin::Gt, 3, 3),
            ">=" => (Bin::Ge, 3, 3),
            "and" => (Bin::And, 2, 2),
            "or" => (Bin::Or, 1, 1),
            // `..` (strings) is not the subset's: the expression stops and the statement fails.
            _ => return None,
        })
    }

    fn simple(&mut self) -> P<Expr> {
        let t = self.peek()?.clone();
        self.at += 1;
        let e = match t {
            Tok::Int(i) => Expr::Const(V::Int(i)),
            Tok::Float(f) => Expr::Const(V::Float(f)),
            Tok::Sym("nil") => Expr::Const(V::Nil),
            Tok::Sym("true") => Expr::Const(V::Bool(true)),
            Tok::Sym("false") => Expr::Const(V::Bool(false)),
            Tok::Sym("(") => {
                let e = self.expr(0)?;
                self.expect(")")?;
                e
            }
            Tok::Name(n) if n == "math" && self.scope.iter().all(|(m, _)| *m != n) => {
                self.expect(".")?;
                let f = self.name()?;
                if let Some(c) = math_constant(&f) {
                    Expr::Field(c)
                } else {
                    let f = MathFn::named(&f)?;
                    self.expect("(")?;
                    let args = if self.is(")") {
                        Vec::new()
                    } else {
                        self.exprs()?
                    };
                    self.expect(")")?;
                    Expr::Math(f, args)
                }
            }
            Tok::Name(n) => self.resolve(&n)?,
            _ => return None,
        };
        if self.suffix_follows() {
            return None;
        }
        Some(e)
    }
}
