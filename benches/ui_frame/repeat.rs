//! `-- --repeat N`: the cases asked for, run N times, each run a process of its own (its own
//! recordings written, its own caches cold), and for each case the p99 of every run and the
//! worst of them, so that one lucky run cannot hold a figure. The UI thread's frames are held
//! to 8 ms; the 3D panel's "playhead to scene ready" to 100 ms for the cloud playing and
//! 250 ms for scrubbing (issue 66).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// A case's p99 in each run (ms), in the order the cases first printed.
#[derive(Default)]
struct Cases {
    order: Vec<String>,
    p99: BTreeMap<String, Vec<f64>>,
}

impl Cases {
    fn add(&mut self, name: String, v: f64) {
        if !self.p99.contains_key(&name) {
            self.order.push(name.clone());
        }
        self.p99.entry(name).or_default().push(v);
    }
}

/// The number after `key` in `line` (`p99=0.812`, `p99 21 ms`).
fn after(line: &str, key: &str) -> Option<f64> {
    let rest = &line[line.find(key)? + key.len()..];
    let num: String = rest
        .trim_start_matches(['=', ' '])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse().ok()
}

/// A UI-frame case (`NAME frames=… p50=… p99=… max=… (ms)`) or a scene-ready line (`  WHAT:
/// … playhead to scene ready median … ms, p99 … ms`): its name and p99.
fn parse(line: &str) -> Option<(String, f64)> {
    if let Some(i) = line.find(" frames=") {
        return Some((line[..i].trim().to_string(), after(line, "p99")?));
    }
    let r = line.find("playhead to scene ready")?;
    let what = line.trim_start().split(':').next()?;
    Some((format!("ready: {what}"), after(&line[r..], "p99")?))
}

/// The target a case is held to (ms).
fn target(name: &str) -> f64 {
    match name.strip_prefix("ready: ") {
        Some("cloud") => 100.0,
        Some(_) => 250.0,
        None => 8.0,
    }
}

/// Runs this bench `n` times with `args` (the rest of the command line), printing each run's
/// lines as they come and then the worst p99 of each case.
pub fn repeat(n: usize, args: &[String]) {
    let exe = std::env::current_exe().expect("this bench's path");
    let mut cases = Cases::default();
    for k in 1..=n {
        println!("== run {k} of {n}");
        let mut child = Command::new(&exe)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the bench again");
        let out = child.stdout.take().expect("its output");
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            println!("{line}");
            if let Some((name, v)) = parse(&line) {
                cases.add(name, v);
            }
        }
        let st = child.wait().expect("the bench's end");
        assert!(st.success(), "run {k} failed: {st}");
    }
    assert!(
        !cases.order.is_empty(),
        "no case's line was read from the runs"
    );
    println!("\n== {n} runs: p99 of each run, the worst, and the target (ms)");
    let mut over = 0;
    for name in &cases.order {
        let v = &cases.p99[name];
        let worst = v.iter().copied().fold(f64::NAN, f64::max);
        let t = target(name);
        let ok = worst <= t;
        over += usize::from(!ok);
        let runs: Vec<String> = v.iter().map(|x| format!("{x:.2}")).collect();
        println!(
            "{name:<48} {:<40} worst {worst:>8.2}  target {t:>5.0}  {}",
            runs.join(" "),
            if ok { "ok" } else { "OVER" }
        );
    }
    println!("{over} of {} cases over their target", cases.order.len());
}
