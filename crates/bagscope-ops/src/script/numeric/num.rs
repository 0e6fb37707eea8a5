//! Lua 5.4's values as a numeric snippet sees them (nil, booleans, integers, floats) and its
//! arithmetic, comparisons and `math` functions on them, as `lvm.c`, `lobject.c` and
//! `lmathlib.c` of Lua 5.4 define them: integer arithmetic wraps, `/` and `^` are float,
//! `//` and `%` floor, integers and floats compare by their mathematical values.
//!
//! Where Lua raises an error (arithmetic on nil, `n // 0`, a float with no integer value in a
//! bitwise operation, …) these return [`Bail`]: the snippet is then run by Lua itself, which says
//! the error in its own words.

/// A Lua value of a numeric snippet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum V {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
}

/// Lua would raise an error here (or the snippet leaves what is compiled): run it in Lua.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bail;

pub type R<T> = Result<T, Bail>;

impl V {
    /// Lua's truth: all but `nil` and `false`.
    #[inline]
    pub fn truthy(self) -> bool {
        !matches!(self, V::Nil | V::Bool(false))
    }

    /// The value as a float (integers converted), if a number.
    #[inline]
    pub fn as_f64(self) -> Option<f64> {
        match self {
            V::Int(i) => Some(i as f64),
            V::Float(x) => Some(x),
            _ => None,
        }
    }
}

/// 2^63 as a float: floats in [-2^63, 2^63) have an integer (`lua_numbertointeger`).
const TWO_63: f64 = -(i64::MIN as f64);

/// `lua_numbertointeger`: the integer of a float with an integral value in range.
#[inline]
fn float_to_int(f: f64) -> Option<i64> {
    (-TWO_63..TWO_63).contains(&f).then_some(f as i64)
}

/// How a float is taken to an integer (`F2Imod` of `lvm.c`).
#[derive(Clone, Copy)]
enum F2I {
    Exact,
    Floor,
    Ceil,
}

/// `luaV_flttointns`.
fn flt_to_int(n: f64, mode: F2I) -> Option<i64> {
    let mut f = n.floor();
    if n != f {
        match mode {
            F2I::Exact => return None,
            F2I::Floor => {}
            F2I::Ceil => f += 1.0,
        }
    }
    float_to_int(f)
}

/// An integer for bitwise operations (`luaV_tointegerns` with `F2Ieq`).
#[inline]
fn to_int(v: V) -> R<i64> {
    match v {
        V::Int(i) => Ok(i),
        V::Float(f) => flt_to_int(f, F2I::Exact).ok_or(Bail),
        _ => Err(Bail),
    }
}

#[inline]
fn to_float(v: V) -> R<f64> {
    v.as_f64().ok_or(Bail)
}

/// `+`, `-`, `*`: integers wrap, else floats.
macro_rules! ring {
    ($name:ident, $int:ident, $op:tt) => {
        #[inline]
        pub fn $name(a: V, b: V) -> R<V> {
            match (a, b) {
                (V::Float(x), V::Float(y)) => Ok(V::Float(x $op y)),
                (V::Int(x), V::Int(y)) => Ok(V::Int(x.$int(y))),
                (V::Int(x), V::Float(y)) => Ok(V::Float(x as f64 $op y)),
                (V::Float(x), V::Int(y)) => Ok(V::Float(x $op y as f64)),
                _ => Err(Bail),
            }
        }
    };
}
ring!(add, wrapping_add, +);
ring!(sub, wrapping_sub, -);
ring!(mul, wrapping_mul, *);

#[inline]
pub fn div(a: V, b: V) -> R<V> {
    Ok(V::Float(to_float(a)? / to_float(b)?))
}

/// `luai_numpow`: `a*a` when the exponent is 2, else C's `pow`.
#[inline]
pub fn pow(a: V, b: V) -> R<V> {
    let (x, y) = (to_float(a)?, to_float(b)?);
    Ok(V::Float(if y == 2.0 { x * x } else { x.powf(y) }))
}

/// `//`: `luaV_idiv` for integers (an error dividing by 0), `floor(a/b)` for floats.
pub fn idiv(a: V, b: V) -> R<V> {
    match (a, b) {
        (V::Int(m), V::Int(n)) => match n {
            0 => Err(Bail),
            -1 => Ok(V::Int(0i64.wrapping_sub(m))),
            _ => {
                let mut q = m / n;
                if (m ^ n) < 0 && m % n != 0 {
                    q -= 1;
                }
                Ok(V::Int(q))
            }
        },
        _ => Ok(V::Float((to_float(a)? / to_float(b)?).floor())),
    }
}

/// `%`: `luaV_mod` for integers (an error for 0), `luai_nummod` for floats.
pub fn modulo(a: V, b: V) -> R<V> {
    match (a, b) {
        (V::Int(m), V::Int(n)) => match n {
            0 => Err(Bail),
            -1 => Ok(V::Int(0)),
            _ => {
                let mut r = m % n;
                if r != 0 && (r ^ n) < 0 {
                    r += n;
                }
                Ok(V::Int(r))
            }
        },
        _ => {
            let (x, y) = (to_float(a)?, to_float(b)?);
            let mut m = x % y;
            if if m > 0.0 { y < 0.0 } else { m < 0.0 && y > 0.0 } {
                m += y;
            }
            Ok(V::Float(m))
        }
    }
}

#[inline]
pub fn neg(a: V) -> R<V> {
    match a {
        V::Int(i) => Ok(V::Int(0i64.wrapping_sub(i))),
        V::Float(x) => Ok(V::Float(-x)),
        _ => Err(Bail),
    }
}

pub fn band(a: V, b: V) -> R<V> {
    Ok(V::Int(to_int(a)? & to_int(b)?))
}

pub fn bor(a: V, b: V) -> R<V> {
    Ok(V::Int(to_int(a)? | to_int(b)?))
}

pub fn bxor(a: V, b: V) -> R<V> {
    Ok(V::Int(to_int(a)? ^ to_int(b)?))
}

pub fn bnot(a: V) -> R<V> {
    Ok(V::Int(!to_int(a)?))
}

/// `luaV_shiftl`: logical shifts, 0 past 63 bits.
fn shift_left(x: i64, y: i64) -> i64 {
    if y < 0 {
        if y <= -64 {
            0
        } else {
            ((x as u64) >> (-y) as u32) as i64
        }
    } else if y >= 64 {
        0
    } else {
        ((x as u64) << y as u32) as i64
    }
}

pub fn shl(a: V, b: V) -> R<V> {
    Ok(V::Int(shift_left(to_int(a)?, to_int(b)?)))
}

pub fn shr(a: V, b: V) -> R<V> {
    Ok(V::Int(shift_left(
        to_int(a)?,
        0i64.wrapping_sub(to_int(b)?),
    )))
}

/// `l_intfitsf`: integers in [-2^53, 2^53] are floats exactly.
#[inline]
fn fits_float(i: i64) -> bool {
    (-(1i64 << 53)..=(1i64 << 53)).contains(&i)
}

/// `a < b` (`LTnum`); comparing other than two numbers is Lua's error.
pub fn lt(a: V, b: V) -> R<V> {
    Ok(V::Bool(match (a, b) {
        (V::Int(x), V::Int(y)) => x < y,
        (V::Float(x), V::Float(y)) => x < y,
        (V::Int(i), V::Float(f)) => {
            if fits_float(i) {
                (i as f64) < f
            } else {
                match flt_to_int(f, F2I::Ceil) {
                    Some(fi) => i < fi,
                    None => f > 0.0,
                }
            }
        }
        (V::Float(f), V::Int(i)) => {
            if fits_float(i) {
                f < i as f64
            } else {
                match flt_to_int(f, F2I::Floor) {
                    Some(fi) => fi < i,
                    None => f < 0.0,
                }
            }
        }
        _ => return Err(Bail),
    }))
}

/// `a <= b` (`LEnum`).
pub fn le(a: V, b: V) -> R<V> {
    Ok(V::Bool(match (a, b) {
        (V::Int(x), V::Int(y)) => x <= y,
        (V::Float(x), V::Float(y)) => x <= y,
        (V::Int(i), V::Float(f)) => {
            if fits_float(i) {
                (i as f64) <= f
            } else {
                match flt_to_int(f, F2I::Floor) {
                    Some(fi) => i <= fi,
                    None => f > 0.0,
                }
            }
        }
        (V::Float(f), V::Int(i)) => {
            if fits_float(i) {
                f <= i as f64
            } else {
                match flt_to_int(f, F2I::Ceil) {
                    Some(fi) => fi <= i,
                    None => f < 0.0,
                }
            }
        }
        _ => return Err(Bail),
    }))
}

/// `a == b` (`luaV_equalobj`): an integer equals a float of the same integral value.
pub fn eq(a: V, b: V) -> bool {
    match (a, b) {
        (V::Nil, V::Nil) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Int(x), V::Int(y)) => x == y,
        (V::Float(x), V::Float(y)) => x == y,
        (V::Int(i), V::Float(f)) | (V::Float(f), V::Int(i)) => flt_to_int(f, F2I::Exact) == Some(i),
        _ => false,
    }
}

/// The `math` functions a numeric snippet may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFn {
    Abs,
    Ceil,
    Floor,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Exp,
    Log,
    Fmod,
    Max,
    Min,
    ToInteger,
    Ult,
}

impl MathFn {
    pub fn named(name: &str) -> Option<MathFn> {
        Some(match name {
            "abs" => MathFn::Abs,
            "ceil" => MathFn::Ceil,
            "floor" => MathFn::Floor,
            "sqrt" => MathFn::Sqrt,
            "sin" => MathFn::Sin,
            "cos" => MathFn::Cos,
            "tan" => MathFn::Tan,
            "asin" => MathFn::Asin,
            "acos" => MathFn::Acos,
            "atan" => MathFn::Atan,
            "exp" => MathFn::Exp,
            "log" => MathFn::Log,
            "fmod" => MathFn::Fmod,
            "max" => MathFn::Max,
            "min" => MathFn::Min,
            "tointeger" => MathFn::ToInteger,
            "ult" => MathFn::Ult,
            _ => return None,
        })
    }
}

/// The `math` constants.
pub fn math_constant(name: &str) -> Option<V> {
    Some(match name {
        "pi" => V::Float(std::f64::consts::PI),
        "huge" => V::Float(f64::INFINITY),
        "maxinteger" => V::Int(i64::MAX),
        "mininteger" => V::Int(i64::MIN),
        _ => return None,
    })
}

/// `pushnumint`: an integer when the float has one, else the float.
fn num_int(f: f64) -> V {
    float_to_int(f).map_or(V::Float(f), V::Int)
}

/// Calls `f` as `lmathlib.c` does (a missing or wrong argument is Lua's error).
pub fn call(f: MathFn, args: &[V]) -> R<V> {
    let arg = |k: usize| args.get(k).copied().ok_or(Bail);
    let num = |k: usize| arg(k).and_then(to_float);
    Ok(match f {
        MathFn::Abs => match arg(0)? {
            V::Int(i) => V::Int(i.wrapping_abs()),
            v => V::Float(to_float(v)?.abs()),
        },
        MathFn::Floor => match arg(0)? {
            V::Int(i) => V::Int(i),
            v => num_int(to_float(v)?.floor()),
        },
        MathFn::Ceil => match arg(0)? {
            V::Int(i) => V::Int(i),
            v => num_int(to_float(v)?.ceil()),
        },
        MathFn::Sqrt => V::Float(num(0)?.sqrt()),
        MathFn::Sin => V::Float(num(0)?.sin()),
        MathFn::Cos => V::Float(num(0)?.cos()),
        MathFn::Tan => V::Float(num(0)?.tan()),
        MathFn::Asin => V::Float(num(0)?.asin()),
        MathFn::Acos => V::Float(num(0)?.acos()),
        MathFn::Exp => V::Float(num(0)?.exp()),
        MathFn::Atan => {
            let y = num(0)?;
            let x = match args.get(1) {
                None | Some(V::Nil) => 1.0,
                Some(&v) => to_float(v)?,
            };
            V::Float(y.atan2(x))
        }
        MathFn::Log => {
            let x = num(0)?;
            match args.get(1) {
                None | Some(V::Nil) => V::Float(x.ln()),
                Some(&b) => {
                    let base = to_float(b)?;
                    V::Float(if base == 2.0 {
                        x.log2()
                    } else if base == 10.0 {
                        x.log10()
                    } else {
                        x.ln() / base.ln()
                    })
                }
            }
        }
        MathFn::Fmod => match (arg(0)?, arg(1)?) {
            (V::Int(m), V::Int(d)) => match d {
                0 => return Err(Bail),
                -1 => V::Int(0),
                _ => V::Int(m % d),
            },
            (a, b) => V::Float(to_float(a)? % to_float(b)?),
        },
        MathFn::Max | MathFn::Min => {
            // `lua_compare` only: one argument of any kind is given back as it is.
            let mut best = arg(0)?;
            for &v in &args[1..] {
                let better = if f == MathFn::Max {
                    lt(best, v)?
                } else {
                    lt(v, best)?
                };
                if better == V::Bool(true) {
                    best = v;
                }
            }
            best
        }
        MathFn::ToInteger => match arg(0)? {
            V::Int(i) => V::Int(i),
            V::Float(x) => flt_to_int(x, F2I::Exact).map_or(V::Nil, V::Int),
            // Anything else given is `fail` (Lua 5.4.4's `math_toint`).
            _ => V::Nil,
        },
        MathFn::Ult => V::Bool((to_int(arg(0)?)? as u64) < (to_int(arg(1)?)? as u64)),
    })
}

/// A value as the register machine keeps it: two words, so it travels in registers and is
/// stored and loaded whole (an enum with a byte tag was written in parts and read back at once,
/// which stalls the processor's store forwarding at every step).
#[derive(Debug, Clone, Copy)]
pub struct Val {
    tag: u64,
    bits: u64,
}

const NIL: u64 = 0;
const BOOL: u64 = 1;
const INT: u64 = 2;
const FLOAT: u64 = 3;

impl Val {
    pub const NIL: Val = Val { tag: NIL, bits: 0 };

    #[inline(always)]
    pub fn of(v: V) -> Val {
        match v {
            V::Nil => Val::NIL,
            V::Bool(b) => Val {
                tag: BOOL,
                bits: u64::from(b),
            },
            V::Int(i) => Val {
                tag: INT,
                bits: i as u64,
            },
            V::Float(f) => Val {
                tag: FLOAT,
                bits: f.to_bits(),
            },
        }
    }

    /// The value.
    #[inline(always)]
    pub fn v(self) -> V {
        match self.tag {
            BOOL => V::Bool(self.bits != 0),
            INT => V::Int(self.bits as i64),
            FLOAT => V::Float(f64::from_bits(self.bits)),
            _ => V::Nil,
        }
    }
}
