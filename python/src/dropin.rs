//! What the rosbags drop-in (`bagscope.rosbags`) asks of the library beyond the package's own
//! API: a recording's kind told from its first bytes, each connection's storage file, stated
//! and computed type hash and QoS profiles, messages made as instances of classes, and decode
//! errors that say which part of a message is at fault.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{file_error, Recording};

/// The kind of recording at a local path, told by content without opening it: `"ros1"`,
/// `"mcap"`, `"rosbag2"`, or None for a file that is none (an empty one included).
#[pyfunction]
fn sniff(path: PathBuf) -> PyResult<Option<&'static str>> {
    bagscope_reader::storage::sniff(&path).map_err(|e| {
        file_error(
            e.kind() == std::io::ErrorKind::NotFound,
            format!("{}: {e}", path.display()),
        )
    })
}

/// Makes messages of `rec` instances of classes: `make(name, field_names, constants)` returns
/// the class of a type (called once a type per iteration), which is called with the fields'
/// values in order; `uint8` arrays become numpy arrays. None goes back to `Msg`.
#[pyfunction]
fn set_classes(mut rec: PyRefMut<'_, Recording>, make: Option<Py<PyAny>>) {
    rec.classes = make;
}

/// What rosbags says of each connection beyond the package's `connections`: its storage
/// file (`file`), the type hash the recording states (`type_hash`, empty if none) and the one
/// computed from its definition (`computed_hash`, None where there is none: not ROS 2, no
/// definition), the offered QoS profiles parsed (`qos`: dicts of policy names, durations as
/// `(sec, nsec)`).
#[pyfunction]
fn connection_details<'py>(
    py: Python<'py>,
    rec: PyRef<'_, Recording>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let bag = rec.bag()?;
    let s = bag.quick_summary();
    let mut out = Vec::with_capacity(s.connections.len());
    for (i, c) in s.connections.iter().enumerate() {
        let d = PyDict::new(py);
        d.set_item("file", s.files.get(c.file as usize))?;
        d.set_item("type_hash", &c.type_hash)?;
        d.set_item("latching_stated", c.latching_stated)?;
        let computed = py.detach(|| bagscope_ops::reports::info::type_hash(bag, i));
        d.set_item("computed_hash", computed.and_then(Result::ok))?;
        let mut qos = Vec::new();
        for q in bagscope_reader::storage::rosbag2::qos_profiles(&c.qos) {
            let p = PyDict::new(py);
            p.set_item("history", q.history)?;
            p.set_item("depth", q.depth.unwrap_or(0))?;
            p.set_item("reliability", q.reliability)?;
            p.set_item("durability", q.durability)?;
            p.set_item("deadline", q.deadline)?;
            p.set_item("lifespan", q.lifespan)?;
            p.set_item("liveliness", q.liveliness)?;
            p.set_item("liveliness_lease_duration", q.liveliness_lease_duration)?;
            p.set_item(
                "avoid_ros_namespace_conventions",
                q.avoid_ros_namespace_conventions,
            )?;
            qos.push(p);
        }
        d.set_item("qos", qos)?;
        out.push(d);
    }
    Ok(out)
}

/// Whether the recording has anything to read, and its warnings: false for one that holds
/// nothing at all (no connection, no message) and is not complete either (cut off after its
/// magic or header, never closed). A complete recording of no messages is readable.
#[pyfunction]
fn readable(py: Python<'_>, rec: PyRef<'_, Recording>) -> PyResult<(bool, Vec<String>)> {
    let bag = rec.bag()?;
    let s = py.detach(|| bag.summary());
    let empty = s.connections.is_empty() && s.message_count == 0;
    Ok((!empty || s.indexed, bag.warnings()))
}

/// Adds the drop-in's functions to the native module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sniff, m)?)?;
    m.add_function(wrap_pyfunction!(set_classes, m)?)?;
    m.add_function(wrap_pyfunction!(connection_details, m)?)?;
    m.add_function(wrap_pyfunction!(readable, m)?)?;
    Ok(())
}
