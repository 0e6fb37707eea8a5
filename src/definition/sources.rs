//! Where message definitions come from when a recording stores none (rosbag2 SQLite files
//! before iron, channels without a schema, the oldest ROS 1 formats): `.msg` files on a search
//! path the user gives, a sourced ROS workspace, and the standard interfaces bagscope ships.
//!
//! Search order: the directories set with [`set_search_path`] (`--msg-path`, the app's
//! setting), then `BAGSCOPE_MSG_PATH`, then each `AMENT_PREFIX_PATH` prefix's `share/`, then
//! `ROS_PACKAGE_PATH`; in each, `PKG/msg/Type.msg` is looked for. Then the shipped
//! definitions (`assets/interfaces/*.msgs`, written by `scripts/dump_interfaces.py`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{OnceLock, RwLock};

use crate::msgdef::{normalize_type, Dialect};

/// Where a topic's definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefSource {
    /// Stored in the recording (connection header, MCAP schema, SQLite table).
    Recording,
    /// A `.msg` file found on the search path.
    SearchPath(PathBuf),
    /// The standard interfaces shipped with bagscope, of the named distro.
    Shipped(&'static str),
}

impl std::fmt::Display for DefSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefSource::Recording => f.write_str("stored in the recording"),
            DefSource::SearchPath(p) => write!(f, "found at {}", p.display()),
            DefSource::Shipped(d) => write!(f, "shipped with bagscope ({d})"),
        }
    }
}

static EXTRA: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Sets the directories searched first (`--msg-path`, the app's setting).
pub fn set_search_path(dirs: Vec<PathBuf>) {
    if let Ok(mut e) = EXTRA.write() {
        *e = dirs;
    }
}

/// The directories searched, in order: each holds packages (`PKG/msg/Type.msg`).
pub fn search_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = EXTRA.read().map(|e| e.clone()).unwrap_or_default();
    let split = |v: &str| -> Vec<PathBuf> {
        std::env::split_paths(v)
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    };
    if let Ok(v) = std::env::var("BAGSCOPE_MSG_PATH") {
        out.extend(split(&v));
    }
    if let Ok(v) = std::env::var("AMENT_PREFIX_PATH") {
        out.extend(split(&v).into_iter().map(|p| p.join("share")));
    }
    if let Ok(v) = std::env::var("ROS_PACKAGE_PATH") {
        out.extend(split(&v));
    }
    out
}

const SHIPPED: &[(&str, Dialect, &str)] = &[
    (
        "ros2_humble",
        Dialect::Ros2,
        include_str!("../../assets/interfaces/ros2_humble.msgs"),
    ),
    (
        "ros2_jazzy",
        Dialect::Ros2,
        include_str!("../../assets/interfaces/ros2_jazzy.msgs"),
    ),
    (
        "ros2_foxy",
        Dialect::Ros2,
        include_str!("../../assets/interfaces/ros2_foxy.msgs"),
    ),
    (
        "ros2_dashing",
        Dialect::Ros2,
        include_str!("../../assets/interfaces/ros2_dashing.msgs"),
    ),
    (
        "ros1_noetic",
        Dialect::Ros1,
        include_str!("../../assets/interfaces/ros1_noetic.msgs"),
    ),
];

/// Types of one shipped distro: normalized name to (name as written, own text).
type Types = HashMap<String, (String, String)>;

/// Each shipped distro's types.
fn shipped() -> &'static Vec<(&'static str, Dialect, Types)> {
    static S: OnceLock<Vec<(&'static str, Dialect, Types)>> = OnceLock::new();
    S.get_or_init(|| {
        SHIPPED
            .iter()
            .map(|&(name, dialect, text)| (name, dialect, split_types(text)))
            .collect()
    })
}

/// Splits a `.msgs` file (types separated by `=` lines and `MSG:` lines) into its types.
fn split_types(text: &str) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    let mut cur: Option<(String, String)> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.len() >= 3 && t.bytes().all(|b| b == b'=') {
            if let Some((n, body)) = cur.take() {
                out.insert(normalize_type(&n), (n, body));
            }
            continue;
        }
        if let Some(n) = t.strip_prefix("MSG:") {
            cur = Some((n.trim().to_string(), String::new()));
            continue;
        }
        if let Some((_, body)) = &mut cur {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some((n, body)) = cur {
        out.insert(normalize_type(&n), (n, body));
    }
    out
}

/// The message types a body names, as written.
fn dependencies(body: &str, pkg: &str, dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    for line in body.lines() {
        let clean = line.split('#').next().unwrap_or("").trim();
        let Some(ty) = clean.split_whitespace().next() else {
            continue;
        };
        if clean.contains('=')
            && clean[ty.len()..]
                .split_once('=')
                .is_some_and(|(n, _)| !n.trim().contains(' '))
        {
            continue;
        }
        let base = ty.split('[').next().unwrap_or(ty);
        let base = base.split("<=").next().unwrap_or(base);
        if crate::msgdef::Primitive::from_name_in(base, dialect).is_some()
            || base == "wstring"
            || base.is_empty()
        {
            continue;
        }
        out.push(if base == "Header" {
            "std_msgs/Header".to_string()
        } else if base.contains('/') {
            normalize_type(base)
        } else {
            format!("{pkg}/{base}")
        });
    }
    out
}

/// Assembles the full definition text of `datatype` (its own, then every type it uses) from a
/// lookup of single types, or `None` if any is missing.
fn assemble(
    datatype: &str,
    dialect: Dialect,
    mut own: impl FnMut(&str) -> Option<String>,
) -> Option<String> {
    let root = normalize_type(datatype);
    let root_body = own(&root)?;
    let mut text = root_body.clone();
    let mut seen = BTreeSet::new();
    seen.insert(root.clone());
    let pkg = root.split('/').next().unwrap_or("").to_string();
    let mut todo: Vec<String> = dependencies(&root_body, &pkg, dialect);
    while let Some(d) = todo.pop() {
        if !seen.insert(d.clone()) {
            continue;
        }
        let body = own(&d)?;
        let dpkg = d.split('/').next().unwrap_or("").to_string();
        todo.extend(dependencies(&body, &dpkg, dialect));
        text.push_str(&"=".repeat(80));
        text.push_str("\nMSG: ");
        text.push_str(&d);
        text.push('\n');
        text.push_str(&body);
    }
    Some(text)
}

fn from_search_path(datatype: &str, dialect: Dialect) -> Option<(String, DefSource)> {
    let dirs = search_dirs();
    if dirs.is_empty() {
        return None;
    }
    let mut first: Option<PathBuf> = None;
    let text = assemble(datatype, dialect, |n| {
        let (pkg, ty) = n.split_once('/')?;
        for d in &dirs {
            for p in [d.join(pkg).join("msg").join(format!("{ty}.msg"))] {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    if first.is_none() {
                        first = Some(p);
                    }
                    return Some(t);
                }
            }
        }
        None
    })?;
    Some((text, DefSource::SearchPath(first.unwrap_or_default())))
}

/// Finds the definition of `datatype` (`pkg/Type` or `pkg/msg/Type`) in the given dialect: on
/// the search path, else among the shipped definitions (ROS 2: humble first).
pub fn lookup(datatype: &str, dialect: Dialect) -> Option<(String, DefSource)> {
    if let Some(found) = from_search_path(datatype, dialect) {
        return Some(found);
    }
    for (name, d, types) in shipped() {
        if *d != dialect {
            continue;
        }
        if let Some(text) = assemble(datatype, dialect, |n| types.get(n).map(|(_, b)| b.clone())) {
            return Some((text, DefSource::Shipped(name)));
        }
    }
    None
}

/// Names of every shipped type of a dialect (for tests and `bagscope info --verbose`).
pub fn shipped_types(dialect: Dialect) -> Vec<String> {
    let mut v: BTreeSet<String> = BTreeSet::new();
    for (_, d, types) in shipped() {
        if *d == dialect {
            v.extend(types.values().map(|(n, _)| n.clone()));
        }
    }
    v.into_iter().collect()
}
