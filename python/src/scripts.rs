//! Scripts from Python: `Recording.series` (expressions), `Recording.derive` (a Python
//! function over a main series and sources aligned on it, per sample or vectorised over numpy
//! columns), `Recording.lua` (a Lua series script, inline or a file, PlotJuggler's snippets
//! included) and `Recording.with_scripts` (the recording with message scripts' virtual topics).

use std::path::PathBuf;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use bagscope_ops::script::{self, Limits, SeriesScript};
use bagscope_reader::expr::{Expr, Lit};
use bagscope_reader::series::{Env, Point};
use bagscope_reader::Bag;

use super::errors::{ops_to_py, to_py};
use super::Error;

/// The expressions' environment from Python's arguments.
pub(super) fn env(
    vars: Option<std::collections::HashMap<String, Bound<'_, PyAny>>>,
    named: Option<std::collections::HashMap<String, String>>,
    interp: &str,
) -> PyResult<Env> {
    let mut env = Env {
        interp: interp.parse().map_err(PyValueError::new_err)?,
        ..Env::default()
    };
    for (k, v) in vars.unwrap_or_default() {
        let lit = if let Ok(b) = v.extract::<bool>() {
            Lit::Bool(b)
        } else if let Ok(i) = v.extract::<i64>() {
            Lit::Int(i)
        } else if let Ok(f) = v.extract::<f64>() {
            Lit::Float(f)
        } else if let Ok(s) = v.extract::<String>() {
            Lit::Str(s)
        } else {
            return Err(PyValueError::new_err(format!(
                "vars[{k:?}]: a number, a bool or a str"
            )));
        };
        env.vars.insert(k, lit);
    }
    for (k, text) in named.unwrap_or_default() {
        env.named
            .push((k, Expr::parse(&text).map_err(|e| to_py(e.into()))?));
    }
    Ok(env)
}

/// The numbers of expressions `sources` within `range`, read in one pass with the GIL released.
fn read(
    py: Python<'_>,
    bag: &Bag,
    sources: &[String],
    range: (Option<u64>, Option<u64>),
) -> PyResult<Vec<Vec<(u64, f64)>>> {
    let exprs: Vec<Expr> = sources
        .iter()
        .map(|s| Expr::parse(s).map_err(|e| to_py(e.into())))
        .collect::<PyResult<_>>()?;
    let series = py
        .detach(|| {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            bagscope_reader::series::expr_series(
                bag,
                &exprs,
                &Env::default(),
                range,
                bag.options().threads(),
                &cancel,
            )
        })
        .map_err(to_py)?;
    Ok(series
        .into_iter()
        .map(|s| {
            s.points
                .iter()
                .filter_map(|p| Some((p.time_ns, p.value.as_f64()?)))
                .collect()
        })
        .collect())
}

/// `{"time_ns": int64 array, "value": float64 array}`.
fn columns<'py>(py: Python<'py>, pts: &[(u64, f64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let t: Vec<i64> = pts
        .iter()
        .map(|p| i64::try_from(p.0).unwrap_or(i64::MAX))
        .collect();
    let v: Vec<f64> = pts.iter().map(|p| p.1).collect();
    d.set_item("time_ns", PyArray1::from_vec(py, t))?;
    d.set_item("value", PyArray1::from_vec(py, v))?;
    Ok(d)
}

/// `Recording.derive`: `func` over the main series `sources[0]` and the others aligned on it
/// (nearest sample, NaN where empty). Per sample: `func(time_s, value, v1, …)` returns a number,
/// a `(time_s, value)` pair, a list of pairs, or None (no point). Vectorised: `func(times_s,
/// values, v1s, …)` with numpy arrays returns an array as long (NaN: no point) or a
/// `(times_s, values)` pair of arrays.
pub(super) fn derive<'py>(
    py: Python<'py>,
    bag: &Bag,
    func: &Bound<'py, PyAny>,
    sources: &[String],
    range: (Option<u64>, Option<u64>),
    vectorized: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if sources.is_empty() {
        return Err(PyValueError::new_err(
            "derive: name at least the main series",
        ));
    }
    let read = read(py, bag, sources, range)?;
    let (main, extra) = read.split_first().unwrap_or((&read[0], &[]));
    let times: Vec<u64> = main.iter().map(|p| p.0).collect();
    let aligned: Vec<Vec<f64>> = extra
        .iter()
        .map(|s| script::series::align_nearest(&times, s))
        .collect();
    let secs = |t: u64| t as f64 / 1e9;
    let ns = |t: f64| -> PyResult<u64> {
        if (0.0..1.8e10).contains(&t) {
            Ok((t * 1e9).round() as u64)
        } else {
            Err(PyValueError::new_err(format!("derive: a time of {t} s")))
        }
    };
    let mut out: Vec<(u64, f64)> = Vec::with_capacity(main.len());
    if vectorized {
        let mut args: Vec<Bound<'py, PyAny>> = vec![
            PyArray1::from_vec(py, times.iter().map(|&t| secs(t)).collect()).into_any(),
            PyArray1::from_vec(py, main.iter().map(|p| p.1).collect()).into_any(),
        ];
        args.extend(
            aligned
                .iter()
                .map(|a| PyArray1::from_slice(py, a).into_any()),
        );
        let r = func.call1(PyTuple::new(py, args)?)?;
        if let Ok((t, v)) = r.extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>() {
            let t: Vec<f64> = t.extract()?;
            let v: Vec<f64> = v.extract()?;
            if t.len() != v.len() {
                return Err(PyValueError::new_err(
                    "derive: times and values of different lengths",
                ));
            }
            for (t, v) in t.into_iter().zip(v) {
                out.push((ns(t)?, v));
            }
        } else {
            let v: Vec<f64> = match r.cast::<PyArray1<f64>>() {
                Ok(a) => a.to_vec()?,
                Err(_) => r.extract()?,
            };
            if v.len() != times.len() {
                return Err(PyValueError::new_err(format!(
                    "derive: {} values for {} samples",
                    v.len(),
                    times.len()
                )));
            }
            out.extend(
                times
                    .iter()
                    .zip(v)
                    .filter(|(_, v)| !v.is_nan())
                    .map(|(&t, v)| (t, v)),
            );
        }
    } else {
        for (k, &(t, v)) in main.iter().enumerate() {
            let mut args: Vec<f64> = Vec::with_capacity(2 + aligned.len());
            args.push(secs(t));
            args.push(v);
            args.extend(aligned.iter().map(|a| a[k]));
            let r = func.call1(PyTuple::new(py, args)?)?;
            if r.is_none() {
                continue;
            }
            if let Ok(x) = r.extract::<f64>() {
                out.push((t, x));
            } else if let Ok((a, b)) = r.extract::<(f64, f64)>() {
                out.push((ns(a)?, b));
            } else if let Ok(pairs) = r.extract::<Vec<(f64, f64)>>() {
                for (a, b) in pairs {
                    out.push((ns(a)?, b));
                }
            } else {
                return Err(PyValueError::new_err(format!(
                    "derive: the function returned {} at sample {k} ({} s): a number, (time, value), a list of them, or None",
                    r.get_type().name()?,
                    secs(t)
                )));
            }
        }
        out.sort_by_key(|p| p.0);
    }
    columns(py, &out)
}

/// `Recording.lua`: a Lua series script (an inline `NAME(SOURCES) = BODY`, a `.lua` script
/// file, or a PlotJuggler layout or snippet file with `name` choosing its snippet): its series
/// by name, each `{"time_ns", "value"}`.
pub(super) fn lua<'py>(
    py: Python<'py>,
    bag: &Bag,
    script_or_path: &str,
    name: Option<&str>,
    range: (Option<u64>, Option<u64>),
) -> PyResult<Bound<'py, PyDict>> {
    let path = PathBuf::from(script_or_path);
    let scripts: Vec<SeriesScript> = if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::new_err(format!("{}: {e}", path.display())))?;
        if text.trim_start().starts_with('<') {
            script::plotjuggler::read(&text)
                .map_err(Error::new_err)?
                .scripts
        } else {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("script");
            vec![script::file::read_file(&text, stem).map_err(Error::new_err)?]
        }
    } else {
        vec![script::file::read_inline(script_or_path).map_err(Error::new_err)?]
    };
    let wanted: Vec<&str> = match name {
        Some(n) => vec![n],
        None => scripts.iter().map(|s| s.name.as_str()).collect(),
    };
    let scripts = script::eval::needed(&scripts, &wanted);
    if scripts.is_empty() {
        return Err(PyValueError::new_err(format!(
            "no script named {:?}",
            name.unwrap_or("")
        )));
    }
    let env = Env::default();
    if let Some(e) = script::check(bag, &scripts, &env).into_iter().next() {
        return Err(Error::new_err(e.to_string()));
    }
    let runs = py
        .detach(|| {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            script::evaluate(bag, &scripts, &env, range, Limits::default(), &cancel)
        })
        .map_err(ops_to_py)?;
    let d = PyDict::new(py);
    for r in runs {
        let r = r.map_err(|e| Error::new_err(e.to_string()))?;
        for s in r.series {
            let pts: Vec<(u64, f64)> = s
                .points
                .iter()
                .map(|p: &Point| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
                .collect();
            d.set_item(&s.name, columns(py, &pts)?)?;
        }
    }
    Ok(d)
}

/// The message scripts of `files` (docs/scripts.md), each read and parsed.
pub(super) fn message_scripts(files: &[PathBuf]) -> PyResult<Vec<script::message::MessageScript>> {
    let mut scripts = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| Error::new_err(format!("{}: {e}", f.display())))?;
        scripts.push(
            script::message::read_file(&text)
                .map_err(|m| Error::new_err(format!("{}: {m}", f.display())))?,
        );
    }
    Ok(scripts)
}

/// `Recording.with_scripts`: `bag`'s recording opened again with the virtual topics of the
/// message script files `files` (made once into bagscope's cache).
pub(super) fn with_scripts(py: Python<'_>, bag: &Bag, files: &[PathBuf]) -> PyResult<Bag> {
    let scripts = message_scripts(files)?;
    let path = bag.quick_summary().path.clone();
    let opts = bag.options().clone();
    py.detach(|| {
        let cache = bagscope_ops::demo::cache_dir().join("virtual");
        let cancel = std::sync::atomic::AtomicBool::new(false);
        bagscope_ops::open::open(&path, &scripts, &opts, &cache, &cancel)
    })
    .map(|(b, _)| b)
    .map_err(|e| Error::new_err(e.to_string()))
}

/// A Python object as JSON-shaped data: dicts, lists and tuples, numpy arrays (`tolist()`),
/// bytes (numbers), `Msg` objects (`to_dict()`), numbers, strings, None.
fn to_json(v: &Bound<'_, PyAny>, depth: usize) -> PyResult<serde_json::Value> {
    use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
    use serde_json::Value as J;
    if depth > 64 {
        return Err(PyValueError::new_err("nested more than 64 deep"));
    }
    if v.is_none() {
        return Ok(J::Null);
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(J::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(J::from(v.extract::<i64>()?));
    }
    if v.is_instance_of::<PyFloat>() {
        let x: f64 = v.extract()?;
        return Ok(serde_json::Number::from_f64(x).map_or(J::Null, J::Number));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(J::String(v.extract()?));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(J::Array(b.as_bytes().iter().map(|&x| J::from(x)).collect()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut m = serde_json::Map::new();
        for (k, x) in d.iter() {
            m.insert(k.extract::<String>()?, to_json(&x, depth + 1)?);
        }
        return Ok(J::Object(m));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for x in v.try_iter()? {
            out.push(to_json(&x?, depth + 1)?);
        }
        return Ok(J::Array(out));
    }
    for method in ["to_dict", "tolist", "item"] {
        if v.hasattr(method)? {
            return to_json(&v.call_method0(method)?, depth + 1);
        }
    }
    Err(PyValueError::new_err(format!(
        "a {} where a message's value goes",
        v.get_type().name()?
    )))
}

/// `Recording.with_virtual`: `bag`'s recording opened again with a virtual topic `topic` of
/// `output_type` made by `func(input_topic, msg, time_s)` over the messages of `inputs`.
pub(super) fn with_virtual(
    py: Python<'_>,
    bag: &Bag,
    (topic, output_type, inputs): (&str, &str, &[String]),
    func: &Bound<'_, PyAny>,
) -> PyResult<Bag> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let mut err: Option<PyErr> = None;
    let made = script::message::make_virtual(
        bag,
        topic,
        output_type,
        inputs,
        &cancel,
        &mut |t, def, node, time_ns| {
            let run = || -> PyResult<Option<serde_json::Value>> {
                let msg = super::values::to_python(py, def, node)?;
                let r = func.call1((t, msg, time_ns as f64 / 1e9))?;
                if r.is_none() {
                    return Ok(None);
                }
                to_json(&r, 0).map(Some)
            };
            run().map_err(|e| {
                let m = e.to_string();
                err.get_or_insert(e);
                m
            })
        },
    )
    .map_err(ops_to_py)?;
    let v = match made {
        Ok(v) => v,
        Err(m) => {
            return Err(match err {
                Some(e) => {
                    let wrapped = Error::new_err(m);
                    wrapped.set_cause(py, Some(e));
                    wrapped
                }
                None => Error::new_err(m),
            })
        }
    };
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = bagscope_ops::demo::cache_dir().join("virtual");
    std::fs::create_dir_all(&dir).map_err(|e| Error::new_err(e.to_string()))?;
    let overlay = dir.join(format!("python-{}-{n}.mcap", std::process::id()));
    script::message::write_virtuals(&overlay, &[v]).map_err(ops_to_py)?;
    let path = bag.quick_summary().path.clone();
    let opts = bag.options().clone();
    py.detach(|| script::message::open_beside(&path, &overlay, &opts))
        .map_err(to_py)
}
