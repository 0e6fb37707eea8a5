//! `bagscope echo`: messages in time order, decoded.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bagscope_ops::timefmt;
use bagscope_reader::encoding::{to_json, to_yaml, Plan};
use bagscope_reader::Error;
use bagscope_reader::{Bag, Filter};

use super::args::{time_range, ExprEnv, Range};

/// Print messages in time order, decoded from their definitions (ROS 1, CDR, protobuf,
/// JSON).
#[derive(Args, Debug)]
pub struct EchoArgs {
    /// The recording (ROS 1 bag, MCAP file, rosbag2 directory or file).
    pub bag: PathBuf,
    /// Only these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// One JSON object a line: {"time_ns", "topic", "message"}.
    #[arg(long)]
    pub json: bool,
    /// Stop after this many messages (as `rostopic echo -n`).
    #[arg(long = "count", short = 'n')]
    pub count: Option<u64>,
    /// Only messages where this path gives a value, its filters passing:
    /// `/diagnostics{status[0].level>=2}`, `/odom{twist.twist.linear.x>0.5}`, or without a
    /// topic (`{header.frame_id=='map'}`) on every topic echoed. See docs/expressions.md.
    #[arg(long)]
    pub filter: Option<String>,
    #[command(flatten)]
    pub env: ExprEnv,
    #[command(flatten)]
    pub range: Range,
    /// A message script (a Lua file whose header names `-- topic:`, `-- type:`, `-- input:`):
    /// its virtual topic is echoed as a recorded one. Repeatable. See docs/scripts.md.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

/// `bagscope echo`: messages in time order, decoded.
pub fn run(a: &EchoArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (path, topics, json, count) = (a.bag.as_path(), a.topics.as_slice(), a.json, a.count);
    let (start, end) = a.range.as_strs();
    let bag = super::scripts::open(path, &a.scripts, opts)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let env = a.env.env()?;
    let filter_path = match &a.filter {
        Some(f) => Some((f.as_str(), bagscope_reader::expr::parse_path(f)?)),
        None => None,
    };
    // A filter naming its topic echoes that topic (with those asked for).
    let mut topics = topics.to_vec();
    if let Some((_, p)) = &filter_path {
        if !p.topic.is_empty() && !topics.contains(&p.topic) {
            topics.push(p.topic.clone());
        }
    }
    let connections = if topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(&topics)?)
    };
    let s = bag.summary();
    let plans: Vec<Result<Plan, Error>> = s
        .connections
        .iter()
        .map(|c| Plan::for_connection(c, &opts.msg_path).map_err(Error::from))
        .collect();
    // Per connection, the filter compiled for it; `None` where the filter does not apply (another
    // topic: its messages pass).
    let matchers: Vec<Option<Result<bagscope_reader::expr::Getter, Error>>> = s
        .connections
        .iter()
        .zip(&plans)
        .enumerate()
        .map(|(ci, (_, plan))| {
            let (text, p) = filter_path.as_ref()?;
            if connections.as_ref().is_some_and(|cs| !cs.contains(&ci)) {
                return None;
            }
            if !p.topic.is_empty()
                && s.topic(&p.topic)
                    .is_none_or(|t| !t.connections.contains(&ci))
            {
                return None;
            }
            Some(match plan {
                Ok(plan) => bagscope_reader::expr::compile_match(plan, p, &env.vars, text)
                    .map_err(Error::from),
                Err(e) => Err(e.clone()),
            })
        })
        .collect();
    if let (Some((_, p)), true) = (&filter_path, matchers.iter().flatten().all(|m| m.is_err())) {
        // It fits no connection: say why (the first one's reason, pointing into the filter).
        match matchers.iter().flatten().next() {
            Some(Err(e)) => return Err(e.clone().into()),
            _ => {
                return Err(Error::Invalid(format!(
                    "the filter's topic {:?} is not in the recording",
                    p.topic
                ))
                .into())
            }
        }
    }
    for (c, m) in s.connections.iter().zip(&matchers) {
        if let Some(Err(e)) = m {
            eprintln!("bagscope: warning: {} (connection {}): the filter does not apply, its messages are left out: {e}", c.topic, c.id);
        }
    }
    let filter = Filter {
        connections,
        start_ns,
        end_ns,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // Per connection: messages that did not decode, the first one's time and error.
    let mut failed: std::collections::BTreeMap<usize, (u64, u64, String)> = Default::default();
    let mut text = String::new();
    let mut printed = 0u64;
    for m in bag.messages(&filter)? {
        if count.is_some_and(|n| printed >= n) {
            break;
        }
        let m = m?;
        match &matchers[m.conn] {
            Some(Ok(g)) if !g.matches(&m.data) => continue,
            Some(Err(_)) => continue,
            _ => {}
        }
        let c = &s.connections[m.conn];
        let decoded = match &plans[m.conn] {
            Ok(p) => p.decode(&m.data).map(|n| (p, n)).map_err(Error::from),
            Err(e) => Err(e.clone()),
        };
        text.clear();
        match decoded {
            Ok((p, n)) => {
                if json {
                    text.push_str(&format!("{{\"time_ns\": {}, \"topic\": ", m.time_ns));
                    text.push_str(&serde_json::Value::String(c.topic.clone()).to_string());
                    text.push_str(", \"message\": ");
                    to_json(&p.def, &n.value, &mut text);
                    text.push_str("}\n");
                } else {
                    text.push_str(&format!(
                        "# {} @ {} ({})\n",
                        c.topic,
                        timefmt::secs(m.time_ns),
                        timefmt::date(m.time_ns)
                    ));
                    to_yaml(&p.def, &n.value, 0, &mut text);
                    text.push_str("---\n");
                }
            }
            Err(e) => {
                failed
                    .entry(m.conn)
                    .or_insert((0, m.time_ns, e.to_string()))
                    .0 += 1;
                continue;
            }
        }
        if out.write_all(text.as_bytes()).is_err() {
            // A closed pipe (`| head`) ends the output quietly.
            return Ok(ExitCode::SUCCESS);
        }
        printed += 1;
    }
    let _ = out.flush();
    report_undecoded(&bag, &failed);
    if !failed.is_empty() {
        let not: u64 = failed.values().map(|f| f.0).sum();
        eprintln!("bagscope: {printed} message(s) printed, {not} not decoded");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reports messages that did not decode, once per connection with a count.
fn report_undecoded(bag: &Bag, failed: &std::collections::BTreeMap<usize, (u64, u64, String)>) {
    let s = bag.summary();
    for (&c, (n, t, e)) in failed {
        let conn = &s.connections[c];
        eprintln!(
            "bagscope: {} (connection {}): {n} message(s) did not decode, the first at {}: {e}",
            conn.topic,
            conn.id,
            timefmt::secs(*t)
        );
    }
}
