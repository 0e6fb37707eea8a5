//! `bagscope find`: the messages where a field meets a condition.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use bagscope_ops::timefmt;

/// The messages where a field meets a condition, in time order, such as
/// `/odom.pose.pose.position.x >= 1.5`, `/battery.data crosses 12.2` or
/// `/rosout.msg contains battery`; operators: `>`, `>=`, `<`, `<=`, `==`, `!=`, `crosses`,
/// `contains`.
#[derive(Args, Debug)]
pub struct FindArgs {
    /// The recording.
    pub bag: PathBuf,
    /// The query: PATH OP VALUE (or NAME OP VALUE, NAME a series a --script makes).
    pub query: String,
    /// A script file (repeatable, docs/scripts.md): a series script's series can be searched
    /// by its name (`'speed kmh' > 20`), a message script's virtual topic as any topic.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

/// `bagscope find`: one line per hit (time, seconds from the start, value); exit 1 when none.
pub fn run(a: &FindArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (path, query) = (a.bag.as_path(), a.query.as_str());
    use bagscope_ops::reports::find;
    let series = super::scripts::load(&a.scripts, &[], &mut |w| eprintln!("bagscope: {w}"))?;
    let scripted = find::script_query(query, &series);
    let q = match scripted {
        Some(_) => None,
        None => Some(find::parse_query(query)?),
    };
    let bag = super::scripts::open(path, &a.scripts, opts)?;
    let start = bag.summary().start_ns.unwrap_or(0);
    let cancel = AtomicBool::new(false);
    let (hits, capped) = match (&scripted, &q) {
        (Some((name, op, x)), _) => find::find_scripted(&bag, &series, (name, *op, *x), &cancel)?,
        (None, Some(q)) => find::find(&bag, q, &cancel)?,
        (None, None) => (Vec::new(), false),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for h in &hits {
        let r = writeln!(
            out,
            "{}  +{:.3}s  {}",
            timefmt::date(h.time_ns),
            h.time_ns.saturating_sub(start) as f64 / 1e9,
            h.value
        );
        if r.is_err() {
            break;
        }
    }
    out.flush().ok();
    eprintln!(
        "bagscope: {} hit(s){}",
        hits.len(),
        if capped {
            " (stopped at the limit)"
        } else {
            ""
        }
    );
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
