//! GPS tracks: the fixes of the corpora's NavSatFix, GPSFix topics as bagscope reads them
//! against rosbags' decoded fixes, written out as GPX, KML and GeoJSON and read back by gpxpy,
//! fastkml and shapely/geojson (tests/py/track_peers.py); fixes without a fix or a position
//! left out and counted, never a panic.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use bagscope_ops::spatial::geo::{read_track, TrackSource};
use bagscope_reader::Bag;

use crate::common;

fn track(rec: &Path, topic: &str) -> bagscope_ops::spatial::geo::Track {
    let bag = Bag::open(rec).unwrap();
    read_track(
        &bag,
        &TrackSource::Topic(topic.into()),
        (None, None),
        2,
        &AtomicBool::new(false),
    )
    .unwrap()
}

#[test]
fn tracks_equal_rosbags_fixes_in_gpx_kml_and_geojson() {
    let c1 = common::corpus_dir();
    let c2 = common::corpus2_dir();
    for (rec, topic) in [
        (c1.join("misc/rviz_satellite_sample.bag"), "/gps/fix"),
        (c1.join("navigation/gps_data.bag"), "/fix"),
        (c1.join("robot_localization/test1.bag"), "/fix"),
        (c1.join("plotjuggler/tilt_laser.bag"), "/position_gps"),
        (
            c2.join("rosbags-rs/test_bag_mcap"),
            "/test/sensor_msgs/nav_sat_fix",
        ),
        (
            c2.join("rosbags-rs/test_bag_sqlite3"),
            "/test/sensor_msgs/nav_sat_fix",
        ),
    ] {
        let dir = common::temp_dir("track-peers");
        let out = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/py/track_peers.py"
            ))
            .arg(env!("CARGO_BIN_EXE_bagscope"))
            .arg(&rec)
            .arg(topic)
            .arg(&*dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            rec.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = track(&rec, topic);
        assert_eq!(
            t.len() as u64,
            r["kept"].as_u64().unwrap(),
            "{}",
            rec.display()
        );
        assert_eq!(t.no_fix as u64, r["no_fix"].as_u64().unwrap());
        assert_eq!(t.bad as u64, r["bad"].as_u64().unwrap());
        assert!(t.len() >= 2, "{}: {r}", rec.display());
    }
}

/// The unindexed u-blox bag (rosbags refuses it unindexed): its fixes equal those ROS 1's own
/// library reads from a reindexed copy (`tests/py/rosbag1_fixes.py`, Debian's python3-rosbag).
/// The ccny `gps_common/GPSFix` of the older definition (no status field; format 1.2, which
/// rosbags refuses and Debian's rosbag fails to iterate here): all its 120 messages, the count
/// `bagscope info` and its topic's index give.
#[test]
fn gpsfix_and_an_unindexed_bag() {
    let c1 = common::corpus_dir();
    let t = track(&c1.join("ccny/gpsd_viewer_demo_b.bag"), "/fix");
    assert_eq!(t.len(), 120);
    assert!(t.status.iter().all(|&s| s == i8::MIN), "no status field");
    let rec = c1.join("foxglove-cli/gps.bag.active");
    let dir = common::temp_dir("track-unindexed");
    let out = Command::new("/usr/bin/python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/rosbag1_fixes.py"
        ))
        .arg(&rec)
        .arg("/gps/fix")
        .arg(&*dir)
        .output()
        .expect("Debian's python3 with python3-rosbag (.ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<(u64, i8, f64, f64, f64)> = serde_json::from_slice(&out.stdout).unwrap();
    let kept: Vec<_> = want.iter().filter(|w| w.1 >= 0).collect();
    let t = track(&rec, "/gps/fix");
    assert_eq!(t.len(), kept.len());
    assert_eq!(t.no_fix, want.len() - kept.len());
    // serde_json parses a float to within an ulp or so of Python's shortest repr.
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    for (i, w) in kept.iter().enumerate() {
        assert_eq!(t.time_ns[i], w.0, "fix {i}");
        assert!(
            same(t.lat[i], w.2) && same(t.lon[i], w.3) && same(t.alt[i], w.4),
            "fix {i}: {} {} {}, ROS 1's rosbag {w:?}",
            t.lat[i],
            t.lon[i],
            t.alt[i]
        );
    }
}

/// No fix, NaN, out of range and 0°, 0°: left out, counted, the first one said with its time
/// and number; the good ones kept with their accuracy; a track file still written.
#[test]
fn bad_fixes_are_left_out_and_said() {
    let dir = common::temp_dir("track-bad");
    let p = dir.join("bad.bag");
    let t0 = 1_700_000_000_000_000_000u64;
    let rows: [(i8, f64, f64, f64); 7] = [
        (0, 48.1, 11.5, 4.0),
        (-1, 48.2, 11.6, 4.0),
        (0, f64::NAN, 11.6, 4.0),
        (0, 95.0, 11.6, 4.0),
        (0, 0.0, 0.0, 4.0),
        (0, 48.3, 181.0, 0.0),
        (2, 48.4, 11.7, 0.0),
    ];
    let fixes: Vec<common::gps::Fix> = rows
        .iter()
        .enumerate()
        .map(|(i, &(st, lat, lon, var))| (t0 + i as u64 * 100_000_000, st, lat, lon, var))
        .collect();
    common::gps::write_fixes(&p, &fixes);
    let t = track(&p, "/gps/fix");
    assert_eq!(t.lat, vec![48.1, 48.4]);
    assert_eq!((t.no_fix, t.bad), (1, 4));
    assert_eq!(t.skipped[0].index, 2);
    assert_eq!(t.skipped[0].time_ns, t0 + 200_000_000);
    assert!(t.skipped[0].why.contains("NaN"), "{:?}", t.skipped);
    assert!(t.skipped[1].why.contains("latitude 95"));
    assert!(t.skipped[2].why.contains("0°, 0°"));
    assert!(t.skipped[3].why.contains("longitude 181"));
    assert_eq!(t.accuracy(0), 2.0);
    assert!(t.accuracy(1).is_nan(), "covariance type unknown");
    assert_eq!(t.status, vec![0, 2]);
    let said = t.summary_of_skipped();
    assert!(
        said.contains("1 without a fix") && said.contains("4 not a position"),
        "{said}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["export", p.to_str().unwrap(), "-t", "/gps/fix", "-o"])
        .arg(dir.join("t.gpx"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("left out: 1 without a fix"), "{err}");
    let gpx = std::fs::read_to_string(dir.join("t.gpx")).unwrap();
    assert_eq!(gpx.matches("<trkpt").count(), 2);
    assert!(gpx.contains("<fix>dgps</fix>"));
    // A topic that is not a fix type, and a pair of paths from two topics: errors that say so.
    let bag = Bag::open(&p).unwrap();
    let e = read_track(
        &bag,
        &TrackSource::Paths {
            lat: "/gps/fix.latitude".into(),
            lon: "/other.longitude".into(),
        },
        (None, None),
        1,
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("one topic"), "{e}");
    let t = read_track(
        &bag,
        &TrackSource::Paths {
            lat: "/gps/fix.latitude".into(),
            lon: "/gps/fix.longitude".into(),
        },
        (None, None),
        1,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(
        (t.len(), t.bad, t.no_fix),
        (3, 4, 0),
        "no status read from plain paths"
    );
}

/// `foxglove.LocationFix` in protobuf (Foxglove's SDK) and in JSON (the `mcap` package), and
/// `foxglove.GeoJSON` (tests/py/foxglove_geo.py): the fixes as written, with their accuracy;
/// the shapes with their style, a message that does not parse said with its time.
#[test]
fn foxglove_location_fixes_and_geojson() {
    let dir = common::temp_dir("track-foxglove");
    let (pb, js) = (dir.join("pb.mcap"), dir.join("js.mcap"));
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/foxglove_geo.py"
        ))
        .args([&pb, &js])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<(u64, f64, f64, f64, f64, f64)> = serde_json::from_slice(&out.stdout).unwrap();
    for rec in [&pb, &js] {
        let t = track(rec, "/loc");
        assert_eq!(t.len(), want.len(), "{}", rec.display());
        for (i, w) in want.iter().enumerate() {
            assert_eq!(
                (t.time_ns[i], t.lat[i], t.lon[i], t.alt[i]),
                (w.0, w.1, w.2, w.3)
            );
            assert_eq!(t.cov[i], [w.4 as f32, w.5 as f32, 0.0]);
            assert_eq!(t.accuracy(i), 3.0);
        }
        assert!(t.status.iter().all(|&s| s == i8::MIN));
    }
    let bag = Bag::open(&pb).unwrap();
    let shapes =
        bagscope_ops::spatial::geo::shapes::read_geojson(&bag, "/shapes", &AtomicBool::new(false))
            .unwrap();
    assert_eq!(shapes.len(), 2);
    let first = shapes[0].1.as_ref().unwrap();
    assert_eq!(first[0].name.as_deref(), Some("depot"));
    assert_eq!(first[0].style.color, [255, 0, 0, 255]);
    assert_eq!(first.len(), 2);
    let e = shapes[1].1.as_ref().unwrap_err();
    assert!(e.starts_with("not JSON"), "{e}");
}
