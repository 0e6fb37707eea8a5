//! Numeric series scripts compiled, run without a Lua state.
//!
//! Most of what people write in PlotJuggler's custom functions is numbers only: a derivative,
//! a unit change, a yaw from a quaternion, a flag gating a value, state kept in globals. Calling
//! into Lua for each of millions of samples costs more than such a snippet's work (mlua's
//! protected call: about 55 ns a sample). A snippet written in this subset of Lua 5.4 —
//! assignments to names, `local`, `if`/`elseif`/`else`, `do`, `return`, numbers, booleans,
//! `nil`, every arithmetic, bitwise, comparison and logical operator, the `math` functions and
//! constants — is parsed here (`lex`, `parse`), made into instructions for a small register
//! machine (`compile`) and run over the samples with Lua 5.4's own semantics for integers and
//! floats (`num`).
//!
//! Anything else goes to Lua as before: a snippet with a loop, a function, a table, a string,
//! `print` or any library but `math` is not compiled, and where a compiled snippet would raise
//! an error (arithmetic on nil, `n // 0`, a return that is not a point) the whole series is run
//! again by Lua, which says the error in its own words. So the results are Lua's, value for
//! value; the tests hold both against each other and against Debian's `lua5.4`.

mod compile;
mod lex;
mod num;
mod parse;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use compile::{Code, Gen};
use num::{Val, V};

use super::series::{nearest, ns_of, Dialect, Made, Samples, SeriesScript};

/// A series script compiled: its global section and its function.
pub struct Program {
    global: Code,
    function: Code,
    /// The registers' values before it runs.
    init: Vec<Val>,
    /// The register of the function's first parameter (`time`; `value`, `v1`… follow).
    params_at: usize,
    params: usize,
}

impl Program {
    /// `script` compiled for `extra` additional sources, or `None` when it is not written in
    /// the numeric subset (or defines `calc` itself, as a script file does).
    pub fn compile(script: &SeriesScript, extra: usize) -> Option<Program> {
        let body = script.function.as_deref()?;
        let mut globals = HashMap::new();
        let g = parse::Parser::new(lex::tokens(&script.global)?, &[], &mut globals).chunk()?;
        let mut params = vec!["time".to_string(), "value".to_string()];
        params.extend((1..=extra).map(|i| format!("v{i}")));
        let f = parse::Parser::new(lex::tokens(body)?, &params, &mut globals).chunk()?;
        let mut gen = Gen::new(globals.len());
        let (global, _) = gen.chunk(&g.body, g.slots)?;
        let (function, at) = gen.chunk(&f.body, f.slots.max(params.len()))?;
        Some(Program {
            global,
            function,
            init: gen.init,
            params_at: at as usize,
            params: params.len(),
        })
    }

    /// Runs it as [`super::series::run`] does; `None` where Lua would raise an error (Lua then
    /// runs it and says which). A cancelled run gives nothing.
    pub fn run(
        &self,
        script: &SeriesScript,
        main: &[(u64, f64)],
        extra: &[&[(u64, f64)]],
        cancel: &AtomicBool,
    ) -> Option<Made> {
        if extra.len() + 2 != self.params {
            return None;
        }
        let mut r = self.init.clone();
        compile::run(&self.global, &mut r).ok()?;
        let at = self.params_at;
        let xs: Vec<Vec<f64>> = extra
            .iter()
            .map(|s| s.iter().map(|&(t, _)| t as f64 / 1e9).collect())
            .collect();
        let mut cursors = vec![0usize; extra.len()];
        let mut own: Samples = Vec::with_capacity(main.len());
        for (k, &(t_ns, value)) in main.iter().enumerate() {
            if k % 4096 == 0 && cancel.load(Ordering::Relaxed) {
                return Some(Made::default());
            }
            let t = t_ns as f64 / 1e9;
            r[at] = Val::of(V::Float(t));
            r[at + 1] = Val::of(V::Float(value));
            for (j, s) in extra.iter().enumerate() {
                let v = nearest(&xs[j], t, &mut cursors[j]).map_or(f64::NAN, |i| s[i].1);
                r[at + 2 + j] = Val::of(V::Float(v));
            }
            let (first, second) = compile::run(&self.function, &mut r).ok()?;
            match (first.v(), second.v()) {
                (V::Nil, _) => match script.dialect {
                    Dialect::Bagscope => {}
                    Dialect::PlotJuggler => return None,
                },
                (first, second) => {
                    let x = first.as_f64()?;
                    match second.as_f64() {
                        Some(y) => own.push((ns_of(x).ok()?, y)),
                        None => own.push((t_ns, x)),
                    }
                }
            }
        }
        own.sort_by_key(|p| p.0);
        Some(Made {
            series: vec![(script.name.clone(), own)],
            printed: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests;
