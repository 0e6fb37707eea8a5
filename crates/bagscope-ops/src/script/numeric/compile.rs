//! A parsed snippet made into instructions for a small register machine: locals, globals,
//! constants and temporaries in one flat file of registers, each operation one instruction
//! that reads its operands where they are (`dx = time - prevX` is one `Sub`), run by one loop.
//! A call runs no parser, no table lookup, no Lua stack and no call for each step.

use super::num::{self, Bail, MathFn, Val, R, V};
use super::parse::{Bin, Expr, Place, Stmt, Un};

/// A register.
type Reg = u32;

/// One instruction: the destination register first.
#[derive(Debug, Clone, Copy)]
pub enum Ins {
    Add(Reg, Reg, Reg),
    Sub(Reg, Reg, Reg),
    Mul(Reg, Reg, Reg),
    Div(Reg, Reg, Reg),
    IDiv(Reg, Reg, Reg),
    Mod(Reg, Reg, Reg),
    Pow(Reg, Reg, Reg),
    BAnd(Reg, Reg, Reg),
    BOr(Reg, Reg, Reg),
    BXor(Reg, Reg, Reg),
    Shl(Reg, Reg, Reg),
    Shr(Reg, Reg, Reg),
    Eq(Reg, Reg, Reg),
    Ne(Reg, Reg, Reg),
    Lt(Reg, Reg, Reg),
    Le(Reg, Reg, Reg),
    Neg(Reg, Reg),
    BNot(Reg, Reg),
    Not(Reg, Reg),
    Move(Reg, Reg),
    /// `math.f(a)`.
    Math1(MathFn, Reg, Reg),
    /// `math.f(...)` of `n` arguments in the registers from `a`.
    Math(MathFn, Reg, Reg, u32),
    /// To the instruction when the register is false or nil.
    JumpIfNot(Reg, u32),
    JumpIf(Reg, u32),
    Jump(u32),
    /// Returns the two registers' values (the first two returned).
    Return(Reg, Reg),
}

/// A chunk's instructions.
pub type Code = Vec<Ins>;

/// Runs `code` over `r`: the first two values it returns (nil when it returns none), or
/// [`Bail`] where Lua would raise an error.
pub fn run(code: &[Ins], r: &mut [Val]) -> R<(Val, Val)> {
    macro_rules! bin {
        ($d:expr, $a:expr, $b:expr, $f:expr) => {{
            let v = $f(r[$a as usize].v(), r[$b as usize].v())?;
            r[$d as usize] = Val::of(v);
        }};
    }
    let mut pc = 0;
    while let Some(&ins) = code.get(pc) {
        pc += 1;
        match ins {
            Ins::Add(d, a, b) => bin!(d, a, b, num::add),
            Ins::Sub(d, a, b) => bin!(d, a, b, num::sub),
            Ins::Mul(d, a, b) => bin!(d, a, b, num::mul),
            Ins::Div(d, a, b) => bin!(d, a, b, num::div),
            Ins::IDiv(d, a, b) => bin!(d, a, b, num::idiv),
            Ins::Mod(d, a, b) => bin!(d, a, b, num::modulo),
            Ins::Pow(d, a, b) => bin!(d, a, b, num::pow),
            Ins::BAnd(d, a, b) => bin!(d, a, b, num::band),
            Ins::BOr(d, a, b) => bin!(d, a, b, num::bor),
            Ins::BXor(d, a, b) => bin!(d, a, b, num::bxor),
            Ins::Shl(d, a, b) => bin!(d, a, b, num::shl),
            Ins::Shr(d, a, b) => bin!(d, a, b, num::shr),
            Ins::Eq(d, a, b) => bin!(d, a, b, |x, y| R::Ok(V::Bool(num::eq(x, y)))),
            Ins::Ne(d, a, b) => bin!(d, a, b, |x, y| R::Ok(V::Bool(!num::eq(x, y)))),
            Ins::Lt(d, a, b) => bin!(d, a, b, num::lt),
            Ins::Le(d, a, b) => bin!(d, a, b, num::le),
            Ins::Neg(d, a) => r[d as usize] = Val::of(num::neg(r[a as usize].v())?),
            Ins::BNot(d, a) => r[d as usize] = Val::of(num::bnot(r[a as usize].v())?),
            Ins::Not(d, a) => r[d as usize] = Val::of(V::Bool(!r[a as usize].v().truthy())),
            Ins::Move(d, a) => r[d as usize] = r[a as usize],
            Ins::Math1(f, d, a) => r[d as usize] = Val::of(num::call(f, &[r[a as usize].v()])?),
            Ins::Math(f, d, a, n) => {
                let mut args = [V::Nil; MAX_ARGS];
                let n = n as usize;
                for (k, arg) in args.iter_mut().take(n).enumerate() {
                    *arg = r[a as usize + k].v();
                }
                r[d as usize] = Val::of(num::call(f, &args[..n])?);
            }
            Ins::JumpIfNot(c, to) => {
                if !r[c as usize].v().truthy() {
                    pc = to as usize;
                }
            }
            Ins::JumpIf(c, to) => {
                if r[c as usize].v().truthy() {
                    pc = to as usize;
                }
            }
            Ins::Jump(to) => pc = to as usize,
            Ins::Return(a, b) => return Ok((r[a as usize], r[b as usize])),
        }
    }
    Ok((Val::NIL, Val::NIL))
}

/// The most arguments a `math` call here takes (more: left to Lua).
const MAX_ARGS: usize = 8;

/// Makes the instructions of the chunks of one snippet, and the registers they share.
pub struct Gen {
    /// Every register's value before the snippet runs (constants set, the rest nil).
    pub init: Vec<Val>,
    /// Where the chunk being made has its locals.
    base: Reg,
    /// A register that stays nil.
    nil: Reg,
    code: Code,
}

impl Gen {
    /// Registers for `globals` globals first.
    pub fn new(globals: usize) -> Gen {
        let mut init = vec![Val::NIL; globals];
        init.push(Val::NIL);
        Gen {
            nil: (init.len() - 1) as Reg,
            init,
            base: 0,
            code: Vec::new(),
        }
    }

    /// A chunk's code, its `slots` locals in registers of their own; where its first local
    /// is (the function's parameters are its first locals).
    pub fn chunk(&mut self, body: &[Stmt], slots: usize) -> Option<(Code, Reg)> {
        self.base = self.init.len() as Reg;
        self.init.extend(std::iter::repeat_n(Val::NIL, slots));
        self.code = Vec::new();
        self.block(body)?;
        // Registers are indexed by `u32`, jumps too.
        if self.init.len() > u32::MAX as usize / 2 || self.code.len() > u32::MAX as usize / 2 {
            return None;
        }
        Some((std::mem::take(&mut self.code), self.base))
    }

    fn temp(&mut self) -> Reg {
        self.init.push(Val::NIL);
        (self.init.len() - 1) as Reg
    }

    fn constant(&mut self, v: V) -> Reg {
        self.init.push(Val::of(v));
        (self.init.len() - 1) as Reg
    }

    fn place(&self, p: Place) -> Reg {
        match p {
            Place::Local(s) => self.base + s as Reg,
            Place::Global(s) => s as Reg,
        }
    }

    fn here(&self) -> u32 {
        self.code.len() as u32
    }

    /// Points the jump at `at` to `to`.
    fn patch(&mut self, at: usize, to: u32) {
        match &mut self.code[at] {
            Ins::JumpIfNot(_, t) | Ins::JumpIf(_, t) | Ins::Jump(t) => *t = to,
            _ => {}
        }
    }

    fn block(&mut self, stmts: &[Stmt]) -> Option<()> {
        stmts.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Option<()> {
        match s {
            Stmt::Assign(places, values) => {
                // One name twice: an order Lua leaves undefined.
                let mut seen: Vec<Reg> = places.iter().map(|&p| self.place(p)).collect();
                seen.sort_unstable();
                seen.dedup();
                if seen.len() != places.len() {
                    return None;
                }
                if let ([p], [v]) = (&places[..], &values[..]) {
                    let d = self.place(*p);
                    self.expr(v, Some(d))?;
                    return Some(());
                }
                // Every value first (all of them, as Lua evaluates them), each in a register of
                // its own, then the assignments; missing values are nil.
                let mut got = Vec::with_capacity(values.len());
                for v in values {
                    let t = self.temp();
                    self.expr(v, Some(t))?;
                    got.push(t);
                }
                for (k, &p) in places.iter().enumerate() {
                    let d = self.place(p);
                    let src = got.get(k).copied().unwrap_or(self.nil);
                    self.code.push(Ins::Move(d, src));
                }
            }
            Stmt::If(arms, other) => {
                let mut to_end = Vec::new();
                for (k, (cond, body)) in arms.iter().enumerate() {
                    let c = self.expr(cond, None)?;
                    let skip = self.code.len();
                    self.code.push(Ins::JumpIfNot(c, 0));
                    self.block(body)?;
                    if k + 1 < arms.len() || !other.is_empty() {
                        to_end.push(self.code.len());
                        self.code.push(Ins::Jump(0));
                    }
                    let next = self.here();
                    self.patch(skip, next);
                }
                self.block(other)?;
                let end = self.here();
                for j in to_end {
                    self.patch(j, end);
                }
            }
            Stmt::Do(body) => self.block(body)?,
            Stmt::Return(vals) => {
                let mut regs = Vec::with_capacity(vals.len());
                for v in vals {
                    regs.push(self.expr(v, None)?);
                }
                let first = regs.first().copied().unwrap_or(self.nil);
                let second = regs.get(1).copied().unwrap_or(self.nil);
                self.code.push(Ins::Return(first, second));
            }
        }
        Some(())
    }

    /// Code for `x`: the register holding its value (`dst` when given; else a name's or a
    /// constant's own register, or a new one). Only the last instruction writes `dst`, after
    /// reading its operands, so `x = x + 1` may write `x` itself.
    fn expr(&mut self, x: &Expr, dst: Option<Reg>) -> Option<Reg> {
        let src = match x {
            &Expr::Const(v) | &Expr::Field(v) => self.constant(v),
            &Expr::Local(s) => self.base + s as Reg,
            &Expr::Global(s) => s as Reg,
            Expr::Un(op, a) => {
                let a = self.expr(a, None)?;
                let d = dst.unwrap_or_else(|| self.temp());
                self.code.push(match op {
                    Un::Neg => Ins::Neg(d, a),
                    Un::BNot => Ins::BNot(d, a),
                    Un::Not => Ins::Not(d, a),
                });
                return Some(d);
            }
            Expr::Bin(op @ (Bin::And | Bin::Or), a, b) => {
                // The value is written twice here: into a register of its own, moved after.
                let t = self.temp();
                self.expr(a, Some(t))?;
                let j = self.code.len();
                self.code.push(match op {
                    Bin::And => Ins::JumpIfNot(t, 0),
                    _ => Ins::JumpIf(t, 0),
                });
                self.expr(b, Some(t))?;
                let end = self.here();
                self.patch(j, end);
                t
            }
            Expr::Bin(op, a, b) => {
                // Lua codes `x - K`, K an integer constant it folds, as `x + -K`: the same
                // value but for K = 0 and x = -0.0 (`-0.0 + 0` is 0.0); for any other K in its
                // range (-127..=127) `x + -K` is `x - K`. Where its folding is not followed
                // here, the snippet is left to Lua.
                let mut op = *op;
                let (ra, rb) = match (op, folded(b)) {
                    (Bin::Sub, Fold::Unsure) => return None,
                    (Bin::Sub, Fold::Const(V::Int(0))) => {
                        op = Bin::Add;
                        (self.expr(a, None)?, self.constant(V::Int(0)))
                    }
                    _ => (self.expr(a, None)?, self.expr(b, None)?),
                };
                let d = dst.unwrap_or_else(|| self.temp());
                self.code.push(match op {
                    Bin::Add => Ins::Add(d, ra, rb),
                    Bin::Sub => Ins::Sub(d, ra, rb),
                    Bin::Mul => Ins::Mul(d, ra, rb),
                    Bin::Div => Ins::Div(d, ra, rb),
                    Bin::IDiv => Ins::IDiv(d, ra, rb),
                    Bin::Mod => Ins::Mod(d, ra, rb),
                    Bin::Pow => Ins::Pow(d, ra, rb),
                    Bin::BAnd => Ins::BAnd(d, ra, rb),
                    Bin::BOr => Ins::BOr(d, ra, rb),
                    Bin::BXor => Ins::BXor(d, ra, rb),
                    Bin::Shl => Ins::Shl(d, ra, rb),
                    Bin::Shr => Ins::Shr(d, ra, rb),
                    Bin::Eq => Ins::Eq(d, ra, rb),
                    Bin::Ne => Ins::Ne(d, ra, rb),
                    Bin::Lt => Ins::Lt(d, ra, rb),
                    Bin::Le => Ins::Le(d, ra, rb),
                    // `a > b` is `b < a`: both operands are read before either compare.
                    Bin::Gt => Ins::Lt(d, rb, ra),
                    Bin::Ge => Ins::Le(d, rb, ra),
                    Bin::And | Bin::Or => return None,
                });
                return Some(d);
            }
            Expr::Math(f, args) => {
                if args.len() > MAX_ARGS {
                    return None;
                }
                let instr = if let [a] = &args[..] {
                    let a = self.expr(a, None)?;
                    Ins::Math1(*f, 0, a)
                } else {
                    // The arguments in consecutive registers.
                    let regs: Vec<Reg> = args
                        .iter()
                        .map(|a| self.expr(a, None))
                        .collect::<Option<_>>()?;
                    let first = self.init.len() as Reg;
                    for _ in &regs {
                        self.temp();
                    }
                    for (k, r) in regs.into_iter().enumerate() {
                        self.code.push(Ins::Move(first + k as Reg, r));
                    }
                    Ins::Math(*f, 0, first, args.len() as u32)
                };
                let d = dst.unwrap_or_else(|| self.temp());
                self.code.push(match instr {
                    Ins::Math1(f, _, a) => Ins::Math1(f, d, a),
                    Ins::Math(f, _, a, n) => Ins::Math(f, d, a, n),
                    other => other,
                });
                return Some(d);
            }
        };
        // A name's or a constant's own register: moved when a destination is given.
        match dst {
            Some(d) if d != src => {
                self.code.push(Ins::Move(d, src));
                Some(d)
            }
            Some(d) => Some(d),
            None => Some(src),
        }
    }
}

/// What Lua's code generator makes of an expression (`constfolding` of `lcode.c`).
enum Fold {
    /// A numeric constant it folds.
    Const(V),
    /// Computed when it runs.
    Runtime,
    /// Folded in ways not followed here (logical operators over constants).
    Unsure,
}

/// `luaO_rawarith` as `constfolding` takes it: a numeric result, never a float 0 or NaN.
fn folded(x: &Expr) -> Fold {
    let keep = |v: V| match v {
        V::Int(_) => Fold::Const(v),
        V::Float(f) if f != 0.0 && !f.is_nan() => Fold::Const(v),
        _ => Fold::Runtime,
    };
    match x {
        &Expr::Const(v @ (V::Int(_) | V::Float(_))) => Fold::Const(v),
        Expr::Const(_) | Expr::Field(_) | Expr::Local(_) | Expr::Global(_) | Expr::Math(..) => {
            Fold::Runtime
        }
        Expr::Un(Un::Not, a) => match folded(a) {
            Fold::Runtime if !constant(a) => Fold::Runtime,
            _ => Fold::Unsure,
        },
        Expr::Un(op, a) => match folded(a) {
            Fold::Const(v) => {
                let r = match op {
                    Un::Neg => num::neg(v),
                    _ => num::bnot(v),
                };
                r.map_or(Fold::Runtime, keep)
            }
            other => other,
        },
        Expr::Bin(op, a, b) => match (folded(a), folded(b)) {
            (Fold::Unsure, _) | (_, Fold::Unsure) => Fold::Unsure,
            (Fold::Const(x), Fold::Const(y)) if arithmetic(*op) => {
                // `validop`: no division by 0, bitwise operands with integers.
                let divides = matches!(op, Bin::Div | Bin::IDiv | Bin::Mod);
                if divides && y.as_f64() == Some(0.0) {
                    return Fold::Runtime;
                }
                apply(*op, x, y).map_or(Fold::Runtime, keep)
            }
            _ if !arithmetic(*op) && constant(a) && constant(b) => Fold::Unsure,
            _ => Fold::Runtime,
        },
    }
}

/// `op` on two values (the logical operators are not folded).
fn apply(op: Bin, x: V, y: V) -> R<V> {
    match op {
        Bin::Add => num::add(x, y),
        Bin::Sub => num::sub(x, y),
        Bin::Mul => num::mul(x, y),
        Bin::Div => num::div(x, y),
        Bin::IDiv => num::idiv(x, y),
        Bin::Mod => num::modulo(x, y),
        Bin::Pow => num::pow(x, y),
        Bin::BAnd => num::band(x, y),
        Bin::BOr => num::bor(x, y),
        Bin::BXor => num::bxor(x, y),
        Bin::Shl => num::shl(x, y),
        Bin::Shr => num::shr(x, y),
        _ => Err(Bail),
    }
}

fn arithmetic(op: Bin) -> bool {
    !matches!(
        op,
        Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::And | Bin::Or
    )
}

/// Whether `x` reads nothing that changes when it runs.
fn constant(x: &Expr) -> bool {
    match x {
        Expr::Const(_) => true,
        Expr::Field(_) | Expr::Local(_) | Expr::Global(_) | Expr::Math(..) => false,
        Expr::Un(_, a) => constant(a),
        Expr::Bin(_, a, b) => constant(a) && constant(b),
    }
}
