//! The rules file (`rules.yaml`): what a recording is expected to hold, each rule with the line
//! it is written on. Parsed whole before any recording is read; its paths checked against a
//! recording's definitions ([`Rules::check_paths`]) before that recording is read.

use bagscope_reader::bag::Bag;
use bagscope_reader::expr::Expr;
use bagscope_reader::series::{compile_source, Source};

use crate::reports::find::{parse_query, Op};
use crate::yaml::{self, only_keys, LineError, Node};

/// `[MIN, MAX]` (either side open) and the line it is written on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// At least this.
    pub lo: Option<f64>,
    /// At most this.
    pub hi: Option<f64>,
    /// Line in the rules file.
    pub line: usize,
}

impl Bounds {
    /// Whether `x` is within (NaN never is).
    pub fn holds(&self, x: f64) -> bool {
        !x.is_nan() && self.lo.is_none_or(|lo| x >= lo) && self.hi.is_none_or(|hi| x <= hi)
    }

    /// `[90, 110] Hz`, `≥ 5`, `≤ 0.1 s`.
    pub fn text(&self, unit: &str) -> String {
        match (self.lo, self.hi) {
            (Some(a), Some(b)) if a == b => format!("= {a}{unit}"),
            (Some(a), Some(b)) => format!("[{a}, {b}]{unit}"),
            (Some(a), None) => format!("≥ {a}{unit}"),
            (None, Some(b)) => format!("≤ {b}{unit}"),
            (None, None) => "any".to_string(),
        }
    }
}

/// A limit in seconds and its line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// Seconds.
    pub secs: f64,
    /// Line in the rules file.
    pub line: usize,
}

/// `EXPRESSION OP NUMBER`, to hold at every sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// As written (a path starting with `.` given its section's topic).
    pub text: String,
    /// The left side.
    pub expr: Expr,
    /// The comparison.
    pub op: Op,
    /// The right side.
    pub number: f64,
    /// Every topic the expression reads.
    pub topics: Vec<String>,
    /// Line in the rules file.
    pub line: usize,
}

impl Condition {
    /// Whether `x` meets the condition (NaN never does).
    pub fn holds(&self, x: f64) -> bool {
        let n = self.number;
        match self.op {
            Op::Gt => x > n,
            Op::Ge => x >= n,
            Op::Lt => x < n,
            Op::Le => x <= n,
            Op::Eq => x == n,
            Op::Ne => !x.is_nan() && x != n,
            Op::Crosses | Op::Contains => false,
        }
    }
}

/// What one topic is expected to be.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicRules {
    /// The topic.
    pub name: String,
    /// Line of its section.
    pub line: usize,
    /// It must have at least one message (default: yes).
    pub required: bool,
    /// Its type (`pkg/Type` and `pkg/msg/Type` are the same), and the line.
    pub datatype: Option<(String, usize)>,
    /// Messages.
    pub count: Option<Bounds>,
    /// Mean rate (Hz) over its first to last message.
    pub rate: Option<Bounds>,
    /// Of the periods between consecutive messages, at least this share within `rate`.
    pub rate_share: Option<(f64, usize)>,
    /// The longest time between two consecutive messages.
    pub max_gap: Option<Limit>,
    /// Receive time minus `header.stamp` (s) of every message.
    pub stamp_lag: Option<Bounds>,
    /// Its first message at most this long after the recording's start.
    pub start_within: Option<Limit>,
    /// Its last message at most this long before the recording's end.
    pub end_within: Option<Limit>,
    /// Conditions on its values.
    pub values: Vec<Condition>,
}

/// Topics whose first (and last) messages are to be close in time.
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    /// The topics.
    pub topics: Vec<String>,
    /// Their first messages within this of each other.
    pub start: Option<Limit>,
    /// Their last messages within this of each other.
    pub end: Option<Limit>,
    /// Line in the rules file.
    pub line: usize,
}

/// A rules file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rules {
    /// Per topic, in the file's order.
    pub topics: Vec<TopicRules>,
    /// Groups of topics to start and end together.
    pub alignment: Vec<Alignment>,
    /// Conditions on any expression.
    pub values: Vec<Condition>,
    /// The recording's duration (s).
    pub duration: Option<Bounds>,
}

const TOPIC_KEYS: [&str; 10] = [
    "required",
    "type",
    "count",
    "rate",
    "rate_share",
    "max_gap",
    "stamp_lag",
    "start_within",
    "end_within",
    "values",
];

impl Rules {
    /// Parses a rules file's text.
    ///
    /// ```
    /// use bagscope_ops::reports::expect::Rules;
    /// let r = Rules::parse("topics:\n  /imu:\n    rate: [90, 110]\n").unwrap();
    /// assert_eq!(r.topics[0].rate.unwrap().line, 3);
    /// let e = Rules::parse("topics:\n  /imu:\n    rte: [90, 110]\n").unwrap_err();
    /// assert_eq!(e.line, 3);
    /// ```
    pub fn parse(text: &str) -> Result<Rules, LineError> {
        let root = yaml::parse(text)?;
        let top = root.map("the rules file")?;
        only_keys(
            top,
            &["topics", "alignment", "values", "duration"],
            "the rules file",
        )?;
        let mut rules = Rules::default();
        for (k, n) in top {
            match k.as_str() {
                "topics" => {
                    for (name, body) in n.map("topics")? {
                        rules.topics.push(topic_rules(name, body)?);
                    }
                }
                "alignment" => {
                    for a in n.items("alignment")? {
                        rules.alignment.push(alignment(a)?);
                    }
                }
                "values" => rules.values = conditions(n, None)?,
                "duration" => rules.duration = Some(bounds(n, "duration", " s")?),
                _ => {}
            }
        }
        if rules.topics.is_empty()
            && rules.alignment.is_empty()
            && rules.values.is_empty()
            && rules.duration.is_none()
        {
            return Err(LineError::new(
                root.line,
                "no expectations: give topics:, alignment:, values: or duration:",
            ));
        }
        Ok(rules)
    }

    /// Every condition: the topics' and the file's.
    pub fn conditions(&self) -> impl Iterator<Item = &Condition> {
        self.topics
            .iter()
            .flat_map(|t| t.values.iter())
            .chain(self.values.iter())
    }

    /// Checks each condition's paths against `bag`'s definitions: a field that its topic's type
    /// does not have is an error at the condition's line. A topic the recording lacks is not an
    /// error here (its rules fail or are skipped when the recording is checked).
    pub fn check_paths(&self, bag: &Bag) -> Result<(), LineError> {
        for c in self.conditions() {
            for p in c.expr.paths() {
                if bag.summary().topic(&p.topic).is_none() {
                    continue;
                }
                let vars = Default::default();
                let src = Source {
                    path: p,
                    text: &c.text,
                    vars: &vars,
                };
                if let Err(e) = compile_source(bag, src) {
                    return Err(LineError::new(c.line, format!("{}: {e}", c.text)));
                }
            }
        }
        Ok(())
    }
}

fn bounds(n: &Node, what: &str, unit: &str) -> Result<Bounds, LineError> {
    let (lo, hi) = n.bounds(what, unit)?;
    Ok(Bounds {
        lo,
        hi,
        line: n.line,
    })
}

fn limit(n: &Node, what: &str) -> Result<Limit, LineError> {
    let secs = n.number(what)?;
    if secs < 0.0 {
        return Err(LineError::new(
            n.line,
            format!("{what}: a time in seconds, not below 0"),
        ));
    }
    Ok(Limit { secs, line: n.line })
}

fn topic_rules(name: &str, body: &Node) -> Result<TopicRules, LineError> {
    let mut t = TopicRules {
        name: name.to_string(),
        line: body.key_line,
        required: true,
        datatype: None,
        count: None,
        rate: None,
        rate_share: None,
        max_gap: None,
        stamp_lag: None,
        start_within: None,
        end_within: None,
        values: Vec::new(),
    };
    if body.is_null() {
        return Ok(t);
    }
    let m = body.map(name)?;
    only_keys(m, &TOPIC_KEYS, name)?;
    for (k, n) in m {
        let what = format!("{name}: {k}");
        match k.as_str() {
            "required" => t.required = n.boolean(&what)?,
            "type" => t.datatype = Some((n.text(&what)?.trim().to_string(), n.line)),
            "count" => t.count = Some(bounds(n, &what, " messages")?),
            "rate" => t.rate = Some(bounds(n, &what, " in Hz")?),
            "rate_share" => {
                let s = n.number(&what)?;
                if !(0.0..=1.0).contains(&s) {
                    return Err(LineError::new(
                        n.line,
                        format!("{what}: a share from 0 to 1, not {s}"),
                    ));
                }
                t.rate_share = Some((s, n.line));
            }
            "max_gap" => t.max_gap = Some(limit(n, &what)?),
            "stamp_lag" => t.stamp_lag = Some(bounds(n, &what, " in seconds")?),
            "start_within" => t.start_within = Some(limit(n, &what)?),
            "end_within" => t.end_within = Some(limit(n, &what)?),
            "values" => t.values = conditions(n, Some(name))?,
            _ => {}
        }
    }
    if let (Some((_, line)), None) = (t.rate_share, t.rate) {
        return Err(LineError::new(
            line,
            format!("{name}: rate_share needs rate: [MIN, MAX] to count periods within"),
        ));
    }
    Ok(t)
}

fn alignment(n: &Node) -> Result<Alignment, LineError> {
    let m = n.map("alignment")?;
    only_keys(m, &["topics", "start", "end"], "alignment")?;
    let mut a = Alignment {
        topics: Vec::new(),
        start: None,
        end: None,
        line: n.line,
    };
    for (k, v) in m {
        match k.as_str() {
            "topics" => {
                for t in v.items("alignment: topics")? {
                    a.topics.push(t.text("alignment: topics")?.to_string());
                }
            }
            "start" => a.start = Some(limit(v, "alignment: start")?),
            "end" => a.end = Some(limit(v, "alignment: end")?),
            _ => {}
        }
    }
    if a.topics.len() < 2 || (a.start.is_none() && a.end.is_none()) {
        return Err(LineError::new(
            n.line,
            "alignment: give topics: (two or more) and start: or end: in seconds",
        ));
    }
    Ok(a)
}

/// A list of `EXPRESSION OP NUMBER`; within a topic's section a path may start with `.`.
fn conditions(n: &Node, topic: Option<&str>) -> Result<Vec<Condition>, LineError> {
    let mut out = Vec::new();
    for item in n.items("values")? {
        let written = item.text("values")?.trim();
        let text = match topic {
            Some(t) if written.starts_with('.') => format!("{t}{written}"),
            _ => written.to_string(),
        };
        let q = parse_query(&text).map_err(|e| LineError::new(item.line, e.reason))?;
        let Some(expr) = q.expr else {
            return Err(LineError::new(
                item.line,
                format!(
                    "{written:?}: expected EXPRESSION OP NUMBER with OP one of > >= < <= == !="
                ),
            ));
        };
        if matches!(q.op, Op::Crosses | Op::Contains) {
            return Err(LineError::new(
                item.line,
                format!("{written:?}: a condition to hold at every sample uses > >= < <= == !="),
            ));
        }
        let mut topics: Vec<String> = Vec::new();
        for p in expr.paths() {
            if !topics.contains(&p.topic) {
                topics.push(p.topic.clone());
            }
        }
        out.push(Condition {
            text,
            expr,
            op: q.op,
            number: q.number,
            topics,
            line: item.line,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "\
topics:
  /imu:
    type: sensor_msgs/Imu
    rate: [90, 110]
    rate_share: 0.9
    max_gap: 0.5
    count: [10, null]
    stamp_lag: [0, 0.05]
    start_within: 1
    end_within: 1.5
    values:
      - .linear_acceleration.z > 5
  /gps:
    required: false
alignment:
  - topics: [/imu, /gps]
    start: 0.5
values:
  - /battery.percentage > 0.1
duration: [60, null]
";

    #[test]
    fn every_key_read_with_its_line() {
        let r = Rules::parse(FULL).unwrap();
        let imu = &r.topics[0];
        assert_eq!(imu.datatype, Some(("sensor_msgs/Imu".to_string(), 3)));
        assert_eq!(imu.rate.unwrap().lo, Some(90.0));
        assert_eq!(imu.rate_share, Some((0.9, 5)));
        assert_eq!(imu.max_gap.unwrap().secs, 0.5);
        assert_eq!(imu.count.unwrap().hi, None);
        assert_eq!(imu.end_within.unwrap().line, 10);
        assert_eq!(imu.values[0].text, "/imu.linear_acceleration.z > 5");
        assert_eq!(imu.values[0].line, 12);
        assert!(!r.topics[1].required);
        assert_eq!(r.alignment[0].topics, ["/imu", "/gps"]);
        assert_eq!(r.values[0].topics, ["/battery"]);
        assert!(r.values[0].holds(0.2) && !r.values[0].holds(0.1));
        assert!(!r.values[0].holds(f64::NAN));
        assert_eq!(r.duration.unwrap().lo, Some(60.0));
    }

    #[test]
    fn mistakes_name_their_line() {
        let line = |t: &str| Rules::parse(t).unwrap_err().line;
        assert_eq!(line("topics:\n  /a:\n    rate: fast\n"), 3);
        assert_eq!(line("topics:\n  /a:\n    rate: [5]\n"), 3);
        assert_eq!(
            line("topics:\n  /a:\n    values:\n      - /a.x crosses 3\n"),
            4
        );
        assert_eq!(line("topics:\n  /a:\n    values: [/a.x >]\n"), 3);
        assert_eq!(line("topics:\n  /a:\n\n    rate_share: 0.5\n"), 4);
        assert_eq!(line("topics:\n  /a: 5\n"), 2);
        assert_eq!(line("topic:\n  /a: ~\n"), 1);
        assert_eq!(line("alignment:\n  - topics: [/a]\n    start: 1\n"), 2);
        assert_eq!(line("duration: [10, 5]\n"), 1);
        let e = Rules::parse("").unwrap_err();
        assert!(e.reason.contains("no expectations"), "{e:?}");
    }
}
