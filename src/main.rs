//! The `bagscope` binary: the desktop app, or a command-line verb.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    bagscope::settings::update(|s| s.msg_path = args.msg_path.clone());
    match args.command {
        Some(cmd) => cli::run(cmd),
        None => open_app(args.bags),
    }
}

/// Opens the window (the start screen, or `bag`).
#[cfg(feature = "gui")]
fn open_app(bags: Vec<std::path::PathBuf>) -> ExitCode {
    match bagscope::app::run(bags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bagscope: cannot open a window: {e}");
            ExitCode::from(2)
        }
    }
}

/// Built without the app: say so, and show what the command line does.
#[cfg(not(feature = "gui"))]
fn open_app(bags: Vec<std::path::PathBuf>) -> ExitCode {
    use clap::CommandFactory;
    if let Some(b) = bags.first() {
        eprintln!(
            "bagscope: built without the desktop app (feature \"gui\"); for a summary run: bagscope info {}",
            b.display()
        );
        return ExitCode::from(2);
    }
    let _ = cli::Cli::command().print_long_help();
    ExitCode::SUCCESS
}
