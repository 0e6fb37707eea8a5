//! Decoded messages as Python objects: `Msg` (one class for every type, its fields by name), nested
//! values, numpy arrays of numbers, dataclasses where the caller gives classes.

use std::sync::Arc;

use numpy::PyArray1;
use pyo3::exceptions::{PyAttributeError, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use bagscope_reader::definition::msg::{MsgDef, Primitive};
use bagscope_reader::encoding::{Node, Plan, Value};

use crate::errors::Error;

/// A message type as Python objects, shared by every `Msg` of it: its name, its field names
/// and where each is, its constants.
pub(super) struct Shape {
    pub(super) name: Py<pyo3::types::PyString>,
    pub(super) keys: Vec<Py<pyo3::types::PyString>>,
    /// Field name → position in `keys` (and in a `Msg`'s values).
    pub(super) index: Py<PyDict>,
    /// The type's constants (`Log.ERROR`), attributes too but not fields.
    pub(super) constants: Option<Py<PyDict>>,
    /// The class its messages are made of, where a recording has a maker of classes; a `Msg`
    /// otherwise.
    pub(super) class: Option<Py<PyAny>>,
    /// How instances of `class` are made without running its `__init__`, where it says how.
    pub(super) init: Option<ClassInit>,
}

/// Instances of a dataclass made as `copy` and `pickle` make them: `object.__new__(cls)`, then
/// each attribute set as its generated `__init__` would set it, without a Python frame. The
/// class names its attributes in `_bagscope_fields` (one per field of the message, in order)
/// and `_bagscope_defaults` (`(name, value)` pairs: the fields the message does not fill,
/// which `__init__` sets to their defaults).
pub(super) struct ClassInit {
    new: Py<PyAny>,
    /// `(class,)`, the arguments of every `object.__new__` call, made once.
    args: Py<pyo3::types::PyTuple>,
    attrs: Vec<Py<pyo3::types::PyString>>,
    defaults: Vec<(Py<pyo3::types::PyString>, Py<PyAny>)>,
}

impl ClassInit {
    /// How to make `class`'s instances from `n` values, if it says.
    fn of(py: Python<'_>, class: &Bound<'_, PyAny>, n: usize) -> PyResult<Option<ClassInit>> {
        let (Ok(attrs), Ok(defaults)) = (
            class.getattr("_bagscope_fields"),
            class.getattr("_bagscope_defaults"),
        ) else {
            return Ok(None);
        };
        let attrs: Vec<String> = attrs.extract()?;
        if attrs.len() != n {
            return Ok(None);
        }
        let defaults: Vec<(String, Py<PyAny>)> = defaults.extract()?;
        let intern = |k: &str| pyo3::types::PyString::intern(py, k).unbind();
        Ok(Some(ClassInit {
            new: py
                .import("builtins")?
                .getattr("object")?
                .getattr("__new__")?
                .unbind(),
            args: pyo3::types::PyTuple::new(py, [class])?.unbind(),
            attrs: attrs.iter().map(|k| intern(k)).collect(),
            defaults: defaults.into_iter().map(|(k, v)| (intern(&k), v)).collect(),
        }))
    }

    fn make(&self, py: Python<'_>, values: Vec<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        let obj = self.new.bind(py).call1(self.args.bind(py))?;
        for (k, v) in self.attrs.iter().zip(values) {
            obj.setattr(k.bind(py), v)?;
        }
        for (k, v) in &self.defaults {
            obj.setattr(k.bind(py), v.bind(py))?;
        }
        Ok(obj.unbind())
    }
}

impl Shape {
    pub(super) fn new(
        py: Python<'_>,
        name: &str,
        keys: &[&str],
        constants: Option<Py<PyDict>>,
    ) -> PyResult<Shape> {
        let index = PyDict::new(py);
        let keys: Vec<Py<pyo3::types::PyString>> = keys
            .iter()
            .map(|k| pyo3::types::PyString::intern(py, k).unbind())
            .collect();
        for (i, k) in keys.iter().enumerate() {
            index.set_item(k.bind(py), i)?;
        }
        Ok(Shape {
            name: pyo3::types::PyString::intern(py, name).unbind(),
            keys,
            index: index.unbind(),
            constants,
            class: None,
            init: None,
        })
    }
}

/// A decoded message: its fields as attributes (and items), its type as `__msgtype__`.
#[pyclass(module = "bagscope", frozen)]
pub(super) struct Msg {
    pub(super) shape: Arc<Shape>,
    /// The fields' values, in definition order (a boxed slice rather than a tuple: one
    /// allocation fewer per message, and not tracked by Python's cycle collector, since a
    /// frozen `Msg` holds no cycle).
    pub(super) values: Box<[Py<PyAny>]>,
}

impl Msg {
    /// The value of field `name`, if the type has one.
    pub(super) fn field(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match self.shape.index.bind(py).get_item(name)? {
            Some(i) => Ok(self
                .values
                .get(i.extract::<usize>()?)
                .map(|v| v.clone_ref(py))),
            None => Ok(None),
        }
    }
}

#[pymethods]
impl Msg {
    /// The type's name (`geometry_msgs/Vector3`).
    #[getter]
    fn __msgtype__(&self, py: Python<'_>) -> Py<pyo3::types::PyString> {
        self.shape.name.clone_ref(py)
    }

    fn __getattr__(
        &self,
        py: Python<'_>,
        name: &Bound<'_, pyo3::types::PyString>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(v) = self.field(py, name.as_any())? {
            return Ok(v);
        }
        if let Some(c) = &self.shape.constants {
            if let Some(v) = c.bind(py).get_item(name)? {
                return Ok(v.unbind());
            }
        }
        Err(PyAttributeError::new_err(format!(
            "{} has no field {:?}",
            self.shape.name.bind(py),
            name.to_string()
        )))
    }

    fn __getitem__(
        &self,
        py: Python<'_>,
        name: &Bound<'_, pyo3::types::PyString>,
    ) -> PyResult<Py<PyAny>> {
        match self.field(py, name.as_any())? {
            Some(v) => Ok(v),
            None => Err(PyKeyError::new_err(name.to_string())),
        }
    }

    fn __dir__(&self, py: Python<'_>) -> Vec<String> {
        self.shape
            .keys
            .iter()
            .map(|k| k.bind(py).to_string())
            .collect()
    }

    /// The field names, in definition order.
    fn keys(&self, py: Python<'_>) -> Vec<String> {
        self.__dir__(py)
    }

    /// The message as plain dicts and lists (numeric arrays stay numpy arrays, `uint8[]` bytes).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let out = PyDict::new(py);
        for (k, v) in self.shape.keys.iter().zip(self.values.iter()) {
            out.set_item(k.bind(py), plain(py, v.bind(py))?)?;
        }
        Ok(out.into_any().unbind())
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<Msg>() {
            Ok(o) => {
                let o = o.get();
                Ok(self
                    .shape
                    .name
                    .bind(py)
                    .as_any()
                    .eq(o.shape.name.bind(py))?
                    && self.to_dict(py)?.bind(py).eq(o.to_dict(py)?)?)
            }
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = Vec::new();
        for (k, v) in self.shape.keys.iter().zip(self.values.iter()) {
            parts.push(format!("{}={}", k.bind(py), v.bind(py).repr()?));
        }
        Ok(format!(
            "{}({})",
            self.shape.name.bind(py),
            parts.join(", ")
        ))
    }
}

/// `v` with every `Msg` turned into a dict and every list of them into a list of dicts.
pub(super) fn plain(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if let Ok(m) = v.cast::<Msg>() {
        return m.get().to_dict(py);
    }
    if let Ok(l) = v.cast::<PyList>() {
        let out = PyList::empty(py);
        for x in l.iter() {
            out.append(plain(py, &x)?)?;
        }
        return Ok(out.into_any().unbind());
    }
    Ok(v.clone().unbind())
}

/// A `Msg` of `shape` with `values` in its fields' order.
pub(super) fn msg(
    py: Python<'_>,
    shape: &Arc<Shape>,
    values: Vec<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    if let Some(class) = &shape.class {
        if let Some(init) = &shape.init {
            return init.make(py, values);
        }
        return Ok(class
            .bind(py)
            .call1(pyo3::types::PyTuple::new(py, values)?)?
            .unbind());
    }
    Ok(Py::new(
        py,
        Msg {
            shape: shape.clone(),
            values: values.into_boxed_slice(),
        },
    )?
    .into_any())
}

/// A type's constants with their values as numbers, booleans or strings.
pub(super) fn constants(
    py: Python<'_>,
    t: &bagscope_reader::definition::msg::MsgType,
) -> PyResult<Option<Py<PyDict>>> {
    if t.constants.is_empty() {
        return Ok(None);
    }
    let d = PyDict::new(py);
    for c in &t.constants {
        let v = c.value.trim();
        let val: Py<PyAny> = match c.ty {
            Primitive::F32 | Primitive::F64 => match v.parse::<f64>() {
                Ok(x) => x.into_pyobject(py)?.into_any().unbind(),
                Err(_) => v.into_pyobject(py)?.into_any().unbind(),
            },
            Primitive::Bool => {
                let b = matches!(v, "1" | "true" | "True");
                b.into_pyobject(py)?.to_owned().into_any().unbind()
            }
            Primitive::String => c.value.as_str().into_pyobject(py)?.into_any().unbind(),
            _ => match v.parse::<i128>() {
                Ok(x) => x.into_pyobject(py)?.into_any().unbind(),
                Err(_) => v.into_pyobject(py)?.into_any().unbind(),
            },
        };
        d.set_item(&c.name, val)?;
    }
    Ok(Some(d.unbind()))
}

/// A little-endian array of primitives as a numpy array of their type.
pub(super) fn prims_to_numpy(
    py: Python<'_>,
    p: Primitive,
    le: &[u8],
    names: &Names,
) -> PyResult<Py<PyAny>> {
    macro_rules! arr {
        ($t:ty, $n:expr) => {
            PyArray1::from_vec(
                py,
                le.chunks_exact($n)
                    .map(|b| <$t>::from_le_bytes(b.try_into().unwrap_or([0; $n])))
                    .collect::<Vec<$t>>(),
            )
            .into_any()
            .unbind()
        };
    }
    Ok(match p {
        Primitive::Bool => {
            PyArray1::from_vec(py, le.iter().map(|&b| b != 0).collect::<Vec<bool>>())
                .into_any()
                .unbind()
        }
        Primitive::I8 => arr!(i8, 1),
        Primitive::U8 => arr!(u8, 1),
        Primitive::I16 => arr!(i16, 2),
        Primitive::U16 => arr!(u16, 2),
        Primitive::I32 => arr!(i32, 4),
        Primitive::U32 => arr!(u32, 4),
        Primitive::I64 => arr!(i64, 8),
        Primitive::U64 => arr!(u64, 8),
        Primitive::F32 => arr!(f32, 4),
        Primitive::F64 => arr!(f64, 8),
        // Times and durations are arrays of Msg (sec, nanosec).
        Primitive::Time | Primitive::Duration => {
            let out = PyList::empty(py);
            let shape = if p == Primitive::Time {
                &names.time
            } else {
                &names.duration
            };
            for b in le.chunks_exact(8) {
                let (s, n) = (&b[..4], &b[4..]);
                let s = <[u8; 4]>::try_from(s).unwrap_or([0; 4]);
                let n = <[u8; 4]>::try_from(n).unwrap_or([0; 4]);
                let values = if p == Primitive::Time {
                    vec![
                        u32::from_le_bytes(s).into_pyobject(py)?.into_any().unbind(),
                        u32::from_le_bytes(n).into_pyobject(py)?.into_any().unbind(),
                    ]
                } else {
                    vec![
                        i32::from_le_bytes(s).into_pyobject(py)?.into_any().unbind(),
                        i32::from_le_bytes(n).into_pyobject(py)?.into_any().unbind(),
                    ]
                };
                out.append(msg(py, shape, values)?)?;
            }
            out.into_any().unbind()
        }
        Primitive::String => PyList::empty(py).into_any().unbind(),
    })
}

/// A decoded value as Python: numbers, `str` (invalid UTF-8 replaced), `bytes` for `uint8[]`,
/// numpy arrays for other numeric arrays, lists, `Msg` for messages and for `time`/`duration`
/// (`sec`, `nanosec`, as rosbags names them).
/// A definition's field names and constants as Python objects, made once per connection (a
/// message's conversion then makes no key strings and no constants' dicts of its own).
pub(super) struct Names {
    pub(super) types: Vec<Arc<Shape>>,
    /// `uint8` arrays as numpy arrays rather than `bytes` (messages made of classes).
    pub(super) numpy_bytes: bool,
    /// A ROS 1 `time` and `duration`, as `Msg`s with `sec` and `nanosec`.
    pub(super) time: Arc<Shape>,
    pub(super) duration: Arc<Shape>,
}

impl Names {
    /// `classes`: the recording's maker of message classes, called once a type with its name,
    /// field names and constants.
    pub(super) fn new(
        py: Python<'_>,
        def: &MsgDef,
        classes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Names> {
        let shape = |name: &str, keys: &[&str], constants: Option<Py<PyDict>>| {
            let mut s = Shape::new(py, name, keys, constants)?;
            if let Some(make) = classes {
                let c = s.constants.as_ref().map(|c| c.clone_ref(py));
                let class = make.call1((name, keys.to_vec(), c))?;
                s.init = ClassInit::of(py, &class, keys.len())?;
                s.class = Some(class.unbind());
            }
            PyResult::Ok(Arc::new(s))
        };
        Ok(Names {
            types: def
                .types
                .iter()
                .map(|t| {
                    let keys: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                    shape(&t.name, &keys, constants(py, t)?)
                })
                .collect::<PyResult<_>>()?,
            numpy_bytes: classes.is_some(),
            time: shape("builtin_interfaces/Time", &["sec", "nanosec"], None)?,
            duration: shape("builtin_interfaces/Duration", &["sec", "nanosec"], None)?,
        })
    }
}

/// Builds Python objects straight from a message's bytes, as [`to_python_with`] makes them from
/// the value tree.
pub(super) struct PyBuild<'py, 'n> {
    pub(super) py: Python<'py>,
    pub(super) names: &'n Names,
    /// The first conversion that failed (the value then stands in as None, and the whole
    /// conversion returns this error): values are plain objects, not results, so a message's
    /// fields move into its `Msg` without a second vector.
    pub(super) err: Option<PyErr>,
}

impl<'py, 'n> PyBuild<'py, 'n> {
    pub(super) fn new(py: Python<'py>, names: &'n Names) -> Self {
        PyBuild {
            py,
            names,
            err: None,
        }
    }

    /// `r`'s value, or None with its error kept (the first one).
    pub(super) fn keep(&mut self, r: PyResult<Py<PyAny>>) -> Py<PyAny> {
        match r {
            Ok(v) => v,
            Err(e) => {
                self.err.get_or_insert(e);
                self.py.None()
            }
        }
    }

    /// What the conversion made, or its first error.
    pub(super) fn finish(self, v: Py<PyAny>) -> PyResult<Py<PyAny>> {
        match self.err {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }
}

impl bagscope_reader::encoding::Build for PyBuild<'_, '_> {
    type Out = Py<PyAny>;
    fn prim(&mut self, value: Value, _: u32, _: u32) -> Self::Out {
        let r = scalar_to_python(self.py, self.names, &value);
        self.keep(r)
    }
    fn string(&mut self, bytes: &[u8], _: u32, _: u32) -> Self::Out {
        let r = String::from_utf8_lossy(bytes)
            .into_pyobject(self.py)
            .map(|s| s.into_any().unbind());
        self.keep(r.map_err(PyErr::from))
    }
    fn bytes(&mut self, bytes: &[u8], _: u32, _: u32) -> Self::Out {
        if self.names.numpy_bytes {
            return PyArray1::from_slice(self.py, bytes).into_any().unbind();
        }
        PyBytes::new(self.py, bytes).into_any().unbind()
    }
    fn prims(&mut self, p: Primitive, le: &[u8], _: u32, _: u32) -> Self::Out {
        let r = prims_to_numpy(self.py, p, le, self.names);
        self.keep(r)
    }
    fn array(&mut self, items: Vec<Self::Out>, _: u32, _: u32) -> Self::Out {
        let r = PyList::new(self.py, items).map(|l| l.into_any().unbind());
        self.keep(r)
    }
    fn message(&mut self, ty: usize, fields: Vec<Self::Out>, _: u32, _: u32) -> Self::Out {
        let r = match self.names.types.get(ty) {
            Some(shape) => msg(self.py, shape, fields),
            None => Err(Error::new_err(format!("no type {ty} in the definition"))),
        };
        self.keep(r)
    }
}

/// A message's bytes decoded with `plan` into Python objects (with `names`' classes and shapes
/// where given). A small message is built into Python objects straight from its bytes, holding
/// the GIL (faster than letting it go and taking it back); a large one is decoded with the GIL
/// let go, then converted.
pub(super) fn decode(
    py: Python<'_>,
    plan: &Plan,
    names: Option<&Names>,
    data: &[u8],
) -> PyResult<Py<PyAny>> {
    match names {
        Some(names) if data.len() < 64 * 1024 => {
            let mut b = PyBuild::new(py, names);
            let v = plan
                .decode_with(data, &mut b)
                .map_err(|e| crate::errors::to_py(e.into()))?;
            b.finish(v)
        }
        _ => {
            let node = py
                .detach(|| plan.decode(data))
                .map_err(|e| crate::errors::to_py(e.into()))?;
            match names {
                Some(n) => to_python_with(py, n, &node),
                None => to_python(py, &plan.def, &node),
            }
        }
    }
}

/// A decoded value as Python objects (see [`to_python_with`]).
pub(super) fn to_python(py: Python<'_>, def: &MsgDef, node: &Node) -> PyResult<Py<PyAny>> {
    to_python_with(py, &Names::new(py, def, None)?, node)
}

/// A decoded value tree as Python objects, made as [`PyBuild`] makes them from the bytes.
pub(super) fn to_python_with(py: Python<'_>, names: &Names, node: &Node) -> PyResult<Py<PyAny>> {
    let mut b = PyBuild::new(py, names);
    let v = bagscope_reader::encoding::replay(node, &mut b);
    b.finish(v)
}

/// A scalar as Python: numbers, a ROS 1 `time`/`duration` as a `Msg` with `sec` and `nanosec`
/// (as rosbags names them); strings and arrays come through [`PyBuild`]'s own methods.
pub(super) fn scalar_to_python(py: Python<'_>, names: &Names, v: &Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::I8(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::U8(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::I16(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::U16(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::I32(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::U32(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::I64(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::U64(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::F32(x) => f64::from(*x).into_pyobject(py)?.into_any().unbind(),
        Value::F64(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::Time { sec, nsec } => msg(
            py,
            &names.time,
            vec![
                sec.into_pyobject(py)?.into_any().unbind(),
                nsec.into_pyobject(py)?.into_any().unbind(),
            ],
        )?,
        Value::Duration { sec, nsec } => msg(
            py,
            &names.duration,
            vec![
                sec.into_pyobject(py)?.into_any().unbind(),
                nsec.into_pyobject(py)?.into_any().unbind(),
            ],
        )?,
        other => return Err(Error::new_err(format!("not a scalar: {other}"))),
    })
}
