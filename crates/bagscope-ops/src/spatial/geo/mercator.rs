//! Web Mercator (EPSG:3857) as slippy-map tiles use it: a position on the world square
//! `[0, 1) × [0, 1)` (x east from longitude −180°, y south from latitude +85.0511°), the tile
//! that holds it at a zoom, and metres per unit at a latitude for scale bars and accuracy
//! ellipses. OpenStreetMap's tile names (`z/x/y`) are these squares at `2^z` tiles a side.

use std::f64::consts::PI;

/// The latitude at which the world square ends (north and south): `atan(sinh(π))`.
pub const MAX_LATITUDE: f64 = 85.051_128_779_806_59;

/// The Earth's equatorial circumference in metres (WGS 84), the world square's width.
pub const EQUATOR_M: f64 = 40_075_016.685_578_49;

/// The position of `lat`, `lon` (degrees) on the world square; latitudes beyond
/// [`MAX_LATITUDE`] are clamped to its edge.
pub fn world(lat: f64, lon: f64) -> [f64; 2] {
    let phi = lat.clamp(-MAX_LATITUDE, MAX_LATITUDE).to_radians();
    let x = (lon + 180.0) / 360.0;
    let y = (1.0 - (phi.tan() + 1.0 / phi.cos()).ln() / PI) / 2.0;
    [x, y]
}

/// The latitude and longitude (degrees) of a position on the world square.
pub fn lat_lon(p: [f64; 2]) -> (f64, f64) {
    let lon = p[0] * 360.0 - 180.0;
    let lat = (PI * (1.0 - 2.0 * p[1])).sinh().atan().to_degrees();
    (lat, lon)
}

/// The tile (`x`, `y`) at zoom `z` that holds a position on the world square.
pub fn tile_of(p: [f64; 2], z: u8) -> (u32, u32) {
    let n = f64::from(1u32 << z.min(31));
    let last = (n - 1.0).max(0.0);
    (
        (p[0] * n).floor().clamp(0.0, last) as u32,
        (p[1] * n).floor().clamp(0.0, last) as u32,
    )
}

/// Metres on the ground per world-square unit at latitude `lat` (degrees).
pub fn metres_per_unit(lat: f64) -> f64 {
    EQUATOR_M * lat.clamp(-MAX_LATITUDE, MAX_LATITUDE).to_radians().cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tiles() {
        // Munich's Marienplatz at zoom 12, as `mercantile.tile(11.5754, 48.1371, 12)` gives it.
        let p = world(48.1371, 11.5754);
        assert_eq!(tile_of(p, 12), (2179, 1421));
        assert_eq!(tile_of(world(0.0, 0.0), 1), (1, 1));
        assert_eq!(tile_of(world(90.0, -180.0), 3), (0, 0));
        assert_eq!(tile_of(world(-90.0, 180.0), 3), (7, 7));
    }

    #[test]
    fn round_trip() {
        for (lat, lon) in [
            (48.1371, 11.5754),
            (-33.86, 151.2),
            (0.0, 0.0),
            (84.9, -179.9),
        ] {
            let (la, lo) = lat_lon(world(lat, lon));
            assert!(
                (la - lat).abs() < 1e-9 && (lo - lon).abs() < 1e-9,
                "{lat} {lon}"
            );
        }
        assert!((world(MAX_LATITUDE, 0.0)[1]).abs() < 1e-12);
        assert!((metres_per_unit(60.0) - EQUATOR_M / 2.0).abs() < 1e-6);
    }
}
