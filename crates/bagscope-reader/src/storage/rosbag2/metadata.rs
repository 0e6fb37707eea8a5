//! `metadata.yaml`: parsed for what it says (versions 1 to 9), and the QoS profiles it records.

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use crate::error::{Error, Result};

/// Whether `path`, whose first bytes are `head`, looks like a rosbag2 `metadata.yaml`.
pub(crate) fn looks_like_metadata(path: &Path, head: &[u8]) -> bool {
    let name_fits = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".yaml") || n.ends_with(".yml"));
    name_fits || head.starts_with(b"rosbag2_bagfile_information")
}

/// What `metadata.yaml` says, as far as bagscope uses it.
#[derive(Debug, Default, Clone)]
pub struct Metadata {
    /// `version`.
    pub version: i64,
    /// `storage_identifier`.
    pub storage: String,
    /// `relative_file_paths`.
    pub files: Vec<String>,
    /// `message_count`.
    pub message_count: Option<u64>,
    /// `starting_time`.
    pub start_ns: Option<i128>,
    /// `duration`.
    pub duration_ns: Option<i128>,
    /// `compression_format` and `compression_mode`.
    pub compression: (String, String),
    /// `ros_distro` (version 8 on).
    pub ros_distro: String,
    /// Per topic: type, serialization format, QoS text, message count.
    pub topics: BTreeMap<String, (String, String, String, u64)>,
    /// Per topic: the type's REP 2011 hash, `type_description_hash` (version 7 on), if given.
    pub type_hashes: BTreeMap<String, String>,
}

pub(super) fn yaml_text(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null | Yaml::BadValue => String::new(),
        other => {
            let mut out = String::new();
            let mut e = yaml_rust2::YamlEmitter::new(&mut out);
            let _ = e.dump(other);
            out.trim_start_matches("---").trim().to_string()
        }
    }
}

pub(super) fn yaml_int(y: &Yaml) -> Option<i128> {
    match y {
        Yaml::Integer(i) => Some(i128::from(*i)),
        Yaml::String(s) | Yaml::Real(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Parses `metadata.yaml`.
pub fn parse_metadata(text: &str, path: &Path) -> Result<Metadata> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| Error::Storage {
        path: path.to_path_buf(),
        reason: format!("not valid YAML: {e}"),
    })?;
    let info = docs
        .first()
        .map(|d| &d["rosbag2_bagfile_information"])
        .filter(|y| !y.is_badvalue())
        .ok_or_else(|| Error::Storage {
            path: path.to_path_buf(),
            reason: "a metadata key is missing: no `rosbag2_bagfile_information` mapping, so not a rosbag2 metadata.yaml".into(),
        })?;
    let mut m = Metadata {
        version: yaml_int(&info["version"]).unwrap_or(0) as i64,
        storage: yaml_text(&info["storage_identifier"]),
        ..Default::default()
    };
    if let Some(v) = info["relative_file_paths"].as_vec() {
        m.files = v.iter().map(yaml_text).collect();
    }
    m.message_count = yaml_int(&info["message_count"]).map(|n| n.max(0) as u64);
    m.start_ns = yaml_int(&info["starting_time"]["nanoseconds_since_epoch"]);
    m.duration_ns = yaml_int(&info["duration"]["nanoseconds"]);
    m.compression = (
        yaml_text(&info["compression_format"]),
        yaml_text(&info["compression_mode"]),
    );
    m.ros_distro = yaml_text(&info["ros_distro"]);
    let top_format = yaml_text(&info["serialization_format"]);
    if let Some(v) = info["topics_with_message_count"].as_vec() {
        for t in v {
            let meta = if t["topic_metadata"].is_badvalue() {
                &t["topic_and_type"]
            } else {
                &t["topic_metadata"]
            };
            let name = yaml_text(&meta["name"]);
            let mut format = yaml_text(&meta["serialization_format"]);
            if format.is_empty() {
                format = top_format.clone();
            }
            let qos = yaml_text(&meta["offered_qos_profiles"]);
            let count = yaml_int(&t["message_count"]).unwrap_or(0).max(0) as u64;
            let hash = yaml_text(&meta["type_description_hash"]);
            if !hash.is_empty() {
                m.type_hashes.insert(name.clone(), hash);
            }
            m.topics
                .insert(name, (yaml_text(&meta["type"]), format, qos, count));
        }
    }
    Ok(m)
}

/// A one-line summary of recorded QoS profiles (either YAML form, see [`qos_profiles`]):
/// reliability, durability, history and depth of the first profile; text that is not YAML, its
/// first line.
pub fn qos_summary(text: &str) -> String {
    let Some(list) = parse_qos(text) else {
        return text.lines().next().unwrap_or("").to_string();
    };
    let mut parts = Vec::new();
    if let Some(p) = list.first() {
        for v in [&p.reliability, &p.durability, &p.history] {
            if !v.is_empty() {
                parts.push(v.clone());
            }
        }
        if let Some(d) = p.depth {
            parts.push(format!("depth {d}"));
        }
    }
    let mut s = parts.join(", ");
    if list.len() > 1 {
        s.push_str(&format!(" ({} publishers)", list.len()));
    }
    s
}

/// One QoS profile a publisher offered, as rosbag2 records it: policies by their lower-case
/// names (`keep_last`, `reliable`, `transient_local`, `automatic`; `unknown` for a number
/// outside the enum; empty where the profile leaves one out), durations as (seconds,
/// nanoseconds).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QosProfile {
    /// `history`.
    pub history: String,
    /// `depth`, where given.
    pub depth: Option<i64>,
    /// `reliability`.
    pub reliability: String,
    /// `durability`.
    pub durability: String,
    /// `deadline`.
    pub deadline: (i64, i64),
    /// `lifespan`.
    pub lifespan: (i64, i64),
    /// `liveliness`.
    pub liveliness: String,
    /// `liveliness_lease_duration`.
    pub liveliness_lease_duration: (i64, i64),
    /// `avoid_ros_namespace_conventions`.
    pub avoid_ros_namespace_conventions: bool,
}

/// The QoS profiles of recorded QoS text (either YAML form: enum numbers of versions 4-8,
/// names of version 9); none for text that is not such a list.
pub fn qos_profiles(text: &str) -> Vec<QosProfile> {
    parse_qos(text).unwrap_or_default()
}

/// [`qos_profiles`], or `None` for text that is not YAML.
fn parse_qos(text: &str) -> Option<Vec<QosProfile>> {
    let docs = YamlLoader::load_from_str(text).ok()?;
    let Some(list) = docs.first().and_then(|d| d.as_vec()) else {
        return Some(Vec::new());
    };
    let policy = |v: &Yaml, table: &[&str]| -> String {
        match yaml_int(v) {
            Some(i) => usize::try_from(i)
                .ok()
                .and_then(|i| table.get(i))
                .map_or("unknown".into(), |s| s.to_string()),
            None => yaml_text(v).to_lowercase(),
        }
    };
    let time = |v: &Yaml| -> (i64, i64) {
        let n = |k: &str| {
            yaml_int(&v[k])
                .and_then(|x| i64::try_from(x).ok())
                .unwrap_or(0)
        };
        (n("sec"), n("nsec"))
    };
    Some(
        list.iter()
            .map(|p| QosProfile {
                history: policy(
                    &p["history"],
                    &["system_default", "keep_last", "keep_all", "unknown"],
                ),
                depth: yaml_int(&p["depth"]).and_then(|x| i64::try_from(x).ok()),
                reliability: policy(
                    &p["reliability"],
                    &[
                        "system_default",
                        "reliable",
                        "best_effort",
                        "unknown",
                        "best_available",
                    ],
                ),
                durability: policy(
                    &p["durability"],
                    &[
                        "system_default",
                        "transient_local",
                        "volatile",
                        "unknown",
                        "best_available",
                    ],
                ),
                deadline: time(&p["deadline"]),
                lifespan: time(&p["lifespan"]),
                liveliness: policy(
                    &p["liveliness"],
                    &[
                        "system_default",
                        "automatic",
                        "manual_by_node",
                        "manual_by_topic",
                        "unknown",
                        "best_available",
                    ],
                ),
                liveliness_lease_duration: time(&p["liveliness_lease_duration"]),
                avoid_ros_namespace_conventions: matches!(
                    &p["avoid_ros_namespace_conventions"],
                    Yaml::Boolean(true)
                ),
            })
            .collect(),
    )
}

/// QoS text with whitespace and quoting removed, to compare the YAML-in-YAML forms.
pub(super) fn qos_norm(q: &str) -> String {
    q.chars()
        .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both YAML forms rosbag2 writes (enum numbers, versions 4-8; names, version 9), several
    /// publishers, a policy left out, a number outside its enum.
    #[test]
    fn qos_profiles_and_their_summary() {
        let v8 = "- history: 1\n  depth: 10\n  reliability: 1\n  durability: 1\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 10\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false\n- history: 9\n  reliability: 2\n";
        let p = qos_profiles(v8);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].history.as_str(), p[0].depth, p[0].reliability.as_str()),
            ("keep_last", Some(10), "reliable")
        );
        assert_eq!(
            (p[0].deadline, p[0].lifespan),
            ((2147483647, 4294967295), (10, 0))
        );
        assert_eq!(
            (p[0].durability.as_str(), p[0].liveliness.as_str()),
            ("transient_local", "automatic")
        );
        assert_eq!(
            (p[1].history.as_str(), p[1].depth, p[1].durability.as_str()),
            ("unknown", None, "")
        );
        assert_eq!(
            qos_summary(v8),
            "reliable, transient_local, keep_last, depth 10 (2 publishers)"
        );
        let v9 =
            "- history: keep_all\n  depth: 0\n  reliability: best_effort\n  durability: volatile\n";
        assert_eq!(qos_summary(v9), "best_effort, volatile, keep_all, depth 0");
        assert_eq!(qos_summary("not: [yaml"), "not: [yaml");
        assert!(qos_profiles("not: [yaml").is_empty());
    }
}
