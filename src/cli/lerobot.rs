//! `bagscope export REC… --format lerobot --mapping map.yaml -o DIR`: a LeRobot v3 dataset.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use bagscope_ops::tables::lerobot::{export, Mapping};

use super::export::ExportArgs;
use crate::cli::Error;

/// Runs the LeRobot export.
pub fn run(a: &ExportArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let t0 = std::time::Instant::now();
    if a.format.as_deref().is_some_and(|f| f != "lerobot") {
        return Err(Error::Invalid("--mapping is for --format lerobot".into()));
    }
    let Some(path) = &a.mapping else {
        return Err(Error::Invalid(
            "--format lerobot needs --mapping MAP.yaml (docs/lerobot.md)".into(),
        ));
    };
    if !a.topics.is_empty() || a.range.as_strs() != (None, None) {
        return Err(Error::Invalid(
            "--format lerobot takes its topics and episodes from the mapping file, not --topic or --start/--end".into(),
        ));
    }
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Invalid(format!("{name}: cannot read: {e}")))?;
    let mapping = Mapping::parse(&text).map_err(|e| Error::Invalid(e.at(&name)))?;
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize| {
        if tty {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\rmaking episodes {done}/{total}");
            if done == total {
                let _ = writeln!(e);
            }
        }
    };
    // Each recording with the virtual topics of `--script` message scripts, which the
    // mapping may name like any topic.
    let with_scripts =
        |p: &std::path::Path| super::scripts::open(p, &a.scripts, opts).map_err(|e| e.to_string());
    let open: Option<&bagscope_ops::tables::lerobot::Open<'_>> = if a.scripts.is_empty() {
        None
    } else {
        Some(&with_scripts)
    };
    let r = export(
        &a.inputs,
        (&mapping, &name),
        open,
        &a.output,
        opts.threads(),
        &progress,
    )?;
    for why in &r.left_out {
        eprintln!("bagscope: episode left out: {why}");
    }
    eprintln!(
        "{}: {} episodes, {} frames at {} fps ({} ticks dropped, {} frames filled), {} cameras, in {:.2} s",
        a.output.display(),
        r.episodes,
        r.frames,
        mapping.fps,
        r.dropped,
        r.filled,
        mapping.cameras.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(if r.left_out.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
