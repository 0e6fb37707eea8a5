//! `bagscope catalog`: many recordings as two Parquet tables.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Catalog every recording under some directories into Parquet tables (`recordings`,
/// `topics`) a query engine reads; incremental.
//
// Recordings are recognised by content; `recordings.parquet` has one row each and
// `topics.parquet` one per recording and topic. Recordings unchanged since the catalog already
// in the output directory are not read again.
#[derive(Args, Debug)]
pub struct CatalogArgs {
    /// Directories (walked) and recordings.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The output directory (created; its tables replaced whole).
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Runs `bagscope catalog`.
pub fn run(a: &CatalogArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize| {
        if tty {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\rreading {done}/{total} recordings");
            if done == total {
                let _ = writeln!(e);
            }
        }
    };
    let threads = opts.threads();
    let r = bagscope_ops::tables::catalog::catalog(&a.paths, &a.output, threads, &progress)?;
    eprintln!(
        "{}: {} recordings ({} read, {} unchanged, {} damaged or not opened), {} topics, in {:.2} s",
        a.output.display(),
        r.recordings,
        r.read,
        r.recordings - r.read,
        r.damaged,
        r.topics,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
