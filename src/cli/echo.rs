//! `bagscope echo`: messages in time order, decoded.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bagscope::encoding::{to_json, to_yaml, Plan};
use bagscope::{timefmt, Bag, Error, Filter};

use super::args::{time_range, Range};

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
    #[command(flatten)]
    pub range: Range,
}

/// `bagscope echo`: messages in time order, decoded.
pub fn run(a: &EchoArgs) -> bagscope::Result<ExitCode> {
    let (path, topics, json, count) = (a.bag.as_path(), a.topics.as_slice(), a.json, a.count);
    let (start, end) = a.range.as_strs();
    let bag = Bag::open(path)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let (start_ns, end_ns) = time_range(&bag, start, end)?;
    let connections = if topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(topics)?)
    };
    let s = bag.summary();
    let plans: Vec<Result<Plan, Error>> = s
        .connections
        .iter()
        .map(|c| Plan::for_connection(c).map_err(Error::from))
        .collect();
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
