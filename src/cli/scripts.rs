//! Scripts on the command line: `--script FILE` (a Lua script file, or a PlotJuggler layout or
//! snippet file), `--lua NAME(SOURCES)=BODY`, and `csv --layout FILE`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use bagscope_ops::script::layout::{self, Plot};
use bagscope_ops::script::message::{self, MessageScript};
use bagscope_ops::script::{self, file, plotjuggler, Limits, SeriesScript};
use bagscope_ops::tables::csv::{write_csv_plotted, Column, CsvOptions, ScriptOptions, TimeColumn};
use bagscope_reader::series::Env;
use bagscope_reader::Bag;

use super::args::time_range;
use super::csv::{to_output, CsvArgs};
use crate::cli::Error;

/// The message scripts among `files` (those whose header declares `-- type:`).
pub fn message_scripts(files: &[PathBuf]) -> crate::cli::Result<Vec<MessageScript>> {
    let mut out = Vec::new();
    for f in files {
        let text = read(f)?;
        if message::is_message_file(&text) {
            out.push(
                message::read_file(&text)
                    .map_err(|m| Error::Invalid(format!("{}: {m}", f.display())))?,
            );
        }
    }
    Ok(out)
}

fn read(f: &Path) -> crate::cli::Result<String> {
    std::fs::read_to_string(f).map_err(|source| Error::Open {
        path: f.to_path_buf(),
        source,
    })
}

/// Opens `path` with the virtual topics of the message scripts among `files` (made once into
/// the cache: [`bagscope_ops::open::open`]).
pub fn open(
    path: &Path,
    files: &[PathBuf],
    opts: &bagscope_reader::OpenOptions,
) -> crate::cli::Result<Bag> {
    open_scripts(path, &message_scripts(files)?, opts)
}

/// Opens `path` with the virtual topics of `scripts`.
fn open_scripts(
    path: &Path,
    scripts: &[MessageScript],
    opts: &bagscope_reader::OpenOptions,
) -> crate::cli::Result<Bag> {
    let cache = bagscope_ops::demo::cache_dir().join("virtual");
    match bagscope_ops::open::open(path, scripts, opts, &cache, &AtomicBool::new(false)) {
        Ok((bag, printed)) => {
            for p in printed {
                eprintln!("bagscope: script {p}");
            }
            Ok(bag)
        }
        Err(bagscope_ops::open::OpenError::Ops(e)) => Err(e.into()),
        Err(e) => Err(Error::Invalid(e.to_string())),
    }
}

/// Opens `bags` (several merged in time order), with the virtual topics of the message scripts
/// among `files` when there is one recording.
pub fn open_many(
    bags: &[PathBuf],
    files: &[PathBuf],
    opts: &bagscope_reader::OpenOptions,
) -> crate::cli::Result<Bag> {
    match (bags, files.is_empty()) {
        ([one], false) => open(one, files, opts),
        (_, false) => Err(Error::Invalid(
            "--script makes virtual topics of one recording, not of several".into(),
        )),
        _ => Ok(Bag::open_many(
            &bagscope_reader::bag::merge::parts_of(bags),
            opts,
        )?),
    }
}

/// The series scripts of `--script` files (message scripts left to [`open`]) and `--lua`
/// snippets; a PlotJuggler file's snippets that are not Lua are said through `warn`.
pub fn load(
    files: &[PathBuf],
    inline: &[String],
    warn: &mut dyn FnMut(String),
) -> crate::cli::Result<Vec<SeriesScript>> {
    let mut out = Vec::new();
    for f in files {
        let text = read(f)?;
        let at = |m: String| Error::Invalid(format!("{}: {m}", f.display()));
        if message::is_message_file(&text) {
            continue;
        }
        if text.trim_start().starts_with('<') {
            let imported = plotjuggler::read(&text).map_err(at)?;
            for n in imported.not_run {
                warn(format!(
                    "{}: {:?} is {}: kept, not run",
                    f.display(),
                    n.name,
                    n.language
                ));
            }
            out.extend(imported.scripts);
        } else {
            let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("script");
            out.push(file::read_file(&text, stem).map_err(at)?);
        }
    }
    for l in inline {
        out.push(file::read_inline(l).map_err(|m| Error::Invalid(format!("--lua {l:?}: {m}")))?);
    }
    let mut seen = std::collections::HashSet::new();
    for s in &out {
        if !seen.insert(s.name.as_str()) {
            return Err(Error::Invalid(format!(
                "two scripts are named {:?}",
                s.name
            )));
        }
    }
    Ok(out)
}

/// Stops before any work when a script's source is not in `bag` or its Lua does not parse.
pub fn check(bag: &Bag, scripts: &[SeriesScript], env: &Env) -> crate::cli::Result<()> {
    let errors = script::check(bag, scripts, env);
    if errors.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    Err(Error::Invalid(lines.join("\n")))
}

/// `bagscope csv` with scripts or a layout.
pub fn csv(
    a: &CsvArgs,
    env: Env,
    opts: &bagscope_reader::OpenOptions,
) -> crate::cli::Result<ExitCode> {
    let mut warned = 0u64;
    let mut warn = |w: String| {
        warned += 1;
        eprintln!("bagscope: warning: {w}");
    };
    let mut scripts = load(&a.scripts, &a.lua, &mut warn)?;
    let layout_text = match &a.layout {
        Some(f) => Some(std::fs::read_to_string(f).map_err(|source| Error::Open {
            path: f.clone(),
            source,
        })?),
        None => None,
    };
    // The recording with the virtual topics of the files' message scripts and the layout's.
    let mut messages = message_scripts(&a.scripts)?;
    if let (Some(text), Some(f)) = (&layout_text, &a.layout) {
        messages.extend(
            layout::message_scripts(text)
                .map_err(|m| Error::Invalid(format!("{}: {m}", f.display())))?,
        );
    }
    let bag = open_scripts(&a.bag, &messages, opts)?;
    let mut cols: Vec<(String, Plot)> = Vec::new();
    if let (Some(text), Some(f)) = (&layout_text, &a.layout) {
        let p = layout::read(text, bag.quick_summary())
            .map_err(|m| Error::Invalid(format!("{}: {m}", f.display())))?;
        for n in &p.not_run {
            eprintln!(
                "bagscope: {}: {:?} is {}: kept, not run",
                f.display(),
                n.name,
                n.language
            );
        }
        for n in p.notes {
            eprintln!("bagscope: {}: {n}", f.display());
        }
        if a.paths.is_empty() {
            cols = p.columns;
        }
        for s in p.scripts {
            if scripts.iter().any(|x| x.name == s.name) {
                return Err(Error::Invalid(format!(
                    "two scripts are named {:?}",
                    s.name
                )));
            }
            scripts.push(s);
        }
    }
    for p in &a.paths {
        if script::makes(&scripts, p) {
            cols.push((p.clone(), Plot::Script(p.clone())));
        } else {
            let c = Column::parse(p)?;
            cols.push((c.name, Plot::Expr(c.expr)));
        }
    }
    if cols.is_empty() {
        cols = scripts
            .iter()
            .map(|s| (s.name.clone(), Plot::Script(s.name.clone())))
            .collect();
    }
    // Only the scripts the columns need (and those they read) run.
    let wanted: Vec<&str> = cols
        .iter()
        .filter_map(|(_, p)| match p {
            Plot::Script(n) => Some(n.as_str()),
            Plot::Expr(_) => None,
        })
        .collect();
    let scripts = script::eval::needed(&scripts, &wanted);
    check(&bag, &scripts, &env)?;
    let (start, end) = a.range.as_strs();
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let copts = CsvOptions {
        start_ns,
        end_ns,
        time: TimeColumn::EpochNs,
        header_stamps: false,
    };
    let cancel = AtomicBool::new(false);
    let sopts = ScriptOptions {
        scripts: &scripts,
        limits: Limits::default(),
    };
    let mut printed = Vec::new();
    to_output(a.output.as_ref(), Path::new(&a.bag), &mut |sink| {
        let (_, p) = write_csv_plotted(&bag, &cols, sopts, &env, copts, &cancel, sink, &mut warn)?;
        printed = p;
        Ok(())
    })?;
    for p in printed {
        eprintln!("bagscope: script {p}");
    }
    Ok(if warned > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
