//! Where message definitions come from when a recording stores none (rosbag2 SQLite files
//! before iron, channels without a schema, the oldest ROS 1 formats): `.msg` files on a search
//! path the user gives, a sourced ROS workspace, and the standard interfaces bagscope ships.
//!
//! Search order: the directories of [`crate::OpenOptions::msg_path`] (`--msg-path`, the app's
//! setting), then `BAGSCOPE_MSG_PATH`, then each `AMENT_PREFIX_PATH` prefix's `share/`, then
//! `ROS_PACKAGE_PATH`; in each, `PKG/msg/Type.msg` is looked for. Then the shipped
//! definitions (`crates/bagscope-reader/interfaces/*.msgs`, written by `scripts/data/interfaces.py`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::definition::msg::{normalize_type, Dialect};

/// Where a topic's definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefSource {
    /// Stored in the recording (connection header, MCAP schema, SQLite table).
    Recording,
    /// A `.msg` file found on the search path.
    SearchPath(PathBuf),
    /// The standard interfaces shipped with bagscope, of the named distro.
    Shipped(&'static str),
    /// Found on the search path or shipped (`found`), in place of the definition the
    /// recording stores, which does not parse.
    Instead {
        /// Where the definition used came from.
        found: Box<DefSource>,
        /// What is wrong with the stored one.
        stored_error: String,
    },
}

impl std::fmt::Display for DefSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefSource::Recording => f.write_str("stored in the recording"),
            DefSource::SearchPath(p) => write!(f, "found at {}", p.display()),
            DefSource::Shipped(d) => write!(f, "shipped with bagscope ({d})"),
            DefSource::Instead {
                found,
                stored_error,
            } => write!(
                f,
                "{found}, in place of the one stored in the recording, which does not parse: {stored_error}"
            ),
        }
    }
}

/// The directories searched, in order: `first` (the caller's, [`crate::OpenOptions::msg_path`]),
/// then those of the environment; each holds packages (`PKG/msg/Type.msg`).
pub fn search_dirs(first: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = first.to_vec();
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
        include_str!("../../interfaces/ros2_humble.msgs"),
    ),
    (
        "ros2_jazzy",
        Dialect::Ros2,
        include_str!("../../interfaces/ros2_jazzy.msgs"),
    ),
    (
        "ros2_foxy",
        Dialect::Ros2,
        include_str!("../../interfaces/ros2_foxy.msgs"),
    ),
    (
        "ros2_dashing",
        Dialect::Ros2,
        include_str!("../../interfaces/ros2_dashing.msgs"),
    ),
    (
        "ros1_noetic",
        Dialect::Ros1,
        include_str!("../../interfaces/ros1_noetic.msgs"),
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
        if crate::definition::msg::Primitive::from_name_in(base, dialect).is_some()
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

/// A type's own text from a `.msg` file on the search path, and the file.
fn own_from_search_path(dirs: &[PathBuf], name: &str) -> Option<(String, PathBuf)> {
    let (pkg, ty) = name.split_once('/')?;
    for d in dirs {
        let p = d.join(pkg).join("msg").join(format!("{ty}.msg"));
        if let Ok(t) = std::fs::read_to_string(&p) {
            return Some((t, p));
        }
    }
    None
}

/// Finds the definition of `datatype` (`pkg/Type` or `pkg/msg/Type`) in the given dialect: on
/// the search path (`msg_path` first, then the environment's, [`search_dirs`]), else among the
/// shipped definitions (ROS 2: humble first).
pub fn lookup(
    datatype: &str,
    dialect: Dialect,
    msg_path: &[PathBuf],
) -> Option<(String, DefSource)> {
    lookup_for(datatype, dialect, "", msg_path)
}

/// The shipped set closest to a distro (`ros2_humble` for humble and iron, ...).
fn shipped_set_for(distro: &str) -> Option<&'static str> {
    Some(match distro.trim().to_ascii_lowercase().as_str() {
        "ardent" | "bouncy" | "crystal" | "dashing" | "eloquent" => "ros2_dashing",
        "foxy" | "galactic" => "ros2_foxy",
        "humble" | "iron" => "ros2_humble",
        "jazzy" | "kilted" | "lyrical" | "rolling" => "ros2_jazzy",
        _ => return None,
    })
}

/// The definition to write for a connection: the stored one, else the one bagscope resolves
/// (search path, `msg_path` first; shipped), with its language.
pub fn definition_of(c: &crate::storage::Connection, msg_path: &[PathBuf]) -> (String, String) {
    if !c.message_definition.trim().is_empty() {
        let enc = if c.schema_encoding.is_empty() {
            if c.encoding == "cdr" {
                "ros2msg"
            } else {
                "ros1msg"
            }
        } else {
            c.schema_encoding.as_str()
        };
        return (c.message_definition.clone(), enc.to_string());
    }
    let dialect = if c.encoding == "cdr" {
        Dialect::Ros2
    } else {
        Dialect::Ros1
    };
    match lookup_for(&c.datatype, dialect, &c.distro, msg_path) {
        Some((text, _)) => (
            text,
            if dialect == Dialect::Ros2 {
                "ros2msg".into()
            } else {
                "ros1msg".into()
            },
        ),
        None => (String::new(), String::new()),
    }
}

/// Like [`lookup`], trying first the shipped set of `distro` (the distro that recorded it,
/// where the recording says), where the wire format of a type changed between distros.
pub fn lookup_for(
    datatype: &str,
    dialect: Dialect,
    distro: &str,
    msg_path: &[PathBuf],
) -> Option<(String, DefSource)> {
    let first = shipped_set_for(distro);
    let mut sets: Vec<&(&'static str, Dialect, Types)> =
        shipped().iter().filter(|(_, d, _)| *d == dialect).collect();
    sets.sort_by_key(|(name, _, _)| Some(*name) != first);
    // On the search path: the type and what it uses, each from the search path where it is
    // there, else from the first shipped set that has it (a workspace's own types use the
    // standard ones).
    let dirs = search_dirs(msg_path);
    if !dirs.is_empty() {
        let root = normalize_type(datatype);
        if let Some((_, file)) = own_from_search_path(&dirs, &root) {
            let text = assemble(datatype, dialect, |n| {
                own_from_search_path(&dirs, n).map(|(t, _)| t).or_else(|| {
                    sets.iter()
                        .find_map(|(_, _, types)| types.get(n).map(|(_, b)| b.clone()))
                })
            });
            if let Some(text) = text {
                return Some((text, DefSource::SearchPath(file)));
            }
        }
    }
    for (name, _, types) in sets {
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

/// Finds a definition of `datatype` in `dirs` only (a folder of packages `PKG/msg/T.msg`, a
/// workspace with them under `src/`, or a flat folder of `.msg` files), for migrating to it.
/// The types it uses come from `dirs` too, else from `stored` (the recording's own definition
/// text, whose `MSG:` sections name them), else from the shipped sets. Returns the assembled text
/// and the file of the type itself.
pub fn lookup_in(
    dirs: &[PathBuf],
    datatype: &str,
    dialect: Dialect,
    stored: &str,
) -> Option<(String, PathBuf)> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for d in dirs {
        roots.push(d.clone());
        roots.push(d.join("src"));
    }
    let flat = |name: &str| -> Option<(String, PathBuf)> {
        let ty = name.rsplit('/').next()?;
        dirs.iter().find_map(|d| {
            let p = d.join(format!("{ty}.msg"));
            std::fs::read_to_string(&p).ok().map(|t| (t, p))
        })
    };
    let root = normalize_type(datatype);
    let (_, file) = own_from_search_path(&roots, &root).or_else(|| flat(&root))?;
    let stored_types = split_types(&format!("MSG: {root}\n{stored}"));
    let text = assemble(datatype, dialect, |n| {
        own_from_search_path(&roots, n)
            .map(|(t, _)| t)
            .or_else(|| (n == root).then(|| flat(n).map(|(t, _)| t)).flatten())
            .or_else(|| stored_types.get(n).map(|(_, b)| b.clone()))
            .or_else(|| {
                shipped()
                    .iter()
                    .filter(|(_, d, _)| *d == dialect)
                    .find_map(|(_, _, types)| types.get(n).map(|(_, b)| b.clone()))
            })
    })?;
    Some((text, file))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn search_path_then_shipped() {
        let root = std::env::temp_dir().join(format!("bagscope-msgpath-{}", std::process::id()));
        let msg = root.join("zz_test_pkg").join("msg");
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(msg.join("Outer.msg"), "Inner a\nstd_msgs/Header h\n").unwrap();
        std::fs::write(msg.join("Inner.msg"), "float64 x # a comment\n").unwrap();
        let (text, src) = lookup(
            "zz_test_pkg/msg/Outer",
            Dialect::Ros2,
            std::slice::from_ref(&root),
        )
        .unwrap();
        assert_eq!(src, DefSource::SearchPath(msg.join("Outer.msg")));
        // The dependencies are assembled: its own package's, and a shipped one's.
        let def = crate::definition::msg::MsgDef::parse_dialect(
            "zz_test_pkg/msg/Outer",
            &text,
            Dialect::Ros2,
        )
        .unwrap();
        assert_eq!(def.types.len(), 4, "Outer, Inner, Header, Time: {text}");
        // Shipped: a ROS 2 type by either name, the distro's set first.
        let (_, src) = lookup_for("sensor_msgs/Imu", Dialect::Ros2, "jazzy", &[]).unwrap();
        assert_eq!(src, DefSource::Shipped("ros2_jazzy"));
        let (text, _) = lookup("sensor_msgs/msg/Imu", Dialect::Ros2, &[]).unwrap();
        let def = crate::definition::msg::MsgDef::parse_dialect(
            "sensor_msgs/msg/Imu",
            &text,
            Dialect::Ros2,
        )
        .unwrap();
        assert_eq!(def.root().fields.len(), 7);
        assert!(lookup("no_such_pkg/msg/Nothing", Dialect::Ros2, &[]).is_none());
        let _ = std::fs::remove_dir_all(&root);
    }
}
