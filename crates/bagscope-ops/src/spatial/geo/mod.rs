//! Positions on the Earth: GPS tracks of fix topics ([`track`]), GeoJSON shapes
//! ([`shapes`]), Web Mercator for tiled maps ([`mercator`]) and tracks written out as GPX,
//! KML and GeoJSON ([`out`]).

mod fast;
pub mod mercator;
pub mod out;
pub mod shapes;
pub mod track;

pub use track::{map_topics, read_track, FixKind, Track, TrackSource};

/// A track that cannot be read: its source and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct GeoError {
    /// The topic, or the latitude and longitude paths.
    pub what: String,
    /// Why.
    pub reason: String,
}
