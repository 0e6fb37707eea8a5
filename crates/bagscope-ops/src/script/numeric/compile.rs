//! A parsed snippet made into closures: each expression and statement a closure over its
//! parts, locals and globals in flat slots, so a call runs no parser, no table lookup and no
//! Lua stack.

use super::num::{self, Bail, Val, R, V};
use super::parse::{Bin, Expr, Place, Stmt, Un};

/// Where a running snippet keeps its values.
pub struct Env {
    pub globals: Vec<Val>,
    pub locals: Vec<Val>,
    /// The first two values of the last `return`.
    pub ret: (Val, Val),
}

/// An expression: its value (or an error, `Val::get` says).
pub type Ex = Box<dyn Fn(&mut Env) -> Val>;
/// A statement: whether it went on, returned or raised an error.
pub type St = Box<dyn Fn(&mut Env) -> Flow>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Returned,
    Bail,
}

impl Flow {
    /// Whether it returned, or [`Bail`].
    #[inline(always)]
    pub fn get(self) -> R<bool> {
        match self {
            Flow::Next => Ok(false),
            Flow::Returned => Ok(true),
            Flow::Bail => Err(Bail),
        }
    }
}

/// An expression's closure from one written with `?`.
fn ex(f: impl Fn(&mut Env) -> R<V> + 'static) -> Ex {
    Box::new(move |e| Val::from(f(e)))
}

/// A statement's closure from one written with `?`.
fn st(f: impl Fn(&mut Env) -> R<bool> + 'static) -> St {
    Box::new(move |e| match f(e) {
        Ok(false) => Flow::Next,
        Ok(true) => Flow::Returned,
        Err(Bail) => Flow::Bail,
    })
}

/// An operand read where it is, with no call: a local, a global or a constant.
#[derive(Clone, Copy)]
enum Leaf {
    Local(usize),
    Global(usize),
    Const(V),
}

impl Leaf {
    fn of(x: &Expr) -> Option<Leaf> {
        Some(match *x {
            Expr::Local(s) => Leaf::Local(s),
            Expr::Global(s) => Leaf::Global(s),
            Expr::Const(v) | Expr::Field(v) => Leaf::Const(v),
            _ => return None,
        })
    }

    #[inline(always)]
    fn get(self, e: &Env) -> V {
        match self {
            Leaf::Local(s) => e.locals[s].v(),
            Leaf::Global(s) => e.globals[s].v(),
            Leaf::Const(v) => v,
        }
    }
}

/// An operand: a leaf, or an expression's closure.
enum Operand {
    Leaf(Leaf),
    Ex(Ex),
}

fn operand(x: &Expr) -> Option<Operand> {
    Some(match Leaf::of(x) {
        Some(l) => Operand::Leaf(l),
        None => Operand::Ex(expr(x)?),
    })
}

/// What a binary operation's closure does with its value: an expression gives it back, a
/// statement stores or returns it. Made with the operation inlined in one closure (each
/// operator its own closure type, leaves read in place), so an assignment such as
/// `dx = time - prevX` is one call, not three.
trait Sink: Copy + 'static {
    type Out;
    fn done(self, f: impl Fn(&mut Env) -> R<V> + 'static) -> Self::Out;
}

/// The value given back.
#[derive(Clone, Copy)]
struct Value;

impl Sink for Value {
    type Out = Ex;
    fn done(self, f: impl Fn(&mut Env) -> R<V> + 'static) -> Ex {
        ex(f)
    }
}

/// The value stored.
#[derive(Clone, Copy)]
struct Store(Place);

impl Sink for Store {
    type Out = St;
    fn done(self, f: impl Fn(&mut Env) -> R<V> + 'static) -> St {
        let p = self.0;
        st(move |e| {
            let v = f(e)?;
            store(e, p, v);
            Ok(false)
        })
    }
}

/// The value returned (alone).
#[derive(Clone, Copy)]
struct Return;

impl Sink for Return {
    type Out = St;
    fn done(self, f: impl Fn(&mut Env) -> R<V> + 'static) -> St {
        st(move |e| {
            e.ret = (Val::of(f(e)?), Val::NIL);
            Ok(true)
        })
    }
}

fn binary<F, S>(a: Operand, b: Operand, f: F, sink: S) -> S::Out
where
    F: Fn(V, V) -> R<V> + Copy + 'static,
    S: Sink,
{
    match (a, b) {
        (Operand::Leaf(x), Operand::Leaf(y)) => sink.done(move |e| f(x.get(e), y.get(e))),
        (Operand::Leaf(x), Operand::Ex(b)) => sink.done(move |e| {
            let y = b(e).get()?;
            f(x.get(e), y)
        }),
        (Operand::Ex(a), Operand::Leaf(y)) => sink.done(move |e| {
            let x = a(e).get()?;
            f(x, y.get(e))
        }),
        (Operand::Ex(a), Operand::Ex(b)) => sink.done(move |e| {
            let x = a(e).get()?;
            let y = b(e).get()?;
            f(x, y)
        }),
    }
}

/// [`binary`] for `op` (not `and`, `or`: `None`).
fn operator<S: Sink>(op: Bin, a: Operand, b: Operand, k: S) -> Option<S::Out> {
    Some(match op {
        Bin::Add => binary(a, b, num::add, k),
        Bin::Sub => binary(a, b, num::sub, k),
        Bin::Mul => binary(a, b, num::mul, k),
        Bin::Div => binary(a, b, num::div, k),
        Bin::IDiv => binary(a, b, num::idiv, k),
        Bin::Mod => binary(a, b, num::modulo, k),
        Bin::Pow => binary(a, b, num::pow, k),
        Bin::BAnd => binary(a, b, num::band, k),
        Bin::BOr => binary(a, b, num::bor, k),
        Bin::BXor => binary(a, b, num::bxor, k),
        Bin::Shl => binary(a, b, num::shl, k),
        Bin::Shr => binary(a, b, num::shr, k),
        Bin::Eq => binary(a, b, |x, y| Ok(V::Bool(num::eq(x, y))), k),
        Bin::Ne => binary(a, b, |x, y| Ok(V::Bool(!num::eq(x, y))), k),
        Bin::Lt => binary(a, b, num::lt, k),
        Bin::Le => binary(a, b, num::le, k),
        Bin::Gt => binary(a, b, |x, y| num::lt(y, x), k),
        Bin::Ge => binary(a, b, |x, y| num::le(y, x), k),
        Bin::And | Bin::Or => return None,
    })
}

/// `x` made for `sink`: a binary operation fused into it, else its expression's closure.
fn into_sink<S: Sink>(x: &Expr, sink: S) -> Option<S::Out> {
    match x {
        Expr::Bin(Bin::Sub, a, b) if !matches!(folded(b), Fold::Runtime) => match folded(b) {
            // Lua codes `x - K`, K an integer constant it folds, as `x + -K`: the same value
            // but for K = 0 and x = -0.0 (`-0.0 + 0` is 0.0). (For any other K in its range,
            // -127..=127, `x + -K` is `x - K`.) Where its folding is not followed here, the
            // snippet is left to Lua.
            Fold::Const(V::Int(0)) => Some(binary(
                operand(a)?,
                Operand::Leaf(Leaf::Const(V::Int(0))),
                num::add,
                sink,
            )),
            Fold::Const(c) => Some(binary(
                operand(a)?,
                Operand::Leaf(Leaf::Const(c)),
                num::sub,
                sink,
            )),
            _ => None,
        },
        Expr::Bin(op, a, b) if !matches!(op, Bin::And | Bin::Or) => {
            operator(*op, operand(a)?, operand(b)?, sink)
        }
        _ => {
            let f = expr(x)?;
            Some(sink.done(move |e| f(e).get()))
        }
    }
}

pub fn expr(x: &Expr) -> Option<Ex> {
    Some(match x {
        &Expr::Const(v) | &Expr::Field(v) => {
            let v = Val::of(v);
            Box::new(move |_| v)
        }
        &Expr::Local(s) => Box::new(move |e| e.locals[s]),
        &Expr::Global(s) => Box::new(move |e| e.globals[s]),
        Expr::Un(op, a) => {
            let a = expr(a)?;
            match op {
                Un::Neg => ex(move |e| num::neg(a(e).get()?)),
                Un::BNot => ex(move |e| num::bnot(a(e).get()?)),
                Un::Not => ex(move |e| Ok(V::Bool(!a(e).get()?.truthy()))),
            }
        }
        Expr::Bin(Bin::And, a, b) => {
            let (a, b) = (expr(a)?, expr(b)?);
            ex(move |e| {
                let x = a(e).get()?;
                if x.truthy() {
                    b(e).get()
                } else {
                    Ok(x)
                }
            })
        }
        Expr::Bin(Bin::Or, a, b) => {
            let (a, b) = (expr(a)?, expr(b)?);
            ex(move |e| {
                let x = a(e).get()?;
                if x.truthy() {
                    Ok(x)
                } else {
                    b(e).get()
                }
            })
        }
        Expr::Bin(..) => into_sink(x, Value)?,
        Expr::Math(f, args) => {
            let f = *f;
            let args: Vec<Ex> = args.iter().map(expr).collect::<Option<_>>()?;
            match args.len() {
                1 => {
                    let a = args.into_iter().next()?;
                    ex(move |e| num::call(f, &[a(e).get()?]))
                }
                _ => ex(move |e| {
                    let mut vals = [V::Nil; 8];
                    if args.len() > vals.len() {
                        return Err(Bail);
                    }
                    for (k, a) in args.iter().enumerate() {
                        vals[k] = a(e).get()?;
                    }
                    num::call(f, &vals[..args.len()])
                }),
            }
        }
    })
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

fn store(e: &mut Env, p: Place, v: V) {
    let v = Val::of(v);
    match p {
        Place::Local(s) => e.locals[s] = v,
        Place::Global(s) => e.globals[s] = v,
    }
}

/// A statement, or `None` when it assigns one name twice (an order Lua leaves undefined).
pub fn stmt(s: &Stmt) -> Option<St> {
    Some(match s {
        Stmt::Assign(places, values) => {
            let mut seen = places.clone();
            seen.sort_by_key(|p| match *p {
                Place::Local(s) => (0, s),
                Place::Global(s) => (1, s),
            });
            seen.dedup();
            if seen.len() != places.len() {
                return None;
            }
            if let ([p], [v]) = (&places[..], &values[..]) {
                return match Leaf::of(v) {
                    Some(l) => {
                        let p = *p;
                        Some(st(move |e| {
                            let x = l.get(e);
                            store(e, p, x);
                            Ok(false)
                        }))
                    }
                    None => into_sink(v, Store(*p)),
                };
            }
            let vals: Vec<Ex> = values.iter().map(expr).collect::<Option<_>>()?;
            let places = places.clone();
            st(move |e| {
                // Every value first (all of them, as Lua evaluates them), then the
                // assignments; missing values are nil.
                let mut got = Vec::with_capacity(vals.len());
                for v in &vals {
                    got.push(v(e).get()?);
                }
                for (k, &p) in places.iter().enumerate() {
                    store(e, p, got.get(k).copied().unwrap_or(V::Nil));
                }
                Ok(false)
            })
        }
        Stmt::If(arms, other) => {
            let conds: Vec<&Expr> = arms.iter().map(|(c, _)| c).collect();
            let arms: Vec<(Option<Leaf>, St)> = arms
                .iter()
                .map(|(c, b)| Some((Leaf::of(c), block(b)?)))
                .collect::<Option<_>>()?;
            let no_else = other.is_empty();
            let other = block(other)?;
            if let [(Some(l), _)] = arms[..] {
                let (_, then) = arms.into_iter().next()?;
                if no_else {
                    return Some(Box::new(move |e| {
                        if l.get(e).truthy() {
                            then(e)
                        } else {
                            Flow::Next
                        }
                    }));
                }
                return Some(Box::new(
                    move |e| {
                        if l.get(e).truthy() {
                            then(e)
                        } else {
                            other(e)
                        }
                    },
                ));
            }
            let arms: Vec<(Ex, St)> = conds
                .iter()
                .zip(arms)
                .map(|(c, (_, b))| Some((expr(c)?, b)))
                .collect::<Option<_>>()?;
            Box::new(move |e| {
                for (c, b) in &arms {
                    match c(e).get() {
                        Ok(v) if v.truthy() => return b(e),
                        Ok(_) => {}
                        Err(Bail) => return Flow::Bail,
                    }
                }
                other(e)
            })
        }
        Stmt::Do(b) => block(b)?,
        Stmt::Return(vals) if vals.len() == 1 => into_sink(&vals[0], Return)?,
        Stmt::Return(vals) => {
            let vals: Vec<Ex> = vals.iter().map(expr).collect::<Option<_>>()?;
            st(move |e| {
                let mut ret = (Val::NIL, Val::NIL);
                for (k, v) in vals.iter().enumerate() {
                    let x = Val::of(v(e).get()?);
                    match k {
                        0 => ret.0 = x,
                        1 => ret.1 = x,
                        _ => {}
                    }
                }
                e.ret = ret;
                Ok(true)
            })
        }
    })
}

pub fn block(stmts: &[Stmt]) -> Option<St> {
    let stmts = statements(stmts)?;
    Some(match stmts.len() {
        1 => stmts.into_iter().next()?,
        _ => Box::new(move |e| run(&stmts, e)),
    })
}

/// A block's statements, each its closure (a chunk's are run by [`run`] where it is called,
/// one call fewer a sample).
pub fn statements(stmts: &[Stmt]) -> Option<Vec<St>> {
    stmts.iter().map(stmt).collect()
}

/// Runs statements in order, to the first that returns or raises an error.
#[inline]
pub fn run(stmts: &[St], e: &mut Env) -> Flow {
    for s in stmts {
        match s(e) {
            Flow::Next => {}
            done => return done,
        }
    }
    Flow::Next
}
