//! The Python exceptions of bagscope's errors, by kind: `bagscope.Error` and its subclasses,
//! `FileError` an `OSError` and `MissingFileError` a `FileNotFoundError` too.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    bagscope,
    Error,
    PyException,
    "What bagscope could not do, saying what and where (file, byte offset, record)."
);
pyo3::create_exception!(
    bagscope,
    NotARecordingError,
    Error,
    "The file is not a recording bagscope knows (empty, another format, a version it cannot read)."
);
pyo3::create_exception!(
    bagscope,
    DamagedError,
    Error,
    "The recording is damaged where it was read: a record truncated or malformed, a chunk that does not decompress."
);
pyo3::create_exception!(
    bagscope,
    DefinitionError,
    Error,
    "A message definition or schema that does not parse, or none found."
);
pyo3::create_exception!(
    bagscope,
    DecodeError,
    Error,
    "A message whose bytes do not fit its definition (the field and the byte offset)."
);
pyo3::create_exception!(
    bagscope,
    NotFoundError,
    Error,
    "A topic, connection or field that the recording does not have."
);
/// `FileError` (a `bagscope.Error` and an `OSError`: the operating system refused to open or
/// read a file) and `MissingFileError` (also a `FileNotFoundError`), made at import: Python
/// classes of two bases, which `create_exception!` does not make.
static FILE_ERRORS: pyo3::sync::PyOnceLock<(Py<PyAny>, Py<PyAny>)> = pyo3::sync::PyOnceLock::new();

pub(super) fn file_errors(py: Python<'_>) -> PyResult<&(Py<PyAny>, Py<PyAny>)> {
    FILE_ERRORS.get_or_try_init(py, || {
        let ty = py.import("builtins")?.getattr("type")?;
        let class = |name: &str, bases: (Bound<'_, PyAny>, Bound<'_, PyAny>), doc: &str| {
            let d = PyDict::new(py);
            d.set_item("__module__", "bagscope")?;
            d.set_item("__doc__", doc)?;
            PyResult::Ok(ty.call1((name, bases, d))?.unbind())
        };
        let file = class(
            "FileError",
            (
                py.get_type::<Error>().into_any(),
                py.get_type::<pyo3::exceptions::PyOSError>().into_any(),
            ),
            "The operating system refused to open or read a file (an OSError too).",
        )?;
        let missing = class(
            "MissingFileError",
            (
                file.bind(py).clone(),
                py.get_type::<pyo3::exceptions::PyFileNotFoundError>()
                    .into_any(),
            ),
            "A file or directory that does not exist (a FileNotFoundError too).",
        )?;
        Ok((file, missing))
    })
}

/// A `FileError` (or, for a path that does not exist, a `MissingFileError`) saying `msg`.
pub(super) fn file_error(missing: bool, msg: String) -> PyErr {
    Python::attach(|py| match file_errors(py) {
        Ok((file, absent)) => {
            let class = if missing { absent } else { file };
            match class.bind(py).call1((msg,)) {
                Ok(e) => PyErr::from_value(e),
                Err(e) => e,
            }
        }
        Err(e) => e,
    })
}

/// The Python exception for a library error, by its kind.
pub(super) fn to_py(e: bagscope_reader::Error) -> PyErr {
    use bagscope_reader::Error as E;
    let msg = e.to_string();
    match e {
        E::Io(ref e) => file_error(e.kind() == std::io::ErrorKind::NotFound, msg),
        E::Open { ref source, .. } => {
            file_error(source.kind() == std::io::ErrorKind::NotFound, msg)
        }
        E::EmptyFile | E::HeaderOnly { .. } | E::NotABag { .. } | E::UnsupportedVersion { .. } => {
            NotARecordingError::new_err(msg)
        }
        E::Truncated { .. }
        | E::Malformed { .. }
        | E::MissingField { .. }
        | E::Decompress { .. }
        | E::UnknownCompression { .. }
        | E::TooLarge { .. }
        | E::Storage { .. } => DamagedError::new_err(msg),
        E::Definition(_) => DefinitionError::new_err(msg),
        E::Decode(d) => Python::attach(|py| decode_error(py, d)),
        E::NotFound(_) | E::Path(_) => NotFoundError::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// The Python exception for an operation's error: the reader's by its kind, the rest (a video
/// stream that does not decode, an image, a transform) as `bagscope.Error`.
pub(super) fn ops_to_py(e: bagscope_ops::Error) -> PyErr {
    match e {
        bagscope_ops::Error::Reader(e) => to_py(e),
        other => Error::new_err(other.to_string()),
    }
}

/// `DecodeError` for a message that does not decode, with `kind`: `"content"`,
/// `"encapsulation"` or `"trailing"`.
pub(super) fn decode_error(py: Python<'_>, e: bagscope_reader::error::DecodeError) -> PyErr {
    use bagscope_reader::error::DecodeErrorKind as K;
    let kind = match e.kind {
        K::Content => "content",
        K::Encapsulation => "encapsulation",
        K::Trailing => "trailing",
    };
    let err = DecodeError::new_err(e.to_string());
    if let Err(set) = err.value(py).setattr("kind", kind) {
        return set;
    }
    err
}
