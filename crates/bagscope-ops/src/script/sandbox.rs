//! The Lua state a script runs in: Lua 5.4 with `math`, `string`, `table`, `utf8`, `os.time`,
//! `os.clock` and `os.difftime` only (no `io`, `require`, `load`, `dofile`, `debug`, no file or
//! network access), an instruction budget per call and a memory limit per script.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Value, VmState};

/// What one script may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lua instructions one call (the global section, or one sample's or message's call) may
    /// run before it is stopped.
    pub instructions: u64,
    /// Bytes the script's Lua state may hold.
    pub memory: usize,
}

impl Default for Limits {
    /// 100 million instructions a call, 256 MiB a script.
    fn default() -> Self {
        Limits {
            instructions: 100_000_000,
            memory: 256 << 20,
        }
    }
}

/// How often (in instructions) the budget is counted.
const STEP: u32 = 1000;

/// Lines of `print` a script keeps.
pub const PRINT_LINES: usize = 100;

/// A sandboxed Lua state and its instruction counter.
pub struct Sandbox {
    pub(crate) lua: Lua,
    used: Rc<Cell<u64>>,
    limits: Limits,
    printed: Rc<std::cell::RefCell<Vec<String>>>,
}

impl Sandbox {
    /// A new state with the safe libraries and `limits`.
    pub fn new(limits: Limits) -> mlua::Result<Sandbox> {
        let libs = StdLib::MATH | StdLib::STRING | StdLib::TABLE | StdLib::UTF8 | StdLib::OS;
        let lua = Lua::new_with(libs, LuaOptions::default())?;
        let g = lua.globals();
        for name in [
            "dofile",
            "loadfile",
            "load",
            "loadstring",
            "require",
            "collectgarbage",
            "module",
            "package",
            "io",
            "debug",
        ] {
            g.raw_set(name, Value::Nil)?;
        }
        // `os` without what reaches outside: the clock and the calendar's seconds only.
        let os: mlua::Table = g.get("os")?;
        let safe = lua.create_table()?;
        for name in ["time", "clock", "difftime"] {
            safe.set(name, os.get::<Value>(name)?)?;
        }
        g.set("os", safe)?;
        // `string.dump` gives a function's bytecode, which nothing loads here: left out.
        let string: mlua::Table = g.get("string")?;
        string.set("dump", Value::Nil)?;
        // `print` writes to the script's own lines (the first few kept).
        let printed = Rc::new(std::cell::RefCell::new(Vec::new()));
        let p = printed.clone();
        let print = lua.create_function(move |_, args: mlua::MultiValue| {
            let mut lines = p.borrow_mut();
            if lines.len() < PRINT_LINES {
                let words: Vec<String> = args
                    .iter()
                    .map(|v| v.to_string().unwrap_or_else(|_| format!("{v:?}")))
                    .collect();
                lines.push(words.join("\t"));
            }
            Ok(())
        })?;
        g.set("print", print)?;
        drop(g);
        lua.set_memory_limit(limits.memory)?;
        let used = Rc::new(Cell::new(0u64));
        let u = used.clone();
        let budget = limits.instructions;
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(STEP),
            move |_, debug| {
                let n = u.get() + u64::from(STEP);
                u.set(n);
                if n > budget {
                    // Where it was: `chunk:line: `, as Lua's own errors say it.
                    let src = debug.source();
                    let at = match (src.short_src, debug.current_line()) {
                        (Some(chunk), Some(line)) => format!("{chunk}:{line}: "),
                        _ => String::new(),
                    };
                    return Err(mlua::Error::runtime(format!(
                        "{at}stopped after {budget} instructions (a loop that does not end?)"
                    )));
                }
                Ok(VmState::Continue)
            },
        )?;
        Ok(Sandbox {
            lua,
            used,
            limits,
            printed,
        })
    }

    /// Starts a new call's budget.
    pub(crate) fn start_call(&self) {
        self.used.set(0);
    }

    /// The limits it runs under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// What the script printed (the first [`PRINT_LINES`] lines).
    pub fn printed(&self) -> Vec<String> {
        self.printed.borrow().clone()
    }
}
