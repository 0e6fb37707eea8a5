//! The `bagscope` executable: the desktop app, or a command-line verb (`crate::cli`).

use std::process::ExitCode;

fn main() -> ExitCode {
    bagscope::cli::main(std::env::args_os())
}
