//! Plotted expressions: paths with filters, slices and modifiers, and formulas, read on a
//! worker (the whole series, then handed over in parts); and the path box's completion of
//! paths, virtual fields, modifiers and the fields inside a filter.

use egui_plot::PlotPoint;

use super::super::job::Job;
use super::Part;
use bagscope_reader::encoding::{FieldPath, Segment};
use bagscope_reader::expr::{Bound, Expr, Interp, Lit, Seg, Vars, MODIFIERS};
use bagscope_reader::series::Env;

/// The field path of `e` where it is one path of fields and indexes with no modifier: read by
/// the incremental reader, its points shown as the chunks come.
pub(super) fn field_path(e: &Expr) -> Option<FieldPath> {
    let p = e.plain_path()?;
    let segments = p
        .segs
        .iter()
        .map(|s| match s {
            Seg::Field { name, .. } => Some(Segment::Field(name.clone())),
            Seg::Slice {
                start: Bound::Int(i),
                single: true,
                ..
            } => Some(Segment::Index(*i)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(FieldPath {
        topic: p.topic.clone(),
        segments,
    })
}

/// The series plotted under a name that is a `$name` (letters, digits, `_`): what a formula's
/// `$name` refers to. Every `$name` of `e` must be one.
/// (`names`: each plotted series' name and expression.)
pub(super) fn env_of(
    names: &[(String, String)],
    vars: &Vars,
    interp: Interp,
    e: &Expr,
) -> Result<Env, String> {
    let mut env = Env {
        vars: vars.clone(),
        interp,
        ..Env::default()
    };
    for (name, path) in names {
        let named = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if named {
            if let Ok(x) = Expr::parse(path) {
                env.named.push((name.clone(), x));
            }
        }
    }
    for v in e.root.vars() {
        if !env.named.iter().any(|(n, _)| n == v) && !env.vars.contains_key(v) {
            return Err(format!(
                "no series or variable named ${v}: name a plotted series {v} (the box beside its colour), or set {v} in the variables"
            ));
        }
    }
    Ok(env)
}

/// The plot panel's variables, `i=2, name='motor', on=true`: numbers, booleans, text (quoted
/// or not).
pub(super) fn parse_vars(text: &str) -> Result<Vars, String> {
    let mut out = Vars::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((name, value)) = item.split_once('=') else {
            return Err(format!("variables: {item:?} is not NAME=VALUE"));
        };
        let (name, value) = (name.trim().trim_start_matches('$'), value.trim());
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("variables: {name:?} is not a name"));
        }
        let lit = Lit::of_text(value);
        out.insert(name.to_string(), lit);
    }
    Ok(out)
}

/// Whether every path of `e` fits its topic's definitions: the first error, pointing into
/// the text, where one does not.
pub(super) fn check(bag: &bagscope_reader::Bag, e: &Expr, vars: &Vars) -> Result<(), String> {
    if e.paths().is_empty() && e.root.vars().is_empty() {
        return Err("the formula reads no path: name at least one (/topic.field)".into());
    }
    for p in e.paths() {
        let mut bare = p.clone();
        bare.mods.clear();
        let src = bagscope_reader::series::Source {
            path: &bare,
            text: &e.text,
            vars,
        };
        bagscope_reader::series::compile_source(bag, src).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A worker reading the series of `e`: its points (x: seconds since `start`), NaNs left out.
pub(super) fn spawn(
    bag: &bagscope_reader::Bag,
    e: Expr,
    env: Env,
    header_time: bool,
    ctx: &egui::Context,
) -> Result<Job<Part>, String> {
    // At header stamps: one topic, whose messages' stamps the points move to.
    let stamp_topic = match (header_time, e.topics().as_slice()) {
        (false, _) => None,
        (true, [t]) => Some(t.to_string()),
        (true, ts) => {
            return Err(format!(
                "header stamps: {} reads {} topics; a series at header stamps reads one",
                e.text,
                ts.len()
            ))
        }
    };
    let bag = bag.clone();
    let start = bag.summary().start_ns.unwrap_or(0);
    Job::spawn("expression", 64, ctx, move |h| {
        let threads = bag.options().threads();
        let r = bagscope_reader::series::expr_series(
            &bag,
            std::slice::from_ref(&e),
            &env,
            (None, None),
            threads,
            h.cancel_flag(),
        );
        match r {
            Ok(mut v) => {
                let mut s = v.pop().unwrap_or_default();
                if let Some(t) = &stamp_topic {
                    match bagscope_ops::reports::timing::at_header_stamps(
                        &bag,
                        t,
                        &mut s.points,
                        h.cancel_flag(),
                    ) {
                        Ok(0) => {}
                        Ok(n) => s
                            .problems
                            .push(format!("{n} messages without a header stamp left out")),
                        Err(err) => {
                            h.send(Part::Done(Err(err.to_string())));
                            return;
                        }
                    }
                }
                send_whole(h, &s.points, start, (s.missing, s.problems));
            }
            Err(err) => {
                h.send(Part::Done(Err(err.to_string())));
            }
        }
    })
}

/// Sends a whole series read on a worker: its points (x: seconds since `start`, NaNs left out),
/// their pyramid (built here, off the UI thread), then `done`.
pub(super) fn send_whole(
    h: &super::super::job::Handle<Part>,
    points: &[bagscope_reader::series::Point],
    start: u64,
    done: (u64, Vec<String>),
) {
    let pts: Vec<PlotPoint> = points
        .iter()
        .filter_map(|p| {
            let y = p.value.as_f64().filter(|y| y.is_finite())?;
            // (Signed: a header stamp may come before the recording's start.)
            Some(PlotPoint::new(
                (i128::from(p.time_ns) - i128::from(start)) as f64 / 1e9,
                y,
            ))
        })
        .collect();
    // Sorted by time already.
    let pyr = super::Pyramid::build(&pts);
    if h.send(Part::Whole(pts, pyr)) {
        h.send(Part::Done(Ok(done)));
    }
}

/// Virtual fields beside the paths that have their components: `roll`, `pitch`, `yaw` (and
/// `_deg`) of a quaternion, `norm` of a vector.
pub(super) fn with_virtual_fields(paths: &mut Vec<String>) {
    let mut extra = Vec::new();
    for p in paths.iter() {
        let Some(base) = p.strip_suffix(".x") else {
            continue;
        };
        let has = |c: &str| paths.iter().any(|q| q.strip_suffix(c) == Some(base));
        if has(".y") && has(".z") && has(".w") {
            for v in ["roll", "pitch", "yaw", "roll_deg", "pitch_deg", "yaw_deg"] {
                extra.push(format!("{base}.{v}"));
            }
        } else if has(".y") {
            extra.push(format!("{base}.norm"));
        }
    }
    paths.extend(extra);
}

/// Completions of the text being typed (its last token): (what the list shows, the input it
/// makes, whether that is a path to plot at once).
pub(super) fn suggest(input: &str, paths: &[String]) -> Vec<(String, String, bool)> {
    let cut = input.rfind([' ', '(', ',']).map_or(0, |i| i + 1);
    let (head, token) = input.split_at(cut);
    let alone = head.trim().is_empty();
    if token.is_empty() {
        return Vec::new();
    }
    // A modifier: `.@der` → `.@derivative`.
    if let Some(at) = token.rfind(".@") {
        let partial = &token[at + 2..];
        return MODIFIERS
            .iter()
            .filter(|m| m.0.starts_with(partial))
            .take(8)
            .map(|(name, args, what)| {
                let written = if args.is_empty() {
                    name.to_string()
                } else {
                    // The first form of the arguments, `(0.5s)`.
                    format!("{name}{}", args.split(" or ").next().unwrap_or(""))
                };
                let label = format!(".@{written} — {what}");
                (label, format!("{head}{}.@{written}", &token[..at]), false)
            })
            .collect();
    }
    // A field inside a filter: `/t.items[:]{la` → `{label`.
    if token.matches('{').count() > token.matches('}').count() {
        let Some(open) = token.rfind('{') else {
            return Vec::new();
        };
        let (base, partial) = (&token[..open], &token[open + 1..]);
        // The element's fields, as the list writes them (`[0]` for any index or slice).
        let mut element = String::new();
        let mut in_bracket = false;
        for c in base.chars() {
            match c {
                '[' => {
                    in_bracket = true;
                    element.push_str("[0]");
                }
                ']' => in_bracket = false,
                _ if in_bracket => {}
                _ => element.push(c),
            }
        }
        element.push('.');
        let mut out: Vec<(String, String, bool)> = Vec::new();
        for p in paths {
            let Some(rel) = p.strip_prefix(&element) else {
                continue;
            };
            if rel.starts_with(partial) && !out.iter().any(|o| o.0 == rel) {
                out.push((rel.to_string(), format!("{head}{base}{{{rel}"), false));
            }
            if out.len() >= 8 {
                break;
            }
        }
        return out;
    }
    let q = token.to_lowercase();
    paths
        .iter()
        .filter(|c| c.to_lowercase().contains(&q))
        .take(8)
        .map(|c| (c.clone(), format!("{head}{c}"), alone))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_paths_modifiers_and_fields_in_filters() {
        let mut paths: Vec<String> = [
            "/imu.orientation.x",
            "/imu.orientation.y",
            "/imu.orientation.z",
            "/imu.orientation.w",
            "/imu.angular_velocity.x",
            "/imu.angular_velocity.y",
            "/imu.angular_velocity.z",
            "/d.status[0].level",
            "/d.status[0].values[0].key",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        with_virtual_fields(&mut paths);
        assert!(paths.contains(&"/imu.orientation.yaw_deg".to_string()));
        assert!(paths.contains(&"/imu.angular_velocity.norm".to_string()));
        let s = suggest("/imu.orientation.ya", &paths);
        assert_eq!(s[0].1, "/imu.orientation.yaw");
        assert!(s[0].2);
        let s = suggest("/imu.angular_velocity.z.@mov", &paths);
        assert_eq!(s[0].1, "/imu.angular_velocity.z.@movavg(0.5s)");
        assert!(!s[0].2);
        let s = suggest("/d.status[:]{le", &paths);
        assert_eq!(s[0].1, "/d.status[:]{level");
        let s = suggest(
            "hypot(/imu.angular_velocity.x, /imu.angular_velocity.y",
            &paths,
        );
        assert_eq!(
            s[0].1,
            "hypot(/imu.angular_velocity.x, /imu.angular_velocity.y"
        );
        assert!(!s[0].2, "inside a formula the choice goes into the box");
    }
}
