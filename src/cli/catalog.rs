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
    /// Also check every recording against the expectations of a rules file
    /// (docs/expectations.md) into `expectations.parquet` (one row per recording and rule).
    #[arg(long, value_name = "RULES.yaml")]
    pub expect: Option<PathBuf>,
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
    // The rules are read before any recording is.
    let rules = match &a.expect {
        Some(p) => Some((crate::cli::expect::read_rules(p)?, p.display().to_string())),
        None => None,
    };
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
    if let Some((rules, name)) = rules {
        let t1 = std::time::Instant::now();
        let out = a.output.join("expectations.parquet");
        let reports = bagscope_ops::tables::catalog::expect::check_fleet(
            &a.paths,
            &rules,
            &name,
            Some(&out),
            threads,
            &progress,
        )?;
        let failed = reports.iter().filter(|r| !r.passed()).count();
        eprintln!(
            "{}: {} recordings checked against {name}, {failed} failed, in {:.2} s",
            out.display(),
            reports.len(),
            t1.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}
