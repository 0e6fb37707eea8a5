//! `bagscope bench BAG --op script:VALUES.csv`: a series script's speed over every sample of a
//! recording's numeric topics (PointStamped `.point.x`, Float64 `.data`, the IMU's
//! `.linear_acceleration.x`: 5 M samples in many_small_lz4.bag), held in memory, against the same computation as a bagscope
//! expression modifier; the samples are written to VALUES.csv for Debian's `lua5.4` to run the
//! same snippet over (scripts/bench/scripts_lua.py).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde_json::json;

use bagscope_ops::script::series::{compiled, run, run_in_lua, Dialect, SeriesScript};
use bagscope_ops::script::Limits;
use bagscope_reader::expr::{apply, Expr, Modifier};
use bagscope_reader::series::{expr_series, Env};
use bagscope_reader::Bag;

/// PlotJuggler's backward difference (its library's `backward_difference_derivative`).
pub const GLOBAL: &str = "prevX = 0\nprevY = 0\nis_first = true";
/// Its function.
pub const FUNCTION: &str = "if (is_first) then\n  is_first = false\n  prevX = time\n  prevY = value\nend\ndx = time - prevX\ndy = value - prevY\nprevX = time\nprevY = value\nreturn dy/dx";

/// Runs the benchmark; `csv` receives the samples.
pub fn script(path: &Path, csv: &Path, runs: usize) -> crate::cli::Result<serde_json::Value> {
    let bag = Bag::open(path)?;
    let s = bag.summary();
    let mut exprs = Vec::new();
    for t in &s.topics {
        let p = match t.datatype.as_str() {
            "geometry_msgs/PointStamped" | "geometry_msgs/msg/PointStamped" => "point.x",
            "sensor_msgs/Imu" | "sensor_msgs/msg/Imu" => "linear_acceleration.x",
            "std_msgs/Float64" | "std_msgs/msg/Float64" => "data",
            _ => continue,
        };
        exprs.push(Expr::parse(&format!("{}.{p}", t.name))?);
    }
    let cancel = AtomicBool::new(false);
    let series = expr_series(&bag, &exprs, &Env::default(), (None, None), 2, &cancel)?;
    let mut samples: Vec<(u64, f64)> = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .filter_map(|p| Some((p.time_ns, p.value.as_f64()?)))
        })
        .collect();
    samples.sort_by_key(|p| p.0);
    let mut f = std::io::BufWriter::new(std::fs::File::create(csv)?);
    writeln!(f, "time_ns,value")?;
    for (t, v) in &samples {
        writeln!(f, "{t},{v:?}")?;
    }
    f.flush()?;
    let script = SeriesScript {
        name: "derivative".into(),
        global: GLOBAL.into(),
        function: Some(FUNCTION.into()),
        linked: "-".into(),
        additional: Vec::new(),
        dialect: Dialect::PlotJuggler,
    };
    let (script_s, made) = super::bench::best(runs, || {
        run(&script, &samples, &[], Limits::default(), &cancel)
            .map_err(|e| crate::cli::Error::Invalid(e.to_string()))
    })?;
    // The same snippet in Lua (mlua), as it ran before numeric snippets were compiled.
    let (lua_s, in_lua) = super::bench::best(runs, || {
        run_in_lua(&script, &samples, &[], Limits::default(), &cancel)
            .map_err(|e| crate::cli::Error::Invalid(e.to_string()))
    })?;
    let same = bits(&made) == bits(&in_lua);
    // The same snippet with the budget's count hook kept (a comment naming a loop keeps it:
    // the code is the same), as every script ran before loop-free ones went without it.
    let hooked = SeriesScript {
        global: format!("{GLOBAL}\n-- for comparison: the hook kept"),
        ..script.clone()
    };
    let (hooked_s, _) = super::bench::best(runs, || {
        run_in_lua(&hooked, &samples, &[], Limits::default(), &cancel)
            .map_err(|e| crate::cli::Error::Invalid(e.to_string()))
    })?;
    let m = Modifier {
        name: "derivative".into(),
        args: Vec::new(),
        at: 0,
    };
    let (expr_s, points) = super::bench::best(runs, || Ok(apply(&m, samples.clone())))?;
    let out = made.series.first().map_or(0, |s| s.1.len());
    Ok(json!({
        "samples": samples.len(),
        "script_seconds": script_s,
        "script_compiled": compiled(&script, 0),
        "script_lua_seconds": lua_s,
        "compiled_equals_lua": same,
        "script_hooked_seconds": hooked_s,
        "script_points": out,
        "expression_seconds": expr_s,
        "expression_points": points.len(),
    }))
}

/// A run's series as bits (NaN equal to NaN).
fn bits(m: &bagscope_ops::script::series::Made) -> Vec<Vec<(u64, u64)>> {
    m.series
        .iter()
        .map(|(_, s)| s.iter().map(|&(t, v)| (t, v.to_bits())).collect())
        .collect()
}
