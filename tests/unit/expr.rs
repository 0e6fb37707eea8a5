//! Expressions end to end on a bag written by bagscope's writer: `csv` columns of paths with
//! slices, filters, virtual fields, modifiers and formulas against values computed here;
//! `echo --filter`; errors that point at the place.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_reader::{BagWriter, Compression, ConnectionSpec, WriteOptions};

const DEF: &str = "geometry_msgs/Quaternion q\nfloat64[] xs\nt/Item[] items\n\
================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
================\nMSG: t/Item\nint32 id\nstring label\n";

/// Message `i` of /a: a rotation of yaw i/10 about z, xs = [i, 2i, 3i], items with ids
/// 0..=i%3 labelled "even"/"odd".
fn message(i: u32) -> Vec<u8> {
    let mut m = Vec::new();
    let yaw = f64::from(i) / 10.0;
    for v in [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()] {
        m.extend_from_slice(&f64::to_le_bytes(v));
    }
    m.extend_from_slice(&3u32.to_le_bytes());
    for k in 1..=3 {
        m.extend_from_slice(&(f64::from(i) * f64::from(k)).to_le_bytes());
    }
    let n = i % 3 + 1;
    m.extend_from_slice(&n.to_le_bytes());
    for id in 0..n {
        m.extend_from_slice(&(id as i32).to_le_bytes());
        let label = if id % 2 == 0 { "even" } else { "odd" };
        m.extend_from_slice(&(label.len() as u32).to_le_bytes());
        m.extend_from_slice(label.as_bytes());
    }
    m
}

const T0: u64 = 1_700_000_000_000_000_000;

fn write(path: &std::path::Path) {
    let mut w = BagWriter::create(
        path,
        WriteOptions {
            compression: Compression::Lz4,
            chunk_size: 512,
        },
    )
    .unwrap();
    let a = w.add_connection(ConnectionSpec {
        topic: "/a".into(),
        datatype: "t/A".into(),
        md5sum: "*".into(),
        message_definition: DEF.into(),
        callerid: None,
        latching: false,
    });
    let b = w.add_connection(common::spec("/b", "std_msgs/Float64"));
    for i in 0..20u32 {
        // /a every 100 ms, /b every 250 ms (data = 10 i).
        w.write(a, T0 + u64::from(i) * 100_000_000, &message(i))
            .unwrap();
        if i.is_multiple_of(2) && i < 16 {
            w.write(
                b,
                T0 + u64::from(i) * 125_000_000,
                &(f64::from(i) * 5.0).to_le_bytes(),
            )
            .unwrap();
        }
    }
    w.finish().unwrap();
}

/// The CSV's rows: time and cells.
fn rows(out: &str) -> Vec<(u64, Vec<String>)> {
    out.lines()
        .skip(1)
        .map(|l| {
            let mut c = l.split(',');
            let t = c.next().unwrap().parse().unwrap();
            (t, c.map(str::to_string).collect())
        })
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

#[test]
fn csv_columns_of_expressions_are_what_the_messages_say() {
    let d = common::temp_dir("expr-csv");
    let p = d.join("e.bag");
    write(&p);
    // A slice: every element a row at its message's time.
    let out = common::bagscope(&[&"csv", &p, &"/a.xs[1:2]", &"--end", &"+0.35"]).ok();
    let r = rows(&out);
    let want: Vec<(u64, f64)> = (0..4u32)
        .flat_map(|i| [2.0, 3.0].map(|k| (T0 + u64::from(i) * 100_000_000, f64::from(i) * k)))
        .collect();
    let got: Vec<(u64, f64)> = r.iter().map(|(t, c)| (*t, num(&c[0]))).collect();
    assert_eq!(got, want);
    // A filter on elements, a virtual field, a modifier chain, a named formula.
    let out = common::bagscope(&[
        &"csv",
        &p,
        &"/a.items[:]{label=='odd'}.id",
        &"/a.q.yaw_deg",
        &"/a.xs[0].@derivative.@scale(0.5)",
        &"diff=/a.xs[-1] - /b.data",
    ])
    .ok();
    assert!(out.starts_with(
        "time_ns,/a.items[:]{label=='odd'}.id,/a.q.yaw_deg,/a.xs[0].@derivative.@scale(0.5),diff\n"
    ));
    for (t, c) in rows(&out) {
        let i = ((t - T0) / 100_000_000) as u32;
        let on_a = (t - T0).is_multiple_of(100_000_000);
        if on_a {
            // Items 0..=i%3: "odd" is id 1, there when i%3 >= 1.
            assert_eq!(c[0], if i % 3 >= 1 { "1" } else { "" }, "{t}");
            assert!(
                (num(&c[1]) - (f64::from(i) / 10.0).to_degrees()).abs() < 1e-9,
                "{c:?}"
            );
            if i > 0 {
                // xs[0] = i every 0.1 s: derivative 10, scaled 5.
                assert!((num(&c[2]) - 5.0).abs() < 1e-9, "{c:?}");
            }
        }
        // diff: xs[2] = 3i of /a held, minus /b's last data (5 j at j * 125 ms), on the union.
        let a_at = (t - T0) / 100_000_000;
        let b_at = (t - T0) / 250_000_000 * 2;
        let want = if b_at < 16 {
            3.0 * a_at as f64 - 5.0 * b_at as f64
        } else {
            3.0 * a_at as f64 - 70.0
        };
        assert!((num(&c[3]) - want).abs() < 1e-9, "{t}: {c:?} want {want}");
    }
    // Variables and a named series.
    let out = common::bagscope(&[
        &"csv",
        &p,
        &"/a.xs[$k]",
        &"$x * 2",
        &"--var",
        &"k=-1",
        &"--let",
        &"x=/b.data",
        &"--end",
        &"+0.2",
    ])
    .ok();
    assert_eq!(
        out,
        format!(
            "time_ns,/a.xs[$k],$x * 2\n{T0},0.0,0.0\n{},3.0,\n",
            T0 + 100_000_000
        )
    );
}

#[test]
fn echo_filter_and_errors_that_point() {
    let d = common::temp_dir("expr-echo");
    let p = d.join("e.bag");
    write(&p);
    let out = common::bagscope(&[&"echo", &p, &"--filter", &"/a{xs[0]>=17}", &"--json"]).ok();
    assert_eq!(out.lines().count(), 3, "{out}");
    let out = common::bagscope(&[&"echo", &p, &"--filter", &"/a.items[:]{id==2}"]).ok();
    assert_eq!(
        out.matches("# /a @").count(),
        6,
        "i % 3 == 2: 2, 5, 8, 11, 14, 17"
    );
    let r = common::bagscope(&[&"csv", &p, &"/a.items[:]{labl=='odd'}.id"]);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr
            .contains("t/Item has no field \"labl\" (fields: id, label) (column 13)")
            && r.stderr
                .contains("\n  /a.items[:]{labl=='odd'}.id\n              ^"),
        "{}",
        r.stderr
    );
    let r = common::bagscope(&[&"csv", &p, &"/a.xs[0].@movavg(2parsecs)"]);
    assert!(r.stderr.contains("unknown unit `parsecs`"), "{}", r.stderr);
}
