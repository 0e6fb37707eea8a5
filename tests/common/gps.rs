//! GPS fixtures: a ROS 1 bag of `sensor_msgs/NavSatFix` written with bagscope's writer.

use std::path::Path;

use bagscope_reader::storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};

/// NavSatFix's full definition as a ROS 1 bag stores it (bagscope's shipped copy of
/// sensor_msgs': its MD5 is the stated `2d3a8cd4…`, as rosbags computes it).
pub fn navsatfix_definition() -> String {
    use bagscope_reader::definition::{msg::Dialect, sources::lookup};
    lookup("sensor_msgs/NavSatFix", Dialect::Ros1, &[])
        .expect("shipped")
        .0
}

/// One fix: receive time (ns), status, latitude, longitude, and the east and north variance
/// (m², 0: covariance type unknown).
pub type Fix = (u64, i8, f64, f64, f64);

/// A NavSatFix message as ROS 1 serializes it (altitude 120.5 m, stamped at its time).
pub fn navsatfix(seq: u32, &(t, status, lat, lon, var): &Fix) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(seq.to_le_bytes());
    b.extend(((t / 1_000_000_000) as u32).to_le_bytes());
    b.extend(((t % 1_000_000_000) as u32).to_le_bytes());
    b.extend(3u32.to_le_bytes());
    b.extend(b"gps");
    b.push(status as u8);
    b.extend(1u16.to_le_bytes());
    for v in [lat, lon, 120.5] {
        b.extend(v.to_le_bytes());
    }
    for i in 0..9 {
        let v = if i == 0 || i == 4 { var } else { 0.0 };
        b.extend(v.to_le_bytes());
    }
    b.push(if var > 0.0 { 2 } else { 0 });
    b
}

/// Writes `fixes` on `/gps/fix` into a bag at `path`.
pub fn write_fixes(path: &Path, fixes: &[Fix]) {
    let mut w = BagWriter::create(path, WriteOptions::default()).unwrap();
    let c = w.add_connection(ConnectionSpec {
        topic: "/gps/fix".into(),
        datatype: "sensor_msgs/NavSatFix".into(),
        md5sum: "2d3a8cd499b9b4a0249fb98fd05cfa48".into(),
        message_definition: navsatfix_definition(),
        callerid: None,
        latching: false,
    });
    for (i, f) in fixes.iter().enumerate() {
        w.write(c, f.0, &navsatfix(i as u32, f)).unwrap();
    }
    w.finish().unwrap();
}
