//! The `bagscope` binary: the desktop app, or a command-line verb.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match args.command {
        Some(cmd) => cli::run(cmd),
        None => open_app(args.bag),
    }
}

#[cfg(feature = "gui")]
fn open_app(bag: Option<std::path::PathBuf>) -> ExitCode {
    let _ = bag;
    eprintln!("bagscope: the app is not built yet");
    ExitCode::from(2)
}

#[cfg(not(feature = "gui"))]
fn open_app(_bag: Option<std::path::PathBuf>) -> ExitCode {
    eprintln!("bagscope: built without the app (feature \"gui\"); use a verb: info, check, echo, csv, export");
    ExitCode::from(2)
}
