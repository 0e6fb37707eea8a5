//! Expressions from arbitrary text, evaluated on arbitrary bytes: the input is a ROS 1
//! definition, a 0 byte, an expression, a 0 byte, then a message. Parsing must give an
//! expression or an error pointing into the text (never a panic); a path that compiles against
//! the definition gives its values from any bytes (fast or decoded), and a formula's modifiers
//! and arithmetic run over a series of them, never panicking.
#![no_main]

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::Plan;
use bagscope_reader::expr::{eval, Expr, Interp, Leaves, Lit, Points, Val, Vars};
use libfuzzer_sys::fuzz_target;

/// Every path's series: the message's values at times 0, 1, 1, 2 ... and a variable.
struct Series(Vec<Points>);

impl Leaves for Series {
    fn path(&mut self, i: usize) -> Result<Points, String> {
        Ok(self.0.get(i).cloned().unwrap_or_default())
    }
    fn var(&mut self, _: &str) -> Result<Val, String> {
        Ok(Val::Num(2.0))
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(def), Some(text), msg) = (parts.next(), parts.next(), parts.next().unwrap_or(&[]))
    else {
        return;
    };
    let (Ok(def), Ok(text)) = (std::str::from_utf8(def), std::str::from_utf8(text)) else {
        return;
    };
    let e = match Expr::parse(text) {
        Ok(e) => e,
        Err(err) => {
            assert!(err.at <= text.len() && !err.reason.is_empty());
            let _ = err.to_string();
            return;
        }
    };
    let Ok(def) = MsgDef::parse("f/F", def) else {
        return;
    };
    let plan = Plan::new(def);
    let mut vars = Vars::new();
    vars.insert("i".into(), Lit::Int(1));
    let mut series = Vec::new();
    for p in e.paths() {
        let mut pts = Vec::new();
        if let Ok(g) = bagscope_reader::expr::compile(&plan, p, &vars, text) {
            let mut out = Vec::new();
            for (k, cut) in [msg.len(), msg.len() / 2, 0].into_iter().enumerate() {
                out.clear();
                g.values(&msg[..cut], &mut out);
                pts.extend(
                    out.iter()
                        .map(|v| (k as u64 / 2, v.as_f64().unwrap_or(f64::NAN))),
                );
            }
        }
        series.push(pts);
    }
    let _ = eval(&e.root, &mut Series(series), Interp::Linear);
});
