//! The dataset's files: Parquet tables as LeRobot's `datasets`/pandas writers lay them out
//! (fixed-size lists for vectors, the tasks' index as pandas keeps it) and the JSON metadata,
//! each written under a temporary name and renamed into place.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    FixedSizeListBuilder, Float32Builder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};

use bagscope_reader::error::{Error, Result};

pub(super) fn arrow_err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("writing the dataset: {e}"))
}

/// Writes `batch` to `path` (its directory made), under a temporary name first.
pub(super) fn parquet(path: &Path, batch: &RecordBatch) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    crate::tables::catalog::table::write_parquet(path, batch.clone())
}

/// Writes `value` as pretty JSON to `path`, under a temporary name first.
pub(super) fn json(path: &Path, value: &serde_json::Value) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(arrow_err)?;
    bagscope_reader::storage::write_atomically(path, text.as_bytes()).map_err(Error::from)
}

/// A column of fixed-size float32 vectors (`datasets.Sequence(length=n, float32)`); of one
/// element, float32 scalars, as LeRobot takes a feature of shape (1,) (`datasets.Value`).
pub(super) fn vectors(rows: &[Vec<f64>], n: usize) -> ArrayRef {
    if n == 1 {
        return f32s(rows.iter().map(|r| r.first().copied().unwrap_or(f64::NAN)));
    }
    let mut b = FixedSizeListBuilder::new(Float32Builder::new(), n as i32);
    for r in rows {
        for &x in r {
            b.values().append_value(x as f32);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A column of float32 scalars.
pub(super) fn f32s(v: impl Iterator<Item = f64>) -> ArrayRef {
    let mut b = Float32Builder::new();
    for x in v {
        b.append_value(x as f32);
    }
    Arc::new(b.finish())
}

/// A column of float64 scalars.
pub(super) fn f64s(v: impl Iterator<Item = f64>) -> ArrayRef {
    let mut b = Float64Builder::new();
    for x in v {
        b.append_value(x);
    }
    Arc::new(b.finish())
}

/// A column of int64 scalars.
pub(super) fn i64s(v: impl Iterator<Item = i64>) -> ArrayRef {
    let mut b = Int64Builder::new();
    for x in v {
        b.append_value(x);
    }
    Arc::new(b.finish())
}

/// A column of lists of strings.
pub(super) fn string_lists(v: &[Vec<String>]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for l in v {
        for s in l {
            b.values().append_value(s);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A column of lists of float64 (a statistic of a vector feature).
pub(super) fn f64_lists(v: &[Vec<f64>]) -> ArrayRef {
    let mut b = ListBuilder::new(Float64Builder::new());
    for l in v {
        for &x in l {
            b.values().append_value(x);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A column of (3,1,1) nested lists of float64 (a statistic of an image feature).
pub(super) fn f64_images(v: &[Vec<f64>]) -> ArrayRef {
    let mut b = ListBuilder::new(ListBuilder::new(ListBuilder::new(Float64Builder::new())));
    for l in v {
        for &x in l {
            b.values().values().values().append_value(x);
            b.values().values().append(true);
            b.values().append(true);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A column of lists of int64 (`count`).
pub(super) fn i64_lists(v: &[i64]) -> ArrayRef {
    let mut b = ListBuilder::new(Int64Builder::new());
    for &x in v {
        b.values().append_value(x);
        b.append(true);
    }
    Arc::new(b.finish())
}

/// `meta/tasks.parquet` as pandas writes `DataFrame({"task_index": …}, index=tasks)`: the
/// task strings are the frame's index (`__index_level_0__`, named in the pandas metadata).
pub(super) fn tasks(path: &Path, tasks: &[String]) -> Result<()> {
    let mut idx = StringBuilder::new();
    for t in tasks {
        idx.append_value(t);
    }
    let ti = i64s(0..tasks.len() as i64);
    let pandas = serde_json::json!({
        "index_columns": ["__index_level_0__"],
        "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode",
                            "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
             "numpy_type": "int64", "metadata": null},
            {"name": null, "field_name": "__index_level_0__", "pandas_type": "unicode",
             "numpy_type": "object", "metadata": null}
        ],
        "creator": {"library": "bagscope", "version": env!("CARGO_PKG_VERSION")},
        "pandas_version": "2.2.3"
    });
    let schema = Schema::new(vec![
        Field::new("task_index", arrow_schema::DataType::Int64, false),
        Field::new("__index_level_0__", arrow_schema::DataType::Utf8, false),
    ])
    .with_metadata(std::collections::HashMap::from([(
        "pandas".to_string(),
        pandas.to_string(),
    )]));
    let batch = RecordBatch::try_new(Arc::new(schema), vec![ti, Arc::new(idx.finish())])
        .map_err(arrow_err)?;
    parquet(path, &batch)
}
