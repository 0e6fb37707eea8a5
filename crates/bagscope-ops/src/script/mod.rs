//! Scripts: your own logic over a recording, in Lua 5.4 (vendored, so no system Lua is needed).
//!
//! A **series script** is PlotJuggler's custom function: a global section run once, then a
//! function of `(time, value, v1, …, vN)` called for every sample of its main series, with the
//! additional sources' **nearest** samples (PlotJuggler's alignment) and state kept from sample to
//! sample. It returns a number, a `(time, value)` pair, a table of `{time, value}` points or,
//! beyond PlotJuggler, a table of named numbers (several series from one script).
//!
//! - [`sandbox`]: the Lua state a script runs in (safe libraries, an instruction budget per call,
//!   a memory limit);
//! - [`series`]: one series script run over series in memory;
//! - `numeric`: series scripts written in Lua's numbers-only subset, compiled and run without a
//!   Lua state (as Lua would run them, value for value);
//! - [`plotjuggler`]: PlotJuggler's `<customMathEquations>` and snippet files read, their series
//!   names resolved against a recording;
//! - [`mod@file`]: bagscope's script files and inline snippets (`NAME(SOURCE, …) = BODY`);
//! - [`layout`]: what a layout plots (its curves or paths, its scripts), as columns;
//! - [`eval`]: scripts over a recording: their sources read in one pass, scripts that read
//!   other scripts run after them.

pub mod encode;
pub mod eval;
pub mod file;
pub mod foxglove;
pub mod layout;
pub mod message;
mod numeric;
pub mod plotjuggler;
pub mod sandbox;
pub mod series;

pub use eval::{check, evaluate, makes, ScriptRun, ScriptSeries};
pub use sandbox::Limits;
pub use series::{Dialect, SeriesScript};

/// What went wrong in a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScriptErrorKind {
    /// The text does not parse as Lua.
    Syntax,
    /// A Lua error while it ran.
    Runtime,
    /// It ran past its instruction budget.
    Budget,
    /// It ran past its memory limit.
    Memory,
    /// It returned something that is not a series' point.
    Return,
    /// A source it names is not in the recording, or the scripts read each other in a circle.
    Source,
}

/// Which part of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The global section (or the whole script file).
    Global,
    /// The function called for each sample.
    Function,
    /// The script as a whole (its sources, its name).
    Script,
}

/// An error of a script: which script, where in it, at which sample, and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ScriptError {
    /// The script's name.
    pub script: String,
    /// What went wrong.
    pub kind: ScriptErrorKind,
    /// The part of the script.
    pub part: Part,
    /// The line within that part (from 1).
    pub line: Option<u32>,
    /// The receive time of the sample or message being handled (ns).
    pub time_ns: Option<u64>,
    /// Its number (from 0) in the main series.
    pub sample: Option<u64>,
    /// Lua's message, or bagscope's.
    pub message: String,
}

impl ScriptError {
    /// An error of the script as a whole.
    pub fn script(script: &str, kind: ScriptErrorKind, message: String) -> ScriptError {
        ScriptError {
            script: script.to_string(),
            kind,
            part: Part::Script,
            line: None,
            time_ns: None,
            sample: None,
            message,
        }
    }

    fn describe(&self) -> String {
        let mut s = format!("script {:?}", self.script);
        match (self.part, self.line) {
            (Part::Global, Some(l)) => s.push_str(&format!(", global section line {l}")),
            (Part::Function, Some(l)) => s.push_str(&format!(", function line {l}")),
            (Part::Global, None) => s.push_str(", global section"),
            (Part::Function, None) => s.push_str(", function"),
            (Part::Script, _) => {}
        }
        if let Some(t) = self.time_ns {
            s.push_str(&format!(", at {}", crate::timefmt::secs(t)));
            if let Some(n) = self.sample {
                s.push_str(&format!(" (sample {n})"));
            }
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}
