//! What the app keeps between runs, as one struct: stored under eframe's app key and restored
//! in one place ([`Persisted::load`]), as egui's demo app keeps its state. Settings written by
//! earlier versions (one storage key each) are read when the struct is absent.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::layout::Layout;

/// The app's persisted settings.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Persisted {
    /// Recently opened files, newest first.
    pub recent: Vec<PathBuf>,
    /// The message search path set in the app (directories separated as in PATH).
    pub msg_path: String,
    /// Bookmarks (absolute ns, name) per file, by canonical path.
    pub bookmarks: BTreeMap<String, Vec<(u64, String)>>,
    /// Layouts per topic set ([`super::layout::key`]).
    pub layouts: BTreeMap<String, Layout>,
}

impl Persisted {
    /// What `storage` holds: the struct, or the keys earlier versions wrote, or nothing.
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Persisted {
        let Some(s) = storage else {
            return Persisted::default();
        };
        if let Some(p) = eframe::get_value::<Persisted>(s, eframe::APP_KEY) {
            return p;
        }
        Persisted {
            recent: s
                .get_string("recent")
                .map(|t| {
                    t.lines()
                        .filter(|l| !l.is_empty())
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            msg_path: s.get_string("msg_path").unwrap_or_default(),
            bookmarks: s
                .get_string("bookmarks")
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default(),
            layouts: s
                .get_string("layouts")
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default(),
        }
    }

    /// Writes the struct to `storage`.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, self);
    }
}
