//! The standard `sensor_msgs/NavSatFix` read straight from its bytes: ROS 1's (its MD5
//! `2d3a8cd4…`) and ROS 2's CDR (little-endian), whose layouts are fixed but for the frame id.
//! A track of a million fixes read this way is a pass over the messages, where the general
//! path reads eight field paths a message. Each message is checked whole (its length is what
//! the layout gives); one that is not sends the track back to the general path.

use std::sync::atomic::{AtomicBool, Ordering};

use bagscope_reader::{Bag, Filter};

/// ROS 1's MD5 of `sensor_msgs/NavSatFix`.
const MD5: &str = "2d3a8cd499b9b4a0249fb98fd05cfa48";

/// One message's fields: time, status, latitude, longitude, altitude, east and north
/// variance and their covariance, covariance type.
pub(super) type Row = (u64, i8, f64, f64, f64, [f64; 3], u8);

fn f64_at(b: &[u8], at: usize) -> Option<f64> {
    let s: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
    Some(f64::from_le_bytes(s))
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    let s: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(s) as usize)
}

/// The fields after the status: latitude at `a`, then longitude, altitude, the covariance
/// and its type.
fn fields(b: &[u8], t: u64, status: i8, a: usize) -> Option<Row> {
    let cov = |k: usize| f64_at(b, a + 24 + 8 * k);
    Some((
        t,
        status,
        f64_at(b, a)?,
        f64_at(b, a + 8)?,
        f64_at(b, a + 16)?,
        [cov(0)?, cov(4)?, cov(1)?],
        *b.get(a + 96)?,
    ))
}

/// A ROS 1 NavSatFix: header (seq, stamp, frame id), status, service, the fields; exactly.
fn ros1(b: &[u8], t: u64) -> Option<Row> {
    let p = 16 + u32_at(b, 12)?;
    (b.len() == p + 100)
        .then_some(())
        .and_then(|()| fields(b, t, *b.get(p)? as i8, p + 3))
}

/// A ROS 2 NavSatFix in little-endian CDR: the encapsulation header, then (aligned from the
/// body's start) stamp, frame id with its NUL, status, service at 2, the fields at 8.
fn cdr(b: &[u8], t: u64) -> Option<Row> {
    if b.get(..2)? != [0, 1] {
        return None;
    }
    let body = b.get(4..)?;
    let q = 12 + u32_at(body, 8)?;
    let status = *body.get(q)? as i8;
    let service = (q + 1).next_multiple_of(2);
    let a = (service + 2).next_multiple_of(8);
    // What follows the covariance type is padding at most.
    (body.len() >= a + 97 && body.len() < a + 97 + 8)
        .then_some(())
        .and_then(|()| fields(body, t, status, a))
}

/// The rows of `topic` read from their bytes, if every connection of it is the standard
/// NavSatFix and every message has its layout; `None` sends the caller to the general path.
pub(super) fn navsatfix_rows(
    bag: &Bag,
    topic: &str,
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    cancel: &AtomicBool,
) -> Option<Vec<Row>> {
    let s = bag.summary();
    let t = s.topic(topic)?;
    let mut is_cdr = None;
    for &c in &t.connections {
        let conn = s.connections.get(c)?;
        let this = match conn.encoding.as_str() {
            "ros1" if conn.md5sum == MD5 => false,
            "cdr" if conn.datatype == "sensor_msgs/msg/NavSatFix" => true,
            _ => return None,
        };
        if is_cdr.is_some_and(|x| x != this) {
            return None;
        }
        is_cdr = Some(this);
    }
    let parse = if is_cdr? { cdr } else { ros1 };
    let mut out = Vec::with_capacity(t.message_count as usize);
    let msgs = bag
        .messages(&Filter {
            connections: Some(t.connections.clone()),
            start_ns,
            end_ns,
        })
        .ok()?;
    for m in msgs {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let m = m.ok()?;
        out.push(parse(&m.data, m.time_ns)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        // ROS 1: seq, stamp, frame id "gps", status 2, service 1, fields, type 2.
        let mut b = vec![0u8; 12];
        b.extend(3u32.to_le_bytes());
        b.extend(b"gps");
        b.push(2);
        b.extend(1u16.to_le_bytes());
        for v in [48.5, 11.25, 500.0] {
            b.extend(f64::to_le_bytes(v));
        }
        for k in 0..9 {
            b.extend(f64::to_le_bytes(k as f64));
        }
        b.push(2);
        assert_eq!(
            ros1(&b, 7),
            Some((7, 2, 48.5, 11.25, 500.0, [0.0, 4.0, 1.0], 2))
        );
        assert_eq!(ros1(&b[..b.len() - 1], 7), None);
        // ROS 2 CDR: "gps\0" ends at 16, status at 16, service at 18, the fields at 24.
        let mut c = vec![0, 1, 0, 0];
        c.extend([0u8; 8]);
        c.extend(4u32.to_le_bytes());
        c.extend(b"gps\0");
        c.push(0xff);
        c.push(0);
        c.extend(1u16.to_le_bytes());
        c.extend([0u8; 4]);
        for v in [48.5, 11.25, 500.0] {
            c.extend(f64::to_le_bytes(v));
        }
        for k in 0..9 {
            c.extend(f64::to_le_bytes(k as f64));
        }
        c.push(1);
        assert_eq!(
            cdr(&c, 9),
            Some((9, -1, 48.5, 11.25, 500.0, [0.0, 4.0, 1.0], 1))
        );
        c[1] = 0;
        assert_eq!(cdr(&c, 9), None, "big-endian CDR: the general path");
    }
}
