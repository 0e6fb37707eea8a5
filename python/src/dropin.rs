//! What the rosbags drop-in (`bagscope.rosbags`) asks of the library beyond the package's own
//! API: a recording's kind told from its first bytes, each connection's storage file, stated
//! and computed type hash and QoS profiles, messages made as instances of classes, and decode
//! errors that say which part of a message is at fault.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use super::errors::to_py;
use super::values::Names;
use super::{file_error, values, Messages, PlanOf, Recording};

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

/// The drop-in's `AnyReader.messages()`: `(connection, timestamp, rawdata)` tuples made here,
/// without a Python frame per message. `conns` is the drop-in's `Connection` of each of the
/// recording's connections; each message is remembered beside its bytes in `decoder`, whose
/// call on those bytes (the common next step) then takes its decoding.
#[pyfunction]
#[pyo3(signature = (rec, conns, decoder, connections=None, start_ns=None, end_ns=None))]
fn dropin_messages(
    py: Python<'_>,
    rec: PyRef<'_, Recording>,
    conns: Vec<Py<PyAny>>,
    decoder: Py<Decoder>,
    connections: Option<Vec<usize>>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
) -> PyResult<DropinMessages> {
    let inner = rec.messages(py, None, start_ns, end_ns, false, connections)?;
    // Each message's bytes are copied into a `bytes` and the message dropped before the next.
    inner.feed.without_copies();
    Ok(DropinMessages {
        inner,
        conns,
        decoder,
    })
}

/// The iterator of [`dropin_messages`].
#[pyclass(module = "bagscope")]
struct DropinMessages {
    inner: Messages,
    conns: Vec<Py<PyAny>>,
    decoder: Py<Decoder>,
}

#[pymethods]
impl DropinMessages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let m = match self.inner.feed.next(py) {
            None => return Err(PyStopIteration::new_err(())),
            Some(r) => r.map_err(to_py)?,
        };
        let Some(conn) = self.conns.get(m.conn) else {
            return Err(PyStopIteration::new_err(()));
        };
        let data = PyBytes::new(py, &m.data);
        let item = PyTuple::new(
            py,
            [
                conn.clone_ref(py).into_any(),
                m.time_ns.into_pyobject(py)?.into_any().unbind(),
                data.clone().into_any().unbind(),
            ],
        )?;
        let dec = self.decoder.get();
        if let Some(cell) = dec.how.get(m.conn) {
            if cell.get().is_none() {
                if let (Some(plan), names) = self.inner.decoding(py, m.conn) {
                    let _ = cell.set((plan, names));
                }
            }
        }
        if let Ok(mut last) = dec.last.lock() {
            *last = Some((data.unbind(), m.conn));
        }
        Ok(item)
    }
}

/// The drop-in's `AnyReader.deserialize(rawdata, typ)` made in Rust: the last bytes
/// [`DropinMessages`] handed out decoded as their connection's messages are (a new message at
/// each call, as rosbags makes one), when called with those very bytes and their type (the
/// common next step, told by identity); anything else (other bytes, another type, a message
/// that does not decode) goes to `slow`, a weak reference to the reader's own method, which decodes and words errors
/// as rosbags does.
#[pyclass(module = "bagscope", frozen)]
struct Decoder {
    /// Each connection's type as rosbags names it (`pkg/msg/Type`): the very string objects of
    /// the drop-in's connections, so that the common call (`deserialize(raw, c.msgtype)`) is
    /// told by identity.
    types: Vec<Py<pyo3::types::PyString>>,
    slow: Py<PyAny>,
    /// Each connection's plan and names, found at its first message.
    how: Vec<OnceLock<(PlanOf, Option<Arc<Names>>)>>,
    /// The bytes handed out last, and their connection.
    last: Mutex<Option<(Py<PyBytes>, usize)>>,
}

#[pymethods]
impl Decoder {
    #[new]
    fn new(types: Vec<Py<pyo3::types::PyString>>, slow: Py<PyAny>) -> Self {
        Decoder {
            how: types.iter().map(|_| OnceLock::new()).collect(),
            types,
            slow,
            last: Mutex::new(None),
        }
    }

    /// `deserialize(rawdata, typ)` (a method rather than `__call__`: Python calls a bound
    /// method of a native class with its arguments as they are, without a tuple).
    fn deserialize(
        &self,
        py: Python<'_>,
        rawdata: &Bound<'_, PyAny>,
        typ: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        // Taken out while it is decoded (building a message may run Python, which may call
        // back in here), put back after.
        let last = self.last.lock().ok().and_then(|mut l| l.take());
        if let Some((raw, conn)) = last {
            let hit = raw.bind(py).is(rawdata)
                && self.types.get(conn).is_some_and(|mine| {
                    typ.is(mine)
                        || typ.extract::<&str>().is_ok_and(|t| {
                            mine.bind(py).to_str().is_ok_and(|mine| same_type(mine, t))
                        })
                });
            let msg = match self.how.get(conn).and_then(OnceLock::get) {
                Some((Ok(plan), names)) if hit => {
                    values::decode(py, plan, names.as_deref(), raw.bind(py).as_bytes()).ok()
                }
                _ => None,
            };
            if let Ok(mut slot) = self.last.lock() {
                slot.get_or_insert((raw, conn));
            }
            if let Some(msg) = msg {
                return Ok(msg);
            }
        }
        let slow = self.slow.bind(py).call0()?;
        if slow.is_none() {
            return Err(crate::errors::Error::new_err("the AnyReader is gone"));
        }
        Ok(slow.call1((rawdata, typ))?.unbind())
    }
}

/// Whether `typ` (as a caller gives it: `pkg/msg/Type` or `pkg/Type`) names `mine`
/// (`pkg/msg/Type`).
fn same_type(mine: &str, typ: &str) -> bool {
    if mine == typ {
        return true;
    }
    let mut parts = typ.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(pkg), Some(name), None) => mine
            .strip_prefix(pkg)
            .and_then(|r| r.strip_prefix("/msg/"))
            .is_some_and(|r| r == name),
        _ => false,
    }
}

/// Adds the drop-in's functions to the native module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Decoder>()?;
    m.add_function(wrap_pyfunction!(dropin_messages, m)?)?;
    m.add_function(wrap_pyfunction!(sniff, m)?)?;
    m.add_function(wrap_pyfunction!(set_classes, m)?)?;
    m.add_function(wrap_pyfunction!(connection_details, m)?)?;
    m.add_function(wrap_pyfunction!(readable, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::same_type;

    #[test]
    fn a_type_is_named_with_or_without_msg() {
        assert!(same_type("std_msgs/msg/String", "std_msgs/msg/String"));
        assert!(same_type("std_msgs/msg/String", "std_msgs/String"));
        assert!(!same_type("std_msgs/msg/String", "std_msgs/Str"));
        assert!(!same_type("std_msgs/msg/String", "String"));
        assert!(!same_type("std_msgs/msg/String", "other/String"));
        assert!(!same_type("std_msgs/msg/String", "std_msgs/srv/String"));
    }
}
