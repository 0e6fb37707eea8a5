//! The `bagscope` executable: the desktop app, or a command-line verb (`bagscope::cli`).

use std::process::ExitCode;

fn main() -> ExitCode {
    bagscope::cli::main(std::env::args_os())
}
