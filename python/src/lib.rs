//! The Python package's native module, `bagscope._bagscope`: the bagscope library (no GUI)
//! as Python objects. Reads release the GIL; errors become `bagscope.Error` subclasses by kind.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use numpy::PyArray1;
use pyo3::exceptions::{PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::OnceLockExt;
use pyo3::types::{PyBytes, PyDict};

use bagscope_reader::encoding::{Plan, Value};
use bagscope_reader::{Bag, Filter};

mod arrow;
mod camera;
mod dropin;
mod errors;
mod expect;
mod feed;
mod geo;
mod lerobot;
mod opening;
mod scripts;
mod values;
mod video;

use arrow::{warn_skipped, ArrowStream, StreamSource};
use values::{to_python_with, Msg, Names};

use errors::{
    file_error, file_errors, ops_to_py, to_py, DamagedError, DecodeError, DefinitionError, Error,
    NotARecordingError, NotFoundError,
};

/// An open recording. A context manager: `with bagscope.open(p) as r: ...`.
#[pyclass(module = "bagscope")]
struct Recording {
    pub(crate) bag: Option<Bag>,
    /// Makes the class of each message type (`dropin::set_classes`): messages are then its
    /// instances, `uint8` arrays numpy arrays, as rosbags has them.
    pub(crate) classes: Option<Py<PyAny>>,
}

impl Recording {
    fn bag(&self) -> PyResult<&Bag> {
        self.bag
            .as_ref()
            .ok_or_else(|| Error::new_err("the recording is closed"))
    }
}

#[pymethods]
impl Recording {
    /// The recording's path (the first one's, for several): a `pathlib.Path`, or for a remote
    /// recording its URL as a string (without credentials).
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.bag()?.quick_summary().path.clone();
        if bagscope_reader::storage::remote::is_url(&p) {
            return Ok(pyo3::types::PyString::new(py, &p.to_string_lossy()).into_any());
        }
        p.into_pyobject(py).map(|o| o.into_any())
    }

    /// Its topics, in name order.
    #[getter]
    fn topics(&self) -> PyResult<Vec<Topic>> {
        let bag = self.bag()?;
        let s = bag.quick_summary();
        Ok(s.topics
            .iter()
            .map(|t| {
                let c0 = t.connections.first().and_then(|&c| s.connections.get(c));
                Topic {
                    bag: bag.clone(),
                    name: t.name.clone(),
                    msgtype: t.datatype.clone(),
                    count: t.message_count,
                    encoding: c0.map(|c| c.encoding.clone()).unwrap_or_default(),
                    definition: t
                        .connections
                        .first()
                        .map(|&c| bagscope_ops::reports::info::type_note(bag, c))
                        .unwrap_or_default(),
                    connections: t.connections.len(),
                }
            })
            .collect())
    }

    /// The first message's time (ns since the epoch), or None for an empty recording.
    #[getter]
    fn start_ns(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let bag = self.bag()?;
        Ok(py.detach(|| bag.summary().start_ns))
    }

    /// The last message's time (ns since the epoch), or None.
    #[getter]
    fn end_ns(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let bag = self.bag()?;
        Ok(py.detach(|| bag.summary().end_ns))
    }

    /// From the first message to the last, in seconds.
    #[getter]
    fn duration(&self, py: Python<'_>) -> PyResult<f64> {
        let bag = self.bag()?;
        Ok(py.detach(|| bag.summary().duration_ns()) as f64 / 1e9)
    }

    /// What was found wrong or recovered while opening (and building the tables).
    #[getter]
    fn warnings(&self) -> PyResult<Vec<String>> {
        Ok(self.bag()?.warnings())
    }

    /// What `bagscope info --json` prints, as a dict.
    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let bag = self.bag()?;
        let j = py
            .detach(|| bagscope_ops::reports::info::summary_json(bag, false))
            .map_err(to_py)?;
        let json = py.import("json")?;
        Ok(json.call_method1("loads", (j.to_string(),))?.unbind())
    }

    /// The messages in time order (of some topics, within `[start_ns, end_ns)`), read as the
    /// iteration goes: memory stays bounded however large the recording. With `raw`, the
    /// messages are not decoded (`.msg` is None).
    /// `connections`: only these connections (indexes into `connections`), of the topics given.
    #[pyo3(signature = (topics=None, start_ns=None, end_ns=None, raw=false, connections=None))]
    fn messages(
        &self,
        py: Python<'_>,
        topics: Option<Vec<String>>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
        raw: bool,
        connections: Option<Vec<usize>>,
    ) -> PyResult<Messages> {
        let bag = self.bag()?.clone();
        let it = py
            .detach(|| {
                let mut wanted = match &topics {
                    Some(t) => Some(bag.connections_of_topics(t)?),
                    None => None,
                };
                if let Some(only) = &connections {
                    wanted = Some(match wanted {
                        Some(w) => w.into_iter().filter(|c| only.contains(c)).collect(),
                        None => only.clone(),
                    });
                }
                let connections = wanted;
                bag.messages(&Filter {
                    connections,
                    start_ns,
                    end_ns,
                })
            })
            .map_err(to_py)?;
        let n = bag.quick_summary().connections.len();
        Ok(Messages {
            bag,
            feed: feed::Feed::new(it),
            raw,
            names: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
            classes: self.classes.as_ref().map(|c| c.clone_ref(py)),
            topics: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
            plans: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
        })
    }

    /// A video topic's frames (`foxglove.CompressedVideo`, `FFMPEGPacket`, H.264/H.265
    /// `CompressedImage`), decoded in-process in display order: `(time_ns, rgb)` pairs, `rgb`
    /// an `(height, width, 3)` uint8 array; frame N is shown from the N-th message's time.
    /// `start_ns`/`end_ns` bound the frames' times.
    #[pyo3(signature = (topic, start_ns=None, end_ns=None))]
    fn frames(
        &self,
        py: Python<'_>,
        topic: &str,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<video::Frames> {
        let bag = self.bag()?.clone();
        py.detach(|| video::Frames::open(bag, topic, start_ns, end_ns))
            .map_err(ops_to_py)
    }

    /// Series of expressions, one per column as `bagscope csv` takes them: paths
    /// (`/imu.linear_acceleration.x`, `/tf.transforms[-1].transform.translation.z`), paths with
    /// filters, slices and modifiers (`/imu.angular_velocity.z.@derivative.@movavg(0.5s)`),
    /// formulas (`speed=hypot(/odom.v.x, /odom.v.y)`; see docs/expressions.md). A dict of numpy
    /// arrays: `"time_ns"` (int64) and one float64 array per column (keyed by its text, or by
    /// NAME for `NAME=EXPR`), rows at the union of the columns' times as `csv` writes them
    /// (NaN where a column has no value at a row's time). `vars`: values of `$variables`;
    /// `named`: named series for `$name` in formulas; `interp`: "hold" or "linear". Paths of
    /// fields and indexes are read in place: no message is decoded whole.
    #[pyo3(signature = (paths, start_ns=None, end_ns=None, vars=None, named=None, interp="hold"))]
    #[allow(clippy::too_many_arguments)]
    fn series<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<String>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
        vars: Option<std::collections::HashMap<String, Bound<'py, PyAny>>>,
        named: Option<std::collections::HashMap<String, String>>,
        interp: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        use bagscope_reader::expr::Expr;
        let bag = self.bag()?;
        let expr_err = |e: bagscope_reader::expr::ExprError| to_py(e.into());
        let cols: Vec<bagscope_ops::tables::csv::Column> = paths
            .iter()
            .map(|p| bagscope_ops::tables::csv::Column::parse(p).map_err(expr_err))
            .collect::<PyResult<_>>()?;
        let env = scripts::env(vars, named, interp)?;
        let exprs: Vec<Expr> = cols.iter().map(|c| c.expr.clone()).collect();
        let (times, columns) = py
            .detach(|| -> bagscope_reader::Result<(Vec<i64>, Vec<Vec<f64>>)> {
                let cancel = std::sync::atomic::AtomicBool::new(false);
                let threads = bag.options().threads();
                // Every path in one pass over the chunks.
                let all: Vec<Vec<bagscope_reader::series::Point>> =
                    bagscope_reader::series::expr_series(
                        bag,
                        &exprs,
                        &env,
                        (start_ns, end_ns),
                        threads,
                        &cancel,
                    )?
                    .into_iter()
                    .map(|s| s.points)
                    .collect();
                let refs: Vec<&[bagscope_reader::series::Point]> =
                    all.iter().map(|v| v.as_slice()).collect();
                let mut times = Vec::new();
                let mut columns = vec![Vec::new(); refs.len()];
                for (t, row) in bagscope_reader::series::merge_rows(&refs) {
                    times.push(i64::try_from(t).unwrap_or(i64::MAX));
                    for (c, v) in columns.iter_mut().zip(row) {
                        c.push(v.and_then(Value::as_f64).unwrap_or(f64::NAN));
                    }
                }
                Ok((times, columns))
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("time_ns", PyArray1::from_vec(py, times))?;
        for (c, v) in cols.iter().zip(columns) {
            d.set_item(&c.name, PyArray1::from_vec(py, v))?;
        }
        Ok(d)
    }

    /// A Python function over a main series (`sources[0]`, an expression) and other sources
    /// aligned on it (each at its sample nearest in time, as PlotJuggler aligns them): per
    /// sample `func(time_s, value, v1, …)` returns a number, `(time_s, value)`, a list of them
    /// or None; `vectorized=True`: `func(times_s, values, v1s, …)` over numpy arrays returns
    /// an array as long (NaN: no point) or `(times_s, values)`. `{"time_ns", "value"}` arrays.
    #[pyo3(signature = (func, *sources, start_ns=None, end_ns=None, vectorized=false))]
    fn derive<'py>(
        &self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
        sources: Vec<String>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
        vectorized: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let range = (start_ns, end_ns);
        scripts::derive(py, self.bag()?, func, &sources, range, vectorized)
    }

    /// A Lua series script (docs/scripts.md): `'kmh(/odom.twist.twist.linear.x) = return
    /// value * 3.6'`, a `.lua` script file, or a PlotJuggler layout or snippet file (`name`: its
    /// snippet). A dict of its series by name, each `{"time_ns", "value"}` arrays.
    #[pyo3(signature = (script, name=None, start_ns=None, end_ns=None))]
    fn lua<'py>(
        &self,
        py: Python<'py>,
        script: &str,
        name: Option<&str>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        scripts::lua(py, self.bag()?, script, name, (start_ns, end_ns))
    }

    /// This recording with the virtual topics of message script files (docs/scripts.md): a
    /// new `Recording` whose topics include them, made once into bagscope's cache.
    fn with_scripts(&self, py: Python<'_>, files: Vec<PathBuf>) -> PyResult<Recording> {
        let bag = scripts::with_scripts(py, self.bag()?, &files)?;
        Ok(Recording {
            bag: Some(bag),
            classes: None,
        })
    }

    /// This recording with a virtual topic `topic` of ROS 2 type `type` made by a Python
    /// function: `func(input_topic, msg, time_s)` over the messages of `inputs` in time order
    /// returns the message as a dict (lists, numbers, strings, bytes, numpy arrays) or None.
    #[pyo3(signature = (topic, r#type, inputs, func))]
    fn with_virtual(
        &self,
        py: Python<'_>,
        topic: &str,
        r#type: &str,
        inputs: Vec<String>,
        func: &Bound<'_, PyAny>,
    ) -> PyResult<Recording> {
        let bag = scripts::with_virtual(py, self.bag()?, (topic, r#type, &inputs), func)?;
        Ok(Recording {
            bag: Some(bag),
            classes: None,
        })
    }

    /// A GPS topic's track (`sensor_msgs/NavSatFix`, `gps_common/GPSFix`,
    /// `foxglove.LocationFix`; or `lat=` and `lon=` paths of any one topic, `topic` then None):
    /// numpy arrays `time_ns`, `latitude`, `longitude`, `altitude`, `accuracy_m` (NaN where
    /// unknown), `status` (-128 where the type has none), and `left_out` (counts of fixes
    /// without a fix or a position, each of the first with its time, number and why).
    #[pyo3(signature = (topic=None, start_ns=None, end_ns=None, *, lat=None, lon=None))]
    fn track<'py>(
        &self,
        py: Python<'py>,
        topic: Option<String>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
        lat: Option<String>,
        lon: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        use bagscope_ops::spatial::geo::TrackSource;
        let source = match (topic, lat, lon) {
            (Some(t), None, None) => TrackSource::Topic(t),
            (None, Some(lat), Some(lon)) => TrackSource::Paths { lat, lon },
            _ => return Err(PyValueError::new_err("a fix topic, or lat= and lon= paths")),
        };
        geo::track(py, self.bag()?, source, (start_ns, end_ns))
    }

    /// The calibration on `topic` (`CameraInfo` or `foxglove.CameraCalibration`) at or before
    /// `at_ns` (the first where `None`), as a `Camera`.
    #[pyo3(signature = (topic, at_ns=None))]
    fn camera(&self, topic: &str, at_ns: Option<u64>) -> PyResult<camera::Camera> {
        camera::camera_at(self.bag()?, topic, at_ns)
    }

    /// The annotations of `topic` (ImageMarker, ImageMarkerArray, foxglove.ImageAnnotations):
    /// `time_ns` and `stamp_ns` arrays (a message each; -1: no stamp), `shapes` (a list of
    /// shape dicts a message, points as N×2 float32 pixel arrays) and `notes`.
    #[pyo3(signature = (topic, start_ns=None, end_ns=None))]
    fn annotations<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        camera::annotations(py, self.bag()?, topic, (start_ns, end_ns))
    }

    /// The messages of `topic` as a `pyarrow.Table`: `time_ns` and the message's fields as
    /// typed, nested columns built from the definition (see the README). `fields`: dotted paths
    /// (`header.stamp`, `linear_acceleration`) to keep only those. Needs pyarrow.
    #[pyo3(signature = (topic, fields=None, start_ns=None, end_ns=None))]
    fn to_arrow(
        &self,
        py: Python<'_>,
        topic: &str,
        fields: Option<Vec<String>>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let bag = self.bag()?;
        let (schema, batches, skipped) = py
            .detach(|| -> bagscope_reader::Result<_> {
                let mut tb = bagscope_ops::tables::arrow::TopicBatches::new(
                    bag,
                    topic,
                    fields.as_deref(),
                    start_ns,
                    end_ns,
                )?;
                let mut batches = Vec::new();
                while let Some(b) = tb.next_batch()? {
                    batches.push(b);
                }
                let (n, first) = tb.skipped();
                Ok((tb.schema(), batches, (n, first.map(str::to_string))))
            })
            .map_err(to_py)?;
        warn_skipped(py, topic, &skipped)?;
        let reader = arrow_array::RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = ArrowStream::once(Box::new(reader));
        let pa = py.import("pyarrow").map_err(|e| {
            pyo3::exceptions::PyImportError::new_err(format!(
                "to_arrow needs pyarrow (pip install pyarrow): {e}"
            ))
        })?;
        Ok(pa.call_method1("table", (stream,))?.unbind())
    }

    /// `to_arrow` flattened as rosbags-dataframe flattens: one column per leaf field with
    /// dotted names (`header.stamp.sec`), indexed by receive time (`DatetimeIndex`). Needs
    /// pandas and pyarrow.
    #[pyo3(signature = (topic, fields=None, start_ns=None, end_ns=None))]
    fn to_pandas(
        &self,
        py: Python<'_>,
        topic: &str,
        fields: Option<Vec<String>>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        let table = self.to_arrow(py, topic, fields, start_ns, end_ns)?;
        let helper = py.import("bagscope._arrow")?;
        Ok(helper.call_method1("to_pandas", (table,))?.unbind())
    }

    /// The messages of `topic` as an Arrow C stream, read as the consumer asks for batches:
    /// hand it to `pyarrow.RecordBatchReader.from_stream`, `duckdb.sql("... FROM s")`,
    /// `polars.from_arrow`, ... (anything that takes `__arrow_c_stream__`).
    #[pyo3(signature = (topic, fields=None, start_ns=None, end_ns=None))]
    fn arrow_stream(
        &self,
        py: Python<'_>,
        topic: &str,
        fields: Option<Vec<String>>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> PyResult<ArrowStream> {
        let bag = self.bag()?.clone();
        // The topic and fields checked now, not when a consumer first reads.
        py.detach(|| bagscope_ops::tables::arrow::topic_schema(&bag, topic, fields.as_deref()))
            .map_err(to_py)?;
        Ok(ArrowStream {
            source: StreamSource::Topic {
                bag,
                topic: topic.to_string(),
                fields,
                start_ns,
                end_ns,
            },
            skipped: Arc::new(Mutex::new((0, None))),
        })
    }

    /// Its connections (a topic as recorded from one publisher with one type, a channel, a
    /// rosbag2 topic of one storage file), in the recording's order: dicts with `index`, `id`,
    /// `topic`, `type`, `md5sum`, `definition` (the text as stored), `encoding`,
    /// `schema_encoding`, `callerid`, `latching`, `count`.
    #[getter]
    fn connections<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let s = self.bag()?.quick_summary();
        s.connections
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let d = PyDict::new(py);
                d.set_item("index", i)?;
                d.set_item("id", c.id)?;
                d.set_item("topic", &c.topic)?;
                d.set_item("type", &c.datatype)?;
                d.set_item("md5sum", &c.md5sum)?;
                d.set_item("definition", &c.message_definition)?;
                d.set_item("encoding", &c.encoding)?;
                d.set_item("schema_encoding", &c.schema_encoding)?;
                d.set_item("callerid", &c.callerid)?;
                d.set_item("latching", c.latching)?;
                d.set_item("count", c.message_count)?;
                Ok(d)
            })
            .collect()
    }

    /// Decodes `data` (a message's bytes as stored) with connection `conn`'s definition.
    /// A message that does not decode raises `DecodeError`, whose `kind` says which part is at
    /// fault: `"content"`, `"encapsulation"` (CDR's header) or `"trailing"` (bytes left over).
    fn decode(&self, py: Python<'_>, conn: usize, data: &[u8]) -> PyResult<Py<PyAny>> {
        let bag = self.bag()?;
        let (plan, _) = bag.plan(conn).map_err(|e| to_py(e.into()))?;
        let node = py
            .detach(|| plan.decode(data))
            .map_err(|e| errors::decode_error(py, e))?;
        let classes = self.classes.as_ref().map(|c| c.bind(py));
        to_python_with(py, &Names::new(py, &plan.def, classes)?, &node)
    }

    /// Closes the recording (its files are released when nothing else holds them).
    fn close(&mut self) {
        self.bag = None;
        self.classes = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        match &self.bag {
            Some(b) => {
                let s = b.quick_summary();
                format!(
                    "<bagscope.Recording {} ({}, {} topics, {} messages)>",
                    s.path.display(),
                    s.version.as_str(),
                    s.topics.len(),
                    s.message_count
                )
            }
            None => "<bagscope.Recording (closed)>".into(),
        }
    }
}

/// A topic of a recording.
#[pyclass(module = "bagscope", frozen)]
struct Topic {
    /// The topic's name.
    #[pyo3(get)]
    name: String,
    /// The message type (`sensor_msgs/msg/Imu`, `sensor_msgs/Imu`).
    #[pyo3(get)]
    msgtype: String,
    /// Messages on the topic.
    #[pyo3(get)]
    count: u64,
    /// `ros1`, `cdr`, `protobuf`, `json`, ...
    #[pyo3(get)]
    encoding: String,
    /// Where its definition came from (stored, search path, shipped), or why there is none.
    #[pyo3(get)]
    definition: String,
    /// How many connections (publishers, split files) it has.
    #[pyo3(get)]
    connections: usize,
    bag: Bag,
}

#[pymethods]
impl Topic {
    /// The median rate in Hz over the recording (reads the message tables), or None with
    /// fewer than two messages.
    #[getter]
    fn rate(&self, py: Python<'_>) -> PyResult<Option<f64>> {
        let r = py
            .detach(|| bagscope_ops::reports::info::topic_rates(&self.bag, &self.name))
            .map_err(to_py)?;
        Ok(r.map(|(med, _, _)| med))
    }

    fn __repr__(&self) -> String {
        format!(
            "<bagscope.Topic {} {} ({} messages)>",
            self.name, self.msgtype, self.count
        )
    }
}

/// A connection's plan, or why it has none.
type PlanOf = Result<Arc<Plan>, String>;

/// The iterator of [`Recording::messages`].
#[pyclass(module = "bagscope")]
struct Messages {
    bag: Bag,
    /// The messages, read on a thread of their own.
    feed: feed::Feed,
    raw: bool,
    /// Each connection's names as Python objects, made when its first message comes.
    names: Vec<std::sync::OnceLock<Option<Arc<Names>>>>,
    /// The recording's maker of message classes, if set.
    classes: Option<Py<PyAny>>,
    /// Each connection's topic as a Python string, likewise.
    topics: Vec<std::sync::OnceLock<Py<pyo3::types::PyString>>>,
    /// Each connection's plan (or why it has none), likewise.
    plans: Vec<std::sync::OnceLock<PlanOf>>,
}

#[pymethods]
impl Messages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Message> {
        let next = self.feed.next(py);
        let m = match next {
            None => return Err(PyStopIteration::new_err(())),
            Some(r) => r.map_err(to_py)?,
        };
        let topic = match self.topics.get(m.conn) {
            Some(cell) => cell
                .get_or_init_py_attached(py, || {
                    let s = self.bag.quick_summary();
                    let name = s.connections.get(m.conn).map_or("", |c| c.topic.as_str());
                    pyo3::types::PyString::intern(py, name).unbind()
                })
                .clone_ref(py),
            None => pyo3::types::PyString::new(py, "").unbind(),
        };
        let (plan, names) = self.decoding(py, m.conn);
        Ok(Message {
            topic,
            time_ns: m.time_ns,
            conn: m.conn,
            data: m.data,
            plan,
            names,
            msg: std::sync::OnceLock::new(),
        })
    }
}

impl Messages {
    /// Connection `conn`'s plan (None in a raw iteration) and names, each found once.
    fn decoding(&self, py: Python<'_>, conn: usize) -> (Option<PlanOf>, Option<Arc<Names>>) {
        if self.raw {
            return (None, None);
        }
        let plan = match self.plans.get(conn) {
            Some(cell) => cell
                .get_or_init_py_attached(py, || {
                    self.bag
                        .plan(conn)
                        .map(|(p, _)| p)
                        .map_err(|e| e.to_string())
                })
                .clone(),
            None => Err(format!("no connection {conn}")),
        };
        let names = match &plan {
            Ok(p) => self.names.get(conn).and_then(|cell| {
                // The class maker is Python, which may let another thread run: one that asks
                // for the same connection then waits with the GIL let go (pyo3's way).
                cell.get_or_init_py_attached(py, || {
                    Names::new(py, &p.def, self.classes.as_ref().map(|c| c.bind(py)))
                        .ok()
                        .map(Arc::new)
                })
                .clone()
            }),
            Err(_) => None,
        };
        (Some(plan), names)
    }
}

/// One message: its topic, receive time, bytes as stored and (decoded when first asked for)
/// its value.
#[pyclass(module = "bagscope", frozen)]
struct Message {
    #[pyo3(get)]
    topic: Py<pyo3::types::PyString>,
    /// Receive time, ns since the epoch.
    #[pyo3(get)]
    time_ns: u64,
    /// The connection's index in the recording.
    #[pyo3(get)]
    conn: usize,
    data: bagscope_reader::Bytes,
    plan: Option<PlanOf>,
    /// The connection's names as Python objects, shared by its messages.
    names: Option<Arc<Names>>,
    msg: std::sync::OnceLock<Py<PyAny>>,
}

#[pymethods]
impl Message {
    /// The bytes as stored.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    /// The decoded message (attribute access: `m.msg.header.stamp.sec`), or None for a raw
    /// iteration.
    #[getter]
    fn msg(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(m) = self.msg.get() {
            return Ok(m.clone_ref(py));
        }
        let plan = match &self.plan {
            None => return Ok(py.None()),
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(DefinitionError::new_err(e.clone())),
        };
        let v = values::decode(py, plan, self.names.as_deref(), &self.data)?;
        let _ = self.msg.set(v.clone_ref(py));
        Ok(v)
    }

    fn __repr__(&self) -> String {
        format!(
            "<bagscope.Message {} at {} ({} bytes)>",
            self.topic,
            self.time_ns,
            self.data.len()
        )
    }
}

/// The native module.
/// The `bagscope` executable in this module: the command line and the desktop app, run on
/// `argv` (the program's name first) with the GIL released; the exit status.
#[pyfunction]
fn _main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    use std::io::Write;
    let code = py.detach(|| bagscope::cli::main(argv));
    let _ = std::io::stdout().flush();
    bagscope::cli::exit_status(code)
}

#[pymodule]
fn _bagscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(opening::open, m)?)?;
    m.add_function(wrap_pyfunction!(_main, m)?)?;
    dropin::register(m)?;
    m.add_function(wrap_pyfunction!(camera::project_points, m)?)?;
    m.add_function(wrap_pyfunction!(camera::undistort, m)?)?;
    expect::register(m)?;
    lerobot::register(m)?;
    m.add_class::<camera::Camera>()?;
    m.add_class::<Recording>()?;
    m.add_class::<Topic>()?;
    m.add_class::<Messages>()?;
    m.add_class::<Message>()?;
    m.add_class::<Msg>()?;
    m.add_class::<ArrowStream>()?;
    m.add_class::<video::Frames>()?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("NotARecordingError", py.get_type::<NotARecordingError>())?;
    m.add("DamagedError", py.get_type::<DamagedError>())?;
    m.add("DefinitionError", py.get_type::<DefinitionError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    let (file, missing) = file_errors(py)?;
    m.add("FileError", file)?;
    m.add("MissingFileError", missing)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
