//! Argument groups several verbs share, defined once.

use clap::Args;

use crate::cli::Error;
use bagscope_ops::timefmt;
use bagscope_reader::Bag;

/// A time range: `--start` and `--end`.
#[derive(Args, Debug, Clone, Default)]
pub struct Range {
    /// Start time: epoch seconds, or +S seconds from the recording's start.
    #[arg(long, allow_hyphen_values = true)]
    pub start: Option<String>,
    /// End time (exclusive), same forms as --start.
    #[arg(long, allow_hyphen_values = true)]
    pub end: Option<String>,
}

impl Range {
    /// The two ends as given.
    pub fn as_strs(&self) -> (Option<&str>, Option<&str>) {
        (self.start.as_deref(), self.end.as_deref())
    }
}

/// How a single-channel image, a map, a scan or a cloud is drawn.
#[derive(Args, Debug, Clone, Default)]
pub struct Render {
    /// grey or turbo, for single-channel images (default: turbo for depth and float).
    #[arg(long)]
    pub colormap: Option<String>,
    /// Value drawn as the colormap's start (default: each image's own smallest valid value).
    #[arg(long, requires = "max")]
    pub min: Option<f32>,
    /// Value drawn as the colormap's end.
    #[arg(long, requires = "min")]
    pub max: Option<f32>,
    /// Quarter turns clockwise.
    #[arg(long, default_value_t = 0)]
    pub rotate: u8,
}

impl Render {
    /// The colormap's fixed range, where both ends are given.
    pub fn range(&self) -> Option<(f32, f32)> {
        self.min.zip(self.max)
    }
}

/// `start`/`end` as epoch nanoseconds (`+S` counts from the recording's start, which is known
/// before its rows are read).
pub fn time_range(
    bag: &Bag,
    start: Option<&str>,
    end: Option<&str>,
) -> crate::cli::Result<(Option<u64>, Option<u64>)> {
    let s0 = bag.quick_summary().start_ns.unwrap_or(0);
    let p = |s: Option<&str>| -> crate::cli::Result<Option<u64>> {
        s.map(|s| timefmt::parse_time(s, s0).map_err(Error::from))
            .transpose()
    };
    Ok((p(start)?, p(end)?))
}

/// What expressions are evaluated with: `--var`, `--let`, `--interp`.
#[derive(Args, Debug, Clone, Default)]
pub struct ExprEnv {
    /// A variable for `$NAME` in indexes, slices, filters and formulas: NAME=VALUE (a number,
    /// true, false, or text). Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// A named series for `$NAME` in formulas: NAME=EXPRESSION. Repeatable.
    #[arg(long = "let", value_name = "NAME=EXPRESSION")]
    pub lets: Vec<String>,
    /// How a formula's series are aligned on the union of their times: hold (each keeps its
    /// last value) or linear (interpolated).
    #[arg(long, default_value = "hold")]
    pub interp: String,
}

impl ExprEnv {
    /// The environment, or what is wrong with an option.
    pub fn env(&self) -> crate::cli::Result<bagscope_reader::series::Env> {
        use bagscope_reader::expr::{Expr, Lit};
        use bagscope_reader::series::Env;
        let split = |s: &str, what: &'static str| -> crate::cli::Result<(String, String)> {
            match s.split_once('=') {
                Some((n, v))
                    if !n.trim().is_empty()
                        && n.trim()
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    Ok((n.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(bagscope_ops::timefmt::ArgError::new(
                    what,
                    s,
                    format!("{s:?}: expected NAME=VALUE"),
                )
                .into()),
            }
        };
        let mut env = Env {
            interp: self.interp.parse().map_err(|e: String| {
                bagscope_ops::timefmt::ArgError::new("--interp", &self.interp, e)
            })?,
            ..Env::default()
        };
        for v in &self.vars {
            let (name, value) = split(v, "--var")?;
            let lit = Lit::of_text(&value);
            env.vars.insert(name, lit);
        }
        for l in &self.lets {
            let (name, text) = split(l, "--let")?;
            env.named.push((name, Expr::parse(&text)?));
        }
        Ok(env)
    }
}
