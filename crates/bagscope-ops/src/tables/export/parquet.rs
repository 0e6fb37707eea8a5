//! Decoded Parquet: a directory with one Parquet file per topic (per topic and recording when
//! several recordings are given), each `time_ns`, a `recording` id and the message as the typed,
//! nested columns of [`crate::tables::arrow`] (the schema of the Python package's `to_arrow`);
//! zstd, row groups of at most [`crate::tables::arrow::BATCH_ROWS`] rows in time order.
//!
//! One pass over each recording: every message goes to its topic's builder, and a builder that
//! fills is written out as a row group, so memory holds one batch per topic. The directory is
//! built under a temporary name beside the target and renamed into place when every file is
//! closed; a topic without a definition, or whose connections disagree on it, is left out and
//! said so in the report.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field as AField, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as PqCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{ExportProgress, ExportReport, OutputFormat};
use crate::tables::arrow::{BatchBuilder, BATCH_ROWS};
use bagscope_reader::bag::{Bag, Filter};
use bagscope_reader::encoding::Plan;
use bagscope_reader::error::{Error, Result};

/// One topic's output file of one recording.
struct TopicOut {
    topic: String,
    path: PathBuf,
    plan: Arc<Plan>,
    builder: BatchBuilder,
    schema: SchemaRef,
    writer: Option<ArrowWriter<File>>,
    rows: u64,
    /// Messages that did not decode: how many, and the first one's error.
    undecoded: (u64, Option<String>),
}

impl TopicOut {
    /// Writes the rows built so far as a row group.
    fn flush(&mut self, recording: &str) -> Result<()> {
        if self.builder.rows() == 0 {
            return Ok(());
        }
        let batch = self
            .builder
            .finish()
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.topic)))?;
        let batch = with_recording(&self.schema, batch, recording)
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.topic)))?;
        let writer = match &mut self.writer {
            Some(w) => w,
            None => {
                let file = File::create(&self.path).map_err(|e| Error::Open {
                    path: self.path.clone(),
                    source: e,
                })?;
                let props = WriterProperties::builder()
                    .set_compression(PqCompression::ZSTD(ZstdLevel::default()))
                    .set_max_row_group_row_count(Some(BATCH_ROWS))
                    .build();
                self.writer.insert(
                    ArrowWriter::try_new(file, self.schema.clone(), Some(props))
                        .map_err(|e| parquet_err(&self.path, e))?,
                )
            }
        };
        self.rows += batch.num_rows() as u64;
        writer
            .write(&batch)
            .map_err(|e| parquet_err(&self.path, e))?;
        // Each batch its own row group, in time order.
        writer.flush().map_err(|e| parquet_err(&self.path, e))
    }

    fn close(mut self, recording: &str) -> Result<Option<(String, PathBuf, u64)>> {
        self.flush(recording)?;
        match self.writer.take() {
            Some(w) => {
                w.close().map_err(|e| parquet_err(&self.path, e))?;
                Ok(Some((self.topic, self.path, self.rows)))
            }
            None => Ok(None),
        }
    }
}

fn parquet_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("{}: writing Parquet: {e}", path.display()))
}

/// The schema of a topic's file: the builder's, with the `recording` column after the time,
/// and the topic in its metadata (`bagscope.topic`).
fn file_schema(builder: &SchemaRef, topic: &str) -> SchemaRef {
    let mut name = "recording".to_string();
    while builder.fields().iter().any(|f| f.name() == &name) {
        name.push('_');
    }
    let mut fields: Vec<Arc<AField>> = builder.fields().iter().cloned().collect();
    fields.insert(1, Arc::new(AField::new(name, DataType::Utf8, false)));
    let mut meta = builder.metadata().clone();
    meta.insert("bagscope.topic".to_string(), topic.to_string());
    Arc::new(Schema::new_with_metadata(fields, meta))
}

fn with_recording(
    schema: &SchemaRef,
    batch: RecordBatch,
    recording: &str,
) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    let ids: ArrayRef = Arc::new(StringArray::from(vec![recording; batch.num_rows()]));
    columns.insert(1, ids);
    RecordBatch::try_new(schema.clone(), columns)
}

/// A file name for a topic: `/imu/data` → `imu.data`, other characters than letters, digits,
/// `_`, `-` as `_`.
fn file_stem(topic: &str) -> String {
    let s: String = topic
        .trim_start_matches('/')
        .chars()
        .map(|c| match c {
            '/' => '.',
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => c,
            _ => '_',
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// The recordings' ids: their file or directory names, made unique.
fn recording_ids(bags: &[Bag]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for b in bags {
        let p = &b.summary().path;
        let base = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "recording".into());
        let mut id = base.clone();
        let mut k = 2;
        while ids.contains(&id) {
            id = format!("{base}~{k}");
            k += 1;
        }
        ids.push(id);
    }
    ids
}

/// The output files of one recording's topics (those of `topics`, or all), and the topics left
/// out with why.
fn plan_outputs(
    bag: &Bag,
    topics: Option<&[String]>,
    dir: &Path,
    suffix: Option<&str>,
    taken: &mut Vec<String>,
    skipped: &mut Vec<String>,
) -> Result<(Vec<TopicOut>, HashMap<usize, usize>)> {
    let s = bag.summary();
    let names: Vec<String> = match topics {
        Some(t) => t.to_vec(),
        None => s.topics.iter().map(|t| t.name.clone()).collect(),
    };
    let mut outs = Vec::new();
    let mut by_conn = HashMap::new();
    for name in names {
        let Some(topic) = s.topic(&name) else {
            // Topics are named from the first recording; another may not have one.
            skipped.push(format!("{name}: not in {}", s.path.display()));
            continue;
        };
        let mut plan: Option<Arc<Plan>> = None;
        let mut why = None;
        for &c in &topic.connections {
            match bag.plan(c) {
                Ok((p, _)) => match &plan {
                    Some(p0) if p0.def != p.def => {
                        why = Some("its connections have different definitions".to_string());
                    }
                    Some(_) => {}
                    None => plan = Some(p),
                },
                Err(e) => why = Some(e.to_string()),
            }
        }
        let plan = match (plan, why) {
            (Some(p), None) => p,
            (_, Some(w)) => {
                skipped.push(format!("{name} ({}): {w}", topic.datatype));
                continue;
            }
            (None, None) => continue,
        };
        let builder = BatchBuilder::new(&plan, None)?;
        let schema = file_schema(&builder.schema(), &name);
        let mut stem = file_stem(&name);
        if let Some(sfx) = suffix {
            stem = format!("{stem}.{}", file_stem(sfx));
        }
        let base = stem.clone();
        let mut k = 2;
        while taken.contains(&stem) {
            stem = format!("{base}~{k}");
            k += 1;
        }
        taken.push(stem.clone());
        for &c in &topic.connections {
            by_conn.insert(c, outs.len());
        }
        outs.push(TopicOut {
            topic: name,
            path: dir.join(format!("{stem}.parquet")),
            plan,
            builder,
            schema,
            writer: None,
            rows: 0,
            undecoded: (0, None),
        });
    }
    Ok((outs, by_conn))
}

/// Writes the messages of `topics` (all when `None`) within `[start_ns, end_ns)` of each
/// recording as decoded Parquet into the new directory `out`.
pub fn export_parquet(
    bags: &[Bag],
    out: &Path,
    topics: Option<&[String]>,
    filter: &Filter,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<ExportReport> {
    if out.exists() {
        return Err(Error::Invalid(format!(
            "{} exists: Parquet is written into a new directory",
            out.display()
        )));
    }
    let tmp = bagscope_reader::storage::output::temp_path_for(out);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| Error::Open {
        path: tmp.clone(),
        source: e,
    })?;
    let result = write_all(bags, &tmp, topics, filter, cancel, progress);
    let (files, messages, skipped, unconverted) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out)?;
    let file_size = files
        .iter()
        .filter_map(|(_, p, _)| {
            std::fs::metadata(out.join(p.file_name().unwrap_or_default()))
                .ok()
                .map(|m| m.len())
        })
        .sum();
    Ok(ExportReport {
        path: out.to_path_buf(),
        messages,
        connections: files.len(),
        file_size,
        format: OutputFormat::Parquet,
        skipped,
        notes: files
            .iter()
            .map(|(t, p, n)| {
                format!(
                    "{t}: {n} rows in {}",
                    p.file_name().unwrap_or_default().to_string_lossy()
                )
            })
            .collect(),
        unconverted,
    })
}

type Written = (Vec<(String, PathBuf, u64)>, u64, Vec<String>, Vec<String>);

fn write_all(
    bags: &[Bag],
    dir: &Path,
    topics: Option<&[String]>,
    filter: &Filter,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<Written> {
    let ids = recording_ids(bags);
    let several = bags.len() > 1;
    let mut taken = Vec::new();
    let mut skipped = Vec::new();
    let mut unconverted = Vec::new();
    let mut files = Vec::new();
    let mut p = ExportProgress::default();
    let mut plans = Vec::new();
    for (bag, id) in bags.iter().zip(&ids) {
        let suffix = several.then_some(id.as_str());
        let (outs, by_conn) = plan_outputs(bag, topics, dir, suffix, &mut taken, &mut skipped)?;
        let conns: Vec<usize> = by_conn.keys().copied().collect();
        let it = bag.messages(&Filter {
            connections: Some(conns),
            start_ns: filter.start_ns,
            end_ns: filter.end_ns,
        })?;
        p.total += it.total() as u64;
        plans.push((outs, by_conn, it));
    }
    for ((mut outs, by_conn, it), id) in plans.into_iter().zip(&ids) {
        for m in it {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let m = m?;
            let Some(&k) = by_conn.get(&m.conn) else {
                continue;
            };
            let o = &mut outs[k];
            match o.plan.decode(&m.data) {
                Ok(node) => {
                    o.builder
                        .push(m.time_ns, &node.value, m.data.len())
                        .map_err(|e| {
                            Error::Invalid(format!(
                                "{} at {} ns: the decoded message does not have its definition's shape: {e}",
                                o.topic, m.time_ns
                            ))
                        })?;
                    if o.builder.full() {
                        o.flush(id)?;
                    }
                }
                Err(e) => {
                    o.undecoded.0 += 1;
                    if o.undecoded.1.is_none() {
                        o.undecoded.1 =
                            Some(format!("at {}: {e}", crate::timefmt::date(m.time_ns)));
                    }
                }
            }
            p.messages += 1;
            p.bytes += m.data.len() as u64;
            if p.messages % 65_536 == 0 {
                progress(p);
            }
        }
        for o in outs {
            if let (n @ 1.., Some(first)) = &o.undecoded {
                unconverted.push(format!(
                    "{}: {n} message(s) did not decode and were left out, the first {first}",
                    o.topic
                ));
            }
            files.extend(o.close(id)?);
        }
    }
    progress(p);
    Ok((files, p.messages, skipped, unconverted))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn topic_file_names() {
        assert_eq!(file_stem("/imu/data"), "imu.data");
        assert_eq!(file_stem("AAA"), "AAA");
        assert_eq!(file_stem("/"), "_");
        assert_eq!(file_stem("/a b/c:d"), "a_b.c_d");
    }
}
