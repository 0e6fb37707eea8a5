//! `Recording.track`: a GPS topic's fixes as numpy columns (a GeoDataFrame is one
//! `geopandas.points_from_xy(longitude, latitude)` away), read with the GIL released.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bagscope_ops::spatial::geo::{read_track, TrackSource};
use bagscope_reader::Bag;

use super::errors::ops_to_py;

/// The fixes of `source` in `[start_ns, end_ns)` as a dict of arrays, with what was left out.
pub(super) fn track<'py>(
    py: Python<'py>,
    bag: &Bag,
    source: TrackSource,
    range: (Option<u64>, Option<u64>),
) -> PyResult<Bound<'py, PyDict>> {
    let t = py
        .detach(|| {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            read_track(bag, &source, range, bag.options().threads(), &cancel)
        })
        .map_err(ops_to_py)?;
    let d = PyDict::new(py);
    let times: Vec<i64> = t
        .time_ns
        .iter()
        .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
        .collect();
    let accuracy: Vec<f64> = (0..t.len()).map(|i| t.accuracy(i)).collect();
    d.set_item("time_ns", PyArray1::from_vec(py, times))?;
    d.set_item("latitude", PyArray1::from_slice(py, &t.lat))?;
    d.set_item("longitude", PyArray1::from_slice(py, &t.lon))?;
    d.set_item("altitude", PyArray1::from_slice(py, &t.alt))?;
    d.set_item("accuracy_m", PyArray1::from_vec(py, accuracy))?;
    d.set_item("status", PyArray1::from_slice(py, &t.status))?;
    let left_out = PyDict::new(py);
    left_out.set_item("no_fix", t.no_fix)?;
    left_out.set_item("not_a_position", t.bad)?;
    left_out.set_item("out_of_order", t.reordered)?;
    left_out.set_item(
        "first",
        t.skipped
            .iter()
            .map(|s| (s.time_ns, s.index, s.why.clone()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item("left_out", left_out)?;
    Ok(d)
}
