//! ROS 2 QoS profiles: read from what a recording says its publishers offered (rosbag2's
//! `offered_qos_profiles`, in metadata.yaml or an MCAP channel's metadata; integer enums before
//! Jazzy, names since), from a `--qos-override` file (rosbag2's own format), and from a
//! discovered DDS writer; written back as `offered_qos_profiles` when recording.

use std::collections::HashMap;
use std::path::Path;

use rustdds::policy::{Durability, History as DdsHistory, Reliability, ResourceLimits};
use rustdds::{QosPolicies, QosPolicyBuilder};
use yaml_rust2::{Yaml, YamlLoader};

use crate::{Error, Result};

/// Messages a keep-all reader holds unread per topic.
const READER_MAX_SAMPLES: i32 = 65_536;

/// A history policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// Keep the last `n` messages.
    KeepLast(u32),
    /// Keep every message.
    KeepAll,
    /// Not said (DDS does not announce a writer's history).
    Unknown,
}

/// The QoS of a ROS 2 publisher or subscription, as much of it as decides delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// Reliable (else best effort).
    pub reliable: bool,
    /// Transient-local durability: late subscribers get the kept messages (ROS 1's latching).
    pub transient_local: bool,
    /// History.
    pub history: History,
}

impl Default for Qos {
    /// ROS 2's default profile: reliable, volatile, keep last 10.
    fn default() -> Self {
        Qos {
            reliable: true,
            transient_local: false,
            history: History::KeepLast(10),
        }
    }
}

/// `key` of a YAML map as an integer enum or its name, lowercased.
fn enum_of(m: &Yaml, key: &str) -> Option<String> {
    match &m[key] {
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::String(s) => Some(s.to_ascii_lowercase()),
        _ => None,
    }
}

/// One profile's settings: each Some where the profile says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QosOverride {
    reliable: Option<bool>,
    transient_local: Option<bool>,
    history: Option<History>,
}

impl QosOverride {
    fn parse(m: &Yaml, what: &str) -> Result<QosOverride> {
        let bad = |key: &str, v: &str| {
            Error::Invalid(format!("{what}: {key} {v:?} is not a ROS 2 QoS setting"))
        };
        let reliable = match enum_of(m, "reliability").as_deref() {
            None | Some("0" | "system_default" | "3" | "unknown" | "4" | "best_available") => None,
            Some("1" | "reliable") => Some(true),
            Some("2" | "best_effort") => Some(false),
            Some(v) => return Err(bad("reliability", v)),
        };
        let transient_local = match enum_of(m, "durability").as_deref() {
            None | Some("0" | "system_default" | "3" | "unknown" | "4" | "best_available") => None,
            Some("1" | "transient_local") => Some(true),
            Some("2" | "volatile") => Some(false),
            Some(v) => return Err(bad("durability", v)),
        };
        let depth = match &m["depth"] {
            Yaml::Integer(d) => Some(u32::try_from(*d).map_err(|_| bad("depth", &d.to_string()))?),
            _ => None,
        };
        let history = match enum_of(m, "history").as_deref() {
            None | Some("0" | "system_default" | "3" | "unknown") => {
                depth.filter(|&d| d > 0).map(History::KeepLast)
            }
            Some("1" | "keep_last") => Some(History::KeepLast(depth.unwrap_or(10).max(1))),
            Some("2" | "keep_all") => Some(History::KeepAll),
            Some(v) => return Err(bad("history", v)),
        };
        Ok(QosOverride {
            reliable,
            transient_local,
            history,
        })
    }

    /// `q` with what this profile says put over it.
    pub fn apply(&self, q: Qos) -> Qos {
        Qos {
            reliable: self.reliable.unwrap_or(q.reliable),
            transient_local: self.transient_local.unwrap_or(q.transient_local),
            history: self.history.unwrap_or(q.history),
        }
    }
}

impl Qos {
    /// What a player offers for a topic whose publishers offered `recorded`
    /// (`offered_qos_profiles`, a YAML list): as rosbag2 plays it, reliable only if every
    /// publisher was, transient-local only if every one was, the largest history depth. None
    /// when the text says nothing usable (older recordings store none).
    pub fn from_recorded(recorded: &str) -> Option<Qos> {
        let docs = YamlLoader::load_from_str(recorded).ok()?;
        let list = docs.first()?.as_vec()?;
        let mut profiles = list
            .iter()
            .filter_map(|p| QosOverride::parse(p, "offered_qos_profiles").ok());
        let first = profiles.next()?;
        let mut q = first.apply(Qos::default());
        for p in profiles {
            let o = p.apply(Qos::default());
            q.reliable &= o.reliable;
            q.transient_local &= o.transient_local;
            q.history = match (q.history, o.history) {
                (History::KeepAll, _) | (_, History::KeepAll) => History::KeepAll,
                (History::KeepLast(a), History::KeepLast(b)) => History::KeepLast(a.max(b)),
                (h, History::Unknown) | (History::Unknown, h) => h,
            };
        }
        Some(q)
    }

    /// What a player offers for recorded connection `c`: its recorded profile
    /// ([`Qos::from_recorded`], ROS 2's default where none is stored), transient-local where
    /// ROS 1 latched it. A volatile topic's writer keeps whatever reliable subscribers have
    /// not acknowledged yet, however far behind they are (RustDDS's send window bounds it and
    /// holds the player up), so playing fast loses nothing, where a recorded keep-last depth
    /// would drop what a slow subscriber has not read; a transient-local topic keeps its
    /// recorded depth, which is how many messages a late subscriber gets.
    pub fn for_playing(c: &bagscope_reader::storage::Connection) -> Qos {
        let mut q = Qos::from_recorded(&c.qos).unwrap_or_default();
        if crate::play::latching(c) {
            q.transient_local = true;
        }
        if !q.transient_local {
            q.history = History::KeepAll;
        }
        q
    }

    /// The QoS a discovered DDS writer offers (its history is not announced; a policy it does
    /// not announce is the DDS default: reliable, volatile).
    pub fn offered_by(d: &rustdds::discovery::PublicationBuiltinTopicData) -> Qos {
        Qos {
            // Absent from the announcement means the DDS default, reliable for a writer.
            reliable: !matches!(d.reliability, Some(Reliability::BestEffort)),
            transient_local: matches!(
                d.durability,
                Some(Durability::TransientLocal | Durability::Transient | Durability::Persistent)
            ),
            history: History::Unknown,
        }
    }

    /// What a recorder asks for to match every one of `offers` (a reliable request does not
    /// match a best-effort writer, nor a transient-local one a volatile writer), keeping up to
    /// every message until it is read (the recorder reads continuously).
    pub fn requested(offers: &[Qos]) -> Qos {
        Qos {
            reliable: !offers.is_empty() && offers.iter().all(|q| q.reliable),
            transient_local: !offers.is_empty() && offers.iter().all(|q| q.transient_local),
            history: History::KeepAll,
        }
    }

    /// RustDDS's policies for a writer of this profile (an unknown history keeps the last 10).
    pub fn policies(&self) -> QosPolicies {
        self.builder().build()
    }

    /// RustDDS's policies for a reader of this profile: as [`Qos::policies`], and a reader that
    /// keeps every message keeps up to 65,536 of them unread per topic (RustDDS's own default
    /// is 64, which drops messages a recorder has not taken yet during a burst).
    pub fn reader_policies(&self) -> QosPolicies {
        let b = self.builder();
        match self.history {
            History::KeepAll => b
                .resource_limits(ResourceLimits {
                    max_samples: READER_MAX_SAMPLES,
                    max_instances: 1,
                    max_samples_per_instance: READER_MAX_SAMPLES,
                })
                .build(),
            _ => b.build(),
        }
    }

    fn builder(&self) -> QosPolicyBuilder {
        QosPolicyBuilder::new()
            .reliability(if self.reliable {
                Reliability::Reliable {
                    max_blocking_time: rustdds::Duration::from_millis(100),
                }
            } else {
                Reliability::BestEffort
            })
            .durability(if self.transient_local {
                Durability::TransientLocal
            } else {
                Durability::Volatile
            })
            .history(match self.history {
                History::KeepLast(n) => DdsHistory::KeepLast {
                    depth: i32::try_from(n.max(1)).unwrap_or(i32::MAX),
                },
                History::KeepAll => DdsHistory::KeepAll,
                History::Unknown => DdsHistory::KeepLast { depth: 10 },
            })
    }

    /// This profile as rosbag2 records it (`offered_qos_profiles`, Jazzy's names, one
    /// publisher).
    pub fn to_recorded(&self) -> String {
        let (history, depth) = match self.history {
            History::KeepLast(n) => ("keep_last", n),
            History::KeepAll => ("keep_all", 0),
            History::Unknown => ("unknown", 0),
        };
        let inf = "{sec: 9223372036, nsec: 854775807}";
        format!(
            "- history: {history}\n  depth: {depth}\n  reliability: {}\n  durability: {}\n  deadline: {inf}\n  lifespan: {inf}\n  liveliness: automatic\n  liveliness_lease_duration: {inf}\n  avoid_ros_namespace_conventions: false\n",
            if self.reliable { "reliable" } else { "best_effort" },
            if self.transient_local {
                "transient_local"
            } else {
                "volatile"
            },
        )
    }
}

/// Per-topic QoS profiles given by the user (`--qos-override FILE`, the format of rosbag2's
/// `--qos-profile-overrides-path`: a map of topic to profile).
#[derive(Debug, Clone, Default)]
pub struct QosOverrides(HashMap<String, QosOverride>);

impl QosOverrides {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<QosOverrides> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a file called `what`.
    pub fn parse(text: &str, what: &str) -> Result<QosOverrides> {
        let docs = YamlLoader::load_from_str(text)
            .map_err(|e| Error::Invalid(format!("{what}: not YAML: {e}")))?;
        let mut out = HashMap::new();
        let Some(doc) = docs.first() else {
            return Ok(QosOverrides(out));
        };
        let map = doc.as_hash().ok_or_else(|| {
            Error::Invalid(format!("{what}: expected a map of topic to QoS profile"))
        })?;
        for (k, v) in map {
            let topic = k
                .as_str()
                .ok_or_else(|| Error::Invalid(format!("{what}: a topic name is not a string")))?;
            if v.as_hash().is_none() {
                return Err(Error::Invalid(format!(
                    "{what}: {topic}: expected a profile (reliability, durability, history, depth)"
                )));
            }
            out.insert(
                topic.to_string(),
                QosOverride::parse(v, &format!("{what}: {topic}"))?,
            );
        }
        Ok(QosOverrides(out))
    }

    /// `q` for `topic`, with the user's profile over it if there is one.
    pub fn apply(&self, topic: &str, q: Qos) -> Qos {
        self.0.get(topic).map_or(q, |o| o.apply(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_profiles_of_either_era_are_read() {
        // Humble: integer enums.
        let humble = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 1\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n";
        assert_eq!(
            Qos::from_recorded(humble),
            Some(Qos {
                reliable: true,
                transient_local: true,
                history: History::KeepLast(10),
            })
        );
        // Jazzy: names; a best-effort publisher makes the player best effort.
        let jazzy = "- history: keep_last\n  depth: 5\n  reliability: reliable\n  durability: volatile\n- history: keep_last\n  depth: 7\n  reliability: best_effort\n  durability: volatile\n";
        assert_eq!(
            Qos::from_recorded(jazzy),
            Some(Qos {
                reliable: false,
                transient_local: false,
                history: History::KeepLast(7),
            })
        );
        assert_eq!(Qos::from_recorded(""), None);
        assert_eq!(Qos::from_recorded("[]"), None);
        // What bagscope records reads back the same.
        let q = Qos {
            reliable: false,
            transient_local: true,
            history: History::KeepLast(3),
        };
        assert_eq!(Qos::from_recorded(&q.to_recorded()), Some(q));
    }

    #[test]
    fn overrides_replace_what_they_say() {
        let o = QosOverrides::parse(
            "/tf_static:\n  durability: transient_local\n  history: keep_all\n/scan:\n  reliability: best_effort\n",
            "qos.yaml",
        )
        .expect("parses");
        let q = o.apply("/tf_static", Qos::default());
        assert!(q.transient_local && q.reliable);
        assert_eq!(q.history, History::KeepAll);
        assert!(!o.apply("/scan", Qos::default()).reliable);
        assert_eq!(o.apply("/other", Qos::default()), Qos::default());
        let e =
            QosOverrides::parse("/a:\n  reliability: sometimes\n", "q.yaml").expect_err("refused");
        assert!(e.to_string().contains("q.yaml: /a: reliability"), "{e}");
        assert!(QosOverrides::parse("- 1\n", "q.yaml").is_err());
    }

    #[test]
    fn a_recorder_asks_for_what_every_publisher_offers() {
        let best = Qos {
            reliable: false,
            ..Qos::default()
        };
        let latched = Qos {
            transient_local: true,
            ..Qos::default()
        };
        assert!(Qos::requested(&[Qos::default()]).reliable);
        assert!(!Qos::requested(&[Qos::default(), best]).reliable);
        assert!(Qos::requested(&[latched]).transient_local);
        assert!(!Qos::requested(&[latched, Qos::default()]).transient_local);
    }
}
