//! Topics as Arrow streams handed to Python through the Arrow C stream interface (pyarrow, pandas,
//! DuckDB, Polars read them), the messages that did not decode counted beside.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use bagscope_reader::Bag;

use crate::errors::{to_py, Error};

/// Messages that did not decode (left out of a table) and the first one's error.
pub(super) type Skipped = Arc<Mutex<(usize, Option<String>)>>;

pub(super) fn warn_skipped(
    py: Python<'_>,
    topic: &str,
    skipped: &(usize, Option<String>),
) -> PyResult<()> {
    if let (n @ 1.., Some(first)) = skipped {
        let msg = std::ffi::CString::new(format!(
            "{n} messages of {topic} did not decode and were left out of the table; the first: {first}"
        ))
        .unwrap_or_default();
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            &msg,
            1,
        )?;
    }
    Ok(())
}

/// A topic's batches, counting the messages left out as the consumer reads.
pub(super) struct Counted {
    pub(super) inner: bagscope_ops::tables::arrow::TopicBatches,
    pub(super) skipped: Skipped,
}

impl Iterator for Counted {
    type Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>;

    /// The next batch. The consumer may call from any thread, holding the GIL or not: nothing
    /// here touches Python.
    fn next(&mut self) -> Option<Self::Item> {
        let b = self.inner.next();
        if let Ok(mut s) = self.skipped.lock() {
            let (n, first) = self.inner.skipped();
            *s = (n, first.map(str::to_string));
        }
        b
    }
}

impl arrow_array::RecordBatchReader for Counted {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.inner.schema()
    }
}

/// Where an [`ArrowStream`]'s batches come from.
pub(super) enum StreamSource {
    /// Batches already read, handed over once.
    Once(Mutex<Option<Box<dyn arrow_array::RecordBatchReader + Send>>>),
    /// A topic, read again for every consumer that asks.
    Topic {
        bag: Bag,
        topic: String,
        fields: Option<Vec<String>>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    },
}

/// Record batches behind the Arrow PyCapsule interface (`__arrow_c_stream__`,
/// `__arrow_c_schema__`).
#[pyclass(module = "bagscope")]
pub(super) struct ArrowStream {
    pub(super) source: StreamSource,
    pub(super) skipped: Skipped,
}

impl ArrowStream {
    pub(super) fn once(reader: Box<dyn arrow_array::RecordBatchReader + Send>) -> ArrowStream {
        ArrowStream {
            source: StreamSource::Once(Mutex::new(Some(reader))),
            skipped: Arc::new(Mutex::new((0, None))),
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The stream, moved to the consumer. A topic's stream reads the topic again on every
    /// call (DuckDB asks twice: for the schema, then for the rows).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        // A requested schema is a hint the producer may ignore (the consumer casts).
        let _ = requested_schema;
        let reader: Box<dyn arrow_array::RecordBatchReader + Send> = match &self.source {
            StreamSource::Once(r) => r
                .lock()
                .ok()
                .and_then(|mut r| r.take())
                .ok_or_else(|| Error::new_err("this Arrow stream was already read"))?,
            StreamSource::Topic {
                bag,
                topic,
                fields,
                start_ns,
                end_ns,
            } => {
                let tb = py
                    .detach(|| {
                        bagscope_ops::tables::arrow::TopicBatches::new(
                            bag,
                            topic,
                            fields.as_deref(),
                            *start_ns,
                            *end_ns,
                        )
                    })
                    .map_err(to_py)?;
                Box::new(Counted {
                    inner: tb,
                    skipped: self.skipped.clone(),
                })
            }
        };
        let stream = arrow_array::ffi_stream::FFI_ArrowArrayStream::new(reader);
        pyo3::types::PyCapsule::new(py, stream, Some(c"arrow_array_stream".to_owned()))
    }

    /// The schema, without reading a message.
    fn __arrow_c_schema__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        let schema = match &self.source {
            StreamSource::Once(r) => r
                .lock()
                .ok()
                .and_then(|r| r.as_ref().map(|r| r.schema()))
                .ok_or_else(|| Error::new_err("this Arrow stream was already read"))?,
            StreamSource::Topic {
                bag, topic, fields, ..
            } => py
                .detach(|| bagscope_ops::tables::arrow::topic_schema(bag, topic, fields.as_deref()))
                .map_err(to_py)?,
        };
        let ffi = arrow_schema::ffi::FFI_ArrowSchema::try_from(schema.as_ref())
            .map_err(|e| Error::new_err(e.to_string()))?;
        pyo3::types::PyCapsule::new(py, ffi, Some(c"arrow_schema".to_owned()))
    }

    /// Messages that did not decode and were left out by the last read so far, and the first
    /// one's error.
    #[getter]
    fn skipped(&self) -> (usize, Option<String>) {
        self.skipped.lock().map(|s| s.clone()).unwrap_or((0, None))
    }
}
