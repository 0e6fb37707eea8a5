//! The `bagscope` executable: the desktop app, or a command-line verb (`crate::cli`).

use std::process::ExitCode;

fn main() -> ExitCode {
    // A reader that stops early (`bagscope echo run.bag | head`): the broken pipe on stdout
    // ends the command quietly with the status a shell gives SIGPIPE, as `cat` does, rather
    // than with a panic and its backtrace. Only the executable does this (the Python package
    // calls `bagscope::cli::main` in its own process).
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if broken_pipe(info) {
            std::process::exit(141);
        }
        default(info)
    }));
    bagscope::cli::main(std::env::args_os())
}

/// Whether a panic is `println!` meeting a closed stdout.
fn broken_pipe(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let p = info.payload();
    let msg = p
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| p.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.contains("failed printing to stdout") && msg.contains("Broken pipe")
}
