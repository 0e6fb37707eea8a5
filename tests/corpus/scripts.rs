//! Series scripts against the reference interpreter: Debian's `lua5.4` runs each snippet over
//! the series `bagscope csv` writes (tests/lua/pj_reference.lua, PlotJuggler's rules), and
//! bagscope's series equal it value for value: 26 snippets on a recording of each corpus, and
//! every Lua snippet of the real PlotJuggler layouts in `../shared/layouts` on a recording made
//! here with their topics. Snippets in other languages and Lichtblick's user scripts are listed
//! as not run; bad scripts are said with the script, the line and the time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

/// `text` as XML character data.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A snippet: name, global section, function, how many additional sources.
struct Snip {
    name: &'static str,
    global: &'static str,
    function: &'static str,
    extra: usize,
}

const fn snip(
    name: &'static str,
    global: &'static str,
    function: &'static str,
    extra: usize,
) -> Snip {
    Snip {
        name,
        global,
        function,
        extra,
    }
}

/// State, several sources, nil, several outputs, the return forms, string functions, Lua 5.4's
/// integers and floats, tables, errors.
const SNIPPETS: &[Snip] = &[
    snip("identity", "", "return value", 0),
    snip("kmh", "", "return value * 3.6", 0),
    snip("sum3", "", "return value + v1 + v2", 2),
    snip(
        "derivative",
        "prevX = 0\nprevY = 0\nis_first = true",
        "if (is_first) then\n  is_first = false\n  prevX = time\n  prevY = value\nend\ndx = time - prevX\ndy = value - prevY\nprevX = time\nprevY = value\nreturn dy/dx",
        0,
    ),
    snip(
        "integral",
        "sum = 0\nprevT = nil",
        "if prevT then sum = sum + value * (time - prevT) end\nprevT = time\nreturn sum",
        0,
    ),
    snip(
        "lowpass",
        "y = nil\nlocal a = 0.1\nalpha = a",
        "if y == nil then y = value end\ny = y + alpha * (value - y)\nreturn y",
        0,
    ),
    snip("nil_at_7", "n = 0", "n = n + 1\nif n == 7 then return nil end\nreturn value", 0),
    snip("named", "", "return {sum = value + v1, diff = value - v1}", 1),
    snip("pair", "", "return time + 0.5, value", 0),
    snip("points", "", "return {{time, value}, {time + 0.001, -value}}", 0),
    snip(
        "format",
        "",
        "local s = string.format('%.3f', value)\nreturn tonumber(s) + #s",
        0,
    ),
    snip(
        "digits",
        "",
        "local s = tostring(math.floor(math.abs(value) * 1000))\nreturn #s + tonumber(s:sub(1, 1)) + #string.rep('ab', 3)",
        0,
    ),
    snip(
        "integers",
        "",
        "local i = math.floor(value * 100)\nreturn i // 3 + i % 7",
        0,
    ),
    snip("float_division", "", "return value // 0.3 + value % 0.7", 0),
    snip("wraparound", "k = math.maxinteger - 5", "k = k + 1\nreturn k", 0),
    snip(
        "value_is_float",
        "",
        "if math.type(value) == 'float' then return 1 else return 0 end",
        0,
    ),
    snip(
        "quat_yaw",
        "",
        "return math.atan(2 * (value * v3 + v1 * v2), 1 - 2 * (v2 * v2 + v3 * v3))",
        3,
    ),
    snip(
        "ring",
        "vals = {}\nN = 5\nidx = 0",
        "idx = idx % N + 1\nvals[idx] = value\nlocal s, c = 0, 0\nfor i = 1, N do\n  if vals[i] ~= nil then s = s + vals[i]; c = c + 1 end\nend\nreturn s / c",
        0,
    ),
    snip("utf8", "", "return utf8.len('m s⁻¹') + value", 0),
    snip(
        "latch",
        "t0 = nil",
        "if value > v1 then\n  if t0 == nil then t0 = time end\n  return time - t0\nelse\n  t0 = nil\n  return 0\nend",
        1,
    ),
    snip("power", "", "return ((value - v1)^2 + (v1 - v2)^2)^(1/2)", 2),
    snip("undefined_global", "", "if v1 == Null then return 0 end\nreturn (value + v1) / 2", 1),
    snip(
        "median",
        "",
        "local t = {value, v1, v2}\ntable.sort(t)\ntable.insert(t, 1, 0)\nreturn t[3] + #table.concat({'a', 'b'}, ',')",
        2,
    ),
    snip(
        "math",
        "",
        "return math.max(math.abs(value), math.pi) + math.sin(value) * math.cos(v1) + math.log(math.abs(value) + 1) + math.sqrt(math.abs(v1))",
        1,
    ),
    snip(
        "error_at_5",
        "n = 0",
        "n = n + 1\nif n == 5 then error('bad sample') end\nreturn value",
        0,
    ),
    snip("larger", "", "if value > v1 then return value end\nreturn v1", 1),
];

/// A PlotJuggler layout holding `snips` with sources `sources` (PlotJuggler's names).
fn layout(snips: &[Snip], sources: &[&str]) -> String {
    let mut x = String::from("<root>\n <customMathEquations>\n");
    for s in snips {
        x.push_str(&format!(
            "  <snippet name=\"{}\">\n   <global>{}</global>\n   <function>{}</function>\n   <linked_source>{}</linked_source>\n",
            s.name,
            esc(s.global),
            esc(s.function),
            esc(sources[0])
        ));
        if s.extra > 0 {
            x.push_str("   <additional_sources>\n");
            for (i, src) in sources[1..=s.extra].iter().enumerate() {
                x.push_str(&format!("    <v{}>{}</v{}>\n", i + 1, esc(src), i + 1));
            }
            x.push_str("   </additional_sources>\n");
        }
        x.push_str("  </snippet>\n");
    }
    x.push_str(" </customMathEquations>\n</root>\n");
    x
}

/// What the reference interpreter printed for one snippet.
fn reference(dir: &Path, tag: &str, global: &str, function: &str, csvs: &[PathBuf]) -> Vec<String> {
    let (g, f) = (
        dir.join(format!("{tag}.global.lua")),
        dir.join(format!("{tag}.function.lua")),
    );
    std::fs::write(&g, global).unwrap();
    std::fs::write(&f, function).unwrap();
    let out = Command::new("lua5.4")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/lua/pj_reference.lua"
        ))
        .arg(&g)
        .arg(&f)
        .args(csvs)
        .output()
        .expect("Debian's lua5.4 (`.ci/run` installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A number as both sides print it, compared by value (NaN equal to NaN).
fn same(a: &str, b: &str) -> bool {
    let p = |s: &str| -> f64 {
        match s.trim() {
            "nan" | "-nan" | "NaN" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            s => s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}")),
        }
    };
    let (x, y) = (p(a), p(b));
    (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
}

/// The points of column `col` of a `bagscope csv` output: (time_ns, text).
fn column(csv: &str, col: &str) -> Vec<(String, String)> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let i = head
        .iter()
        .position(|h| h.trim_matches('"') == col)
        .unwrap_or_else(|| panic!("no column {col:?} in {head:?}"));
    lines
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let v = cells.get(i)?;
            (!v.is_empty()).then(|| (cells[0].to_string(), v.to_string()))
        })
        .collect()
}

/// Runs snippet `s` of `layout_file` through bagscope and through the reference over `rec`;
/// `paths` are the sources as bagscope paths (to write the CSVs the reference reads).
/// Returns how many points were compared.
fn check_snippet(
    rec: &Path,
    layout_file: &Path,
    name: &str,
    global: &str,
    function: &str,
    csvs: &[PathBuf],
    dir: &Path,
) -> usize {
    let want = reference(
        dir,
        &name.replace(['/', ' ', '\t'], "_"),
        global,
        function,
        csvs,
    );
    if let Some(e) = want.iter().find(|l| l.starts_with("E,")) {
        // The same error at the same sample, the column empty.
        let sample = e.split(',').nth(1).unwrap();
        let ran = common::bagscope(&[&"csv", &rec, &"--script", &layout_file, &"--", &name]);
        assert_eq!(ran.code, Some(1), "{name}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!("(sample {sample})"))
                && ran.stderr.contains(&format!("{name:?}")),
            "{name}: the reference stopped at sample {sample} ({e}); bagscope said: {}",
            ran.stderr
        );
        assert!(column(&ran.stdout, name).is_empty());
        return 1;
    }
    let named: BTreeMap<String, Vec<(String, String)>> = want
        .iter()
        .filter_map(|l| l.strip_prefix("N,"))
        .fold(BTreeMap::new(), |mut m, l| {
            let mut p = l.splitn(3, ',');
            let (k, t, v) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            m.entry(format!("{name}.{k}"))
                .or_default()
                .push((t.into(), v.into()));
            m
        });
    let mut series: Vec<(String, Vec<(String, String)>)> = named.into_iter().collect();
    let own: Vec<(String, String)> = want
        .iter()
        .filter_map(|l| l.strip_prefix("P,"))
        .map(|l| {
            let (t, v) = l.split_once(',').unwrap();
            (t.to_string(), v.to_string())
        })
        .collect();
    if !own.is_empty() || series.is_empty() {
        series.insert(0, (name.to_string(), own));
    }
    let mut n = 0;
    for (col, want) in series {
        let out = common::bagscope(&[&"csv", &rec, &"--script", &layout_file, &"--", &col]).ok();
        let got = column(&out, &col);
        assert_eq!(got.len(), want.len(), "{col}: points");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.0, w.0, "{col}: time of point {k}");
            assert!(
                same(&g.1, &w.1),
                "{col}: point {k} at {}: bagscope {} reference {}",
                g.0,
                g.1,
                w.1
            );
        }
        n += got.len();
    }
    n
}

/// The CSV of bagscope path `path` (one column), for the reference to read.
fn source_csv(rec: &Path, path: &str, out: &Path) -> PathBuf {
    let f = out.join(format!(
        "src-{}.csv",
        path.replace(['/', '.', ' ', '\t', '#', '[', ']', '"'], "_")
    ));
    if !f.exists() {
        let ran = common::bagscope(&[&"csv", &rec, &path, &"-o", &f]);
        assert_eq!(ran.code, Some(0), "{path}: {}", ran.stderr);
    }
    f
}

#[test]
fn snippets_equal_the_reference_lua_on_both_corpora() {
    let c1 = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let c2 = common::corpus2_dir().join("lichtblick/example.mcap");
    // (recording, PlotJuggler's names, bagscope's paths): the main series, then v1..v3.
    let cases: [(&Path, [&str; 4], [&str; 4]); 2] = [
        (
            &c1,
            [
                "/imu_data/orientation/w",
                "/imu_data/orientation/x",
                "/gravity_vector/vector/x",
                "/magnetic_vector/vector/y",
            ],
            [
                "/imu_data.orientation.w",
                "/imu_data.orientation.x",
                "/gravity_vector.vector.x",
                "/magnetic_vector.vector.y",
            ],
        ),
        (
            &c2,
            [
                "mouse/clientX",
                "mouse/clientY",
                "mouse/clientY",
                "mouse/clientY",
            ],
            [
                "\"mouse\".clientX",
                "\"mouse\".clientY",
                "\"mouse\".clientY",
                "\"mouse\".clientY",
            ],
        ),
    ];
    for (rec, pj, paths) in cases {
        let dir = common::temp_dir("scripts-reference");
        let lf = dir.join("snippets.xml");
        std::fs::write(&lf, layout(SNIPPETS, &pj)).unwrap();
        let csvs: Vec<PathBuf> = paths.iter().map(|p| source_csv(rec, p, &dir)).collect();
        let mut points = 0;
        for s in SNIPPETS {
            points += check_snippet(
                rec,
                &lf,
                s.name,
                s.global,
                s.function,
                &csvs[..=s.extra],
                &dir,
            );
        }
        assert!(
            points > 20 * 100,
            "{}: {points} points compared",
            rec.display()
        );
    }
}

/// Where a PlotJuggler series name lives in the recording made for it: (topic, field, index).
fn split_name(name: &str) -> (String, String, Option<usize>) {
    let segs: Vec<&str> = name.split('/').collect();
    let Some(k) = segs
        .iter()
        .rposition(|s| s.parse::<usize>().is_err())
        .filter(|&k| k > 0 && !(k == 1 && segs[0].is_empty()))
    else {
        return (name.to_string(), "data".into(), None);
    };
    let topic = segs[..k].join("/");
    let (mut field, mut index) = (
        segs[k].to_string(),
        segs.get(k + 1).and_then(|s| s.parse().ok()),
    );
    if let Some((f, i)) = field
        .rsplit_once('.')
        .and_then(|(f, i)| Some((f.to_string(), i.parse::<usize>().ok()?)))
    {
        (field, index) = (f, Some(i));
    } else if let Some((f, i)) = field
        .strip_suffix(']')
        .and_then(|s| s.rsplit_once('['))
        .and_then(|(f, i)| Some((f.to_string(), i.parse::<usize>().ok()?)))
    {
        (field, index) = (f, Some(i));
    }
    (topic, field, index)
}

/// A JSON MCAP recording with every name of `names` as a number (or an array element) of a
/// topic, each topic at its own rate over 20 s, smooth values.
fn recording_for(names: &[String], path: &Path) {
    use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
    let mut topics: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for n in names {
        let (t, f, i) = split_name(n);
        let e = topics.entry(t).or_default().entry(f).or_insert(0);
        *e = (*e).max(i.map_or(0, |i| i + 1));
    }
    let mut w = McapWriter::create(path, McapOptions::default()).unwrap();
    let mut msgs: Vec<(u64, u16, Vec<u8>)> = Vec::new();
    for (k, (topic, fields)) in topics.iter().enumerate() {
        let props: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .map(|(f, n)| {
                let ty = if *n == 0 {
                    serde_json::json!({"type": "number"})
                } else {
                    serde_json::json!({"type": "array", "items": {"type": "number"}})
                };
                (f.clone(), ty)
            })
            .collect();
        let schema = serde_json::json!({"type": "object", "properties": props}).to_string();
        let s = w
            .add_schema(&format!("T{k}"), "jsonschema", schema.as_bytes())
            .unwrap();
        let c = w.add_channel(s, topic, "json", &[]).unwrap();
        let rate = 5.0 + (k % 7) as f64 * 3.0;
        let count = (20.0 * rate) as u64;
        for i in 0..count {
            let t =
                1_700_000_000_000_000_000 + (i as f64 / rate * 1e9) as u64 + k as u64 * 1_234_567;
            let x = i as f64 / rate;
            let mut obj = serde_json::Map::new();
            for (j, (f, n)) in fields.iter().enumerate() {
                let v = |m: usize| {
                    let p = (k * 7 + j * 3 + m) as f64;
                    0.8 * (x * (0.3 + 0.1 * p)).sin() + 0.05 * p + 0.3 * (x * 2.1 + p).cos()
                };
                let val = if *n == 0 {
                    serde_json::json!(v(0))
                } else {
                    serde_json::json!((0..*n).map(v).collect::<Vec<f64>>())
                };
                obj.insert(f.clone(), val);
            }
            msgs.push((
                t,
                c,
                serde_json::Value::Object(obj).to_string().into_bytes(),
            ));
        }
    }
    msgs.sort_by_key(|m| m.0);
    for (seq, (t, c, d)) in msgs.into_iter().enumerate() {
        w.write(c, seq as u32, t, t, &d).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn every_lua_snippet_of_the_real_layouts_equals_the_reference() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/layouts/plotjuggler");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("../shared/layouts (TESTING.md)")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    let (mut snippets, mut not_run, mut points, mut compiled) = (0, 0, 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let dir = common::temp_dir("scripts-layouts");
        // PlotJuggler's library snippets have no sources: given three made up here.
        let text = text.replace(
            "<linkedSource></linkedSource>",
            "<linked_source>/library/w</linked_source><additional_sources><v1>/library/x</v1><v2>/library/y</v2><v3>/library/z</v3></additional_sources>",
        );
        let lf = dir.join("layout.xml");
        std::fs::write(&lf, &text).unwrap();
        let imported = bagscope_ops::script::plotjuggler::read(&text).unwrap();
        let names: Vec<String> = imported
            .scripts
            .iter()
            .flat_map(|s| std::iter::once(s.linked.clone()).chain(s.additional.iter().cloned()))
            .filter(|n| !imported.scripts.iter().any(|s| s.name == *n))
            .collect();
        let rec = dir.join("rec.mcap");
        recording_for(&names, &rec);
        // Every snippet in another language is listed as not run, by name.
        let all = common::bagscope(&[&"csv", &rec, &"--layout", &lf]);
        for n in &imported.not_run {
            assert!(
                all.stderr
                    .contains(&format!("{:?} is {}: kept, not run", n.name, n.language)),
                "{}: {:?} not said: {}",
                f.display(),
                n.name,
                all.stderr
            );
            not_run += 1;
        }
        for s in &imported.scripts {
            // The CSVs the reference reads: a topic's series, or the other snippet's (bagscope's,
            // itself checked against the reference).
            let csvs: Vec<PathBuf> = std::iter::once(s.linked.clone())
                .chain(s.additional.iter().cloned())
                .map(|n| {
                    if imported.scripts.iter().any(|x| x.name == n) {
                        let out = dir.join(format!("dep-{}.csv", snippets));
                        let ran = common::bagscope(&[
                            &"csv",
                            &rec,
                            &"--script",
                            &lf,
                            &"-o",
                            &out,
                            &"--",
                            &n,
                        ]);
                        assert!(ran.code.is_some_and(|c| c <= 1), "{n}: {}", ran.stderr);
                        return out;
                    }
                    let (t, fld, i) = split_name(&n);
                    let path = format!(
                        "\"{}\".\"{}\"{}",
                        t.replace('"', "\\\""),
                        fld,
                        i.map(|i| format!("[{i}]")).unwrap_or_default()
                    );
                    source_csv(&rec, &path, &dir)
                })
                .collect();
            // Numbers-only snippets run compiled (the rest in Lua): both held against lua5.4.
            if bagscope_ops::script::series::compiled(s, s.additional.len()) {
                compiled += 1;
            }
            let function = s.function.clone().unwrap_or_default();
            points += check_snippet(&rec, &lf, &s.name, &s.global, &function, &csvs, &dir);
            snippets += 1;
        }
    }
    // 138 Lua snippets, 6 JavaScript ones (../shared/layouts/README.md).
    assert_eq!((snippets, not_run), (138, 6), "snippets run, not run");
    assert!(points > 138 * 50, "{points} points compared");
    // 133 of 138 when this was written: what is left uses strings or tables.
    assert!(
        compiled >= 130,
        "{compiled} of {snippets} snippets in the compiled subset"
    );
}

#[test]
fn lichtblick_user_scripts_and_bad_scripts_are_said() {
    let rec = common::corpus_dir().join("plotjuggler/tilt_laser.bag");
    let lb = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../shared/layouts/lichtblick/Cardinal-Space-Mining__lance-2026__foxglove_layout.json",
    );
    let ran = common::bagscope(&[&"csv", &rec, &"--layout", &lb, &"/imu_data.orientation.w"]);
    for name in ["min/max ts", "total current", "perception latency"] {
        assert!(
            ran.stderr.contains(&format!("{name:?} is typescript")),
            "{name}: {}",
            ran.stderr
        );
    }
    let dir = common::temp_dir("scripts-bad");
    let bad = |body: &str| {
        let f = dir.join("bad.lua");
        std::fs::write(
            &f,
            format!("-- name: bad\n-- source: /imu_data.orientation.w\n{body}"),
        )
        .unwrap();
        common::bagscope(&[&"csv", &rec, &"--script", &f])
    };
    // A syntax error: before any work, with its line.
    let r = bad("function calc(t, v)\n  return v +\nend\n");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("script \"bad\", global section line 5"),
        "{}",
        r.stderr
    );
    // A runtime error at a message: its line, time and number.
    let r = bad("n = 0\nfunction calc(t, v)\n  n = n + 1\n  if n == 10 then return v.x end\n  return v\nend\n");
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("global section line 6, at 1326899528.")
            && r.stderr.contains("(sample 9)"),
        "{}",
        r.stderr
    );
    // A loop that does not end, a memory bomb, `io`: stopped and said.
    let r = bad("function calc(t, v)\n  while true do end\nend\n");
    assert!(
        r.stderr.contains("stopped after 100000000 instructions"),
        "{}",
        r.stderr
    );
    let r = bad("t = {}\nfunction calc(t_, v)\n  for i = 1, 1e9 do t[i] = string.rep('x', 64) .. i end\nend\n");
    assert!(r.stderr.contains("memory limit"), "{}", r.stderr);
    let r = bad("function calc(t, v)\n  return io.open('/etc/passwd')\nend\n");
    assert!(r.stderr.contains("global 'io'"), "{}", r.stderr);
    // A wrong return type.
    let r = bad("function calc(t, v)\n  return 'text'\nend\n");
    assert!(r.stderr.contains("returned a string"), "{}", r.stderr);
    // A source not in the recording: before any work.
    let f = dir.join("missing.lua");
    std::fs::write(&f, "-- source: /nope.x\nfunction calc(t, v) return v end\n").unwrap();
    let r = common::bagscope(&[&"csv", &rec, &"--script", &f]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("script \"missing\"") && r.stderr.contains("/nope"),
        "{}",
        r.stderr
    );
}
