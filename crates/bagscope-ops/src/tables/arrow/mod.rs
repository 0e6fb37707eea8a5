//! A topic's messages as Arrow record batches: `time_ns` and the message's fields as typed,
//! nested columns built from its definition, for every encoding the library decodes (ROS 1,
//! CDR, protobuf, JSON).
//!
//! The schema depends on the definition alone (and the fields chosen), so tables of one type
//! from different recordings concatenate:
//!
//! | definition | Arrow |
//! |---|---|
//! | `bool`, `int8` … `uint64`, `float32`, `float64` | `Boolean`, `Int8` … `UInt64`, `Float32`, `Float64` |
//! | `string` | `Utf8` (bytes that are not UTF-8 escaped `\xNN`, as `echo` prints them) |
//! | `time`, `duration` (ROS 1) | `Timestamp(ns)`, `Duration(ns)` |
//! | a message | `Struct` of its fields (a type with no fields is left out) |
//! | `T[]`, `T[N]` | `List<T>`, `FixedSizeList<T, N>` |
//! | `uint8[]`, `uint8[N]` | `Binary`, `FixedSizeBinary(N)` |
//!
//! Nothing is nullable: every message has every field (protobuf and JSON fill defaults). Rows
//! come in time order, in batches of bounded size ([`BATCH_ROWS`], [`BATCH_BYTES`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{ArrowError, DataType, Field as AField, Schema, SchemaRef};

use bagscope_reader::definition::msg::{FieldType, MsgDef};
use bagscope_reader::encoding::{Plan, Value};
use bagscope_reader::error::Error;
use bagscope_reader::{Bag, Filter};

mod column;

use column::Col;

/// Rows of a batch at most.
pub const BATCH_ROWS: usize = 1 << 16;
/// Message bytes a batch holds at most (a batch always holds at least one message), which also
/// keeps every 32-bit offset of a batch in range.
pub const BATCH_BYTES: usize = 256 << 20;

/// Which fields of a type become columns: all of them, or some (by index in the type), each
/// with what of it is chosen.
#[derive(Debug, Clone)]
enum Choice {
    All,
    Some(Vec<(usize, Choice)>),
}

impl Choice {
    /// The choice of dotted field paths (`header.stamp`, `linear_acceleration`) in type `ty`.
    fn of_paths(def: &MsgDef, ty: usize, paths: &[String]) -> Result<Choice, Error> {
        let mut c = Choice::Some(Vec::new());
        for p in paths {
            let parts: Vec<&str> = p.split('.').collect();
            if parts.iter().any(|s| s.is_empty()) {
                return Err(Error::Invalid(format!("field {p:?}: an empty name")));
            }
            c.add(def, ty, &parts, p)?;
        }
        Ok(c)
    }

    fn add(&mut self, def: &MsgDef, ty: usize, parts: &[&str], whole: &str) -> Result<(), Error> {
        let Choice::Some(chosen) = self else {
            return Ok(());
        };
        let Some((first, rest)) = parts.split_first() else {
            *self = Choice::All;
            return Ok(());
        };
        let fields = &def.types[ty].fields;
        let i = fields
            .iter()
            .position(|f| f.name == *first)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "field {whole:?}: {} has no field {first:?} (it has {})",
                    def.types[ty].name,
                    fields
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        let sub = match chosen.iter().position(|(j, _)| *j == i) {
            Some(k) => &mut chosen[k].1,
            None => {
                chosen.push((i, Choice::Some(Vec::new())));
                let k = chosen.len() - 1;
                &mut chosen[k].1
            }
        };
        match fields[i].ty {
            FieldType::Message(j) => sub.add(def, j, rest, whole),
            FieldType::Primitive(_) if rest.is_empty() => {
                *sub = Choice::All;
                Ok(())
            }
            FieldType::Primitive(_) => Err(Error::NotFound(format!(
                "field {whole:?}: {first} is not a message"
            ))),
        }
    }

    /// The chosen fields of type `ty`, in the definition's order.
    fn fields(&self, def: &MsgDef, ty: usize) -> Vec<(usize, Choice)> {
        match self {
            Choice::All => (0..def.types[ty].fields.len())
                .map(|i| (i, Choice::All))
                .collect(),
            Choice::Some(v) => {
                let mut v = v.clone();
                v.sort_by_key(|(i, _)| *i);
                v
            }
        }
    }
}

/// Fills record batches of one message type: `time_ns` and the chosen fields.
#[derive(Debug)]
pub struct BatchBuilder {
    schema: SchemaRef,
    time: Vec<i64>,
    root: Col,
    bytes: usize,
}

impl BatchBuilder {
    /// A builder for messages of `plan`'s type, every field or those of `fields` (dotted
    /// paths from the message: `header.stamp`, `linear_acceleration`).
    pub fn new(plan: &Plan, fields: Option<&[String]>) -> Result<BatchBuilder, Error> {
        let def = &plan.def;
        let choice = match fields {
            None => Choice::All,
            Some(paths) => Choice::of_paths(def, 0, paths)?,
        };
        let (fields, members) = Col::members(def, 0, &choice);
        // The time column's name, made unique if the message has a field of that name.
        let mut time_name = "time_ns".to_string();
        while fields.iter().any(|f| f.name() == &time_name) {
            time_name.push('_');
        }
        let mut all = vec![Arc::new(AField::new(time_name, DataType::Int64, false))];
        all.extend(fields.iter().cloned());
        let meta = HashMap::from([("bagscope.msgtype".to_string(), def.types[0].name.clone())]);
        Ok(BatchBuilder {
            schema: Arc::new(Schema::new_with_metadata(all, meta)),
            time: Vec::new(),
            root: Col::Struct {
                members,
                fields,
                len: 0,
            },
            bytes: 0,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows so far in the batch being filled.
    pub fn rows(&self) -> usize {
        self.time.len()
    }

    /// Whether the batch being filled has reached its bounds.
    pub fn full(&self) -> bool {
        self.time.len() >= BATCH_ROWS || self.bytes >= BATCH_BYTES
    }

    /// Appends a decoded message received at `time_ns`, `size` bytes as stored. An `Err` (a
    /// value that does not have the definition's shape) leaves the batch unusable.
    pub fn push(&mut self, time_ns: u64, msg: &Value, size: usize) -> Result<(), String> {
        self.root.push(msg)?;
        self.time.push(i64::try_from(time_ns).unwrap_or(i64::MAX));
        self.bytes += size;
        Ok(())
    }

    /// The rows so far as a batch; the builder starts again empty.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let rows = self.time.len();
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::new(
            ScalarBuffer::from(std::mem::take(&mut self.time)),
            None,
        ))];
        self.bytes = 0;
        let root = self.root.take()?;
        if let Some(s) = root.as_any().downcast_ref::<StructArray>() {
            columns.extend(s.columns().iter().cloned());
        }
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
    }
}

/// The messages of one topic as record batches, read as they are asked for (memory holds one
/// batch and the chunks being read).
pub struct TopicBatches {
    builder: BatchBuilder,
    plan: Arc<Plan>,
    it: bagscope_reader::bag::iter::Messages,
    /// Messages that did not decode, left out, and the first one's error.
    skipped: usize,
    first_skip: Option<String>,
    topic: String,
    done: bool,
}

impl std::fmt::Debug for TopicBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicBatches")
            .field("topic", &self.topic)
            .field("schema", &self.builder.schema)
            .finish_non_exhaustive()
    }
}

/// The connections of `topic` and the one definition they share.
fn topic_plan(bag: &Bag, topic: &str) -> Result<(Vec<usize>, Arc<Plan>), Error> {
    let conns = bag.connections_of_topics(&[topic])?;
    let mut plan: Option<(usize, Arc<Plan>)> = None;
    for &c in &conns {
        let (p, _) = bag.plan(c)?;
        match &plan {
            None => plan = Some((c, p)),
            Some((c0, p0)) if p0.def != p.def => {
                let s = bag.quick_summary();
                let name = |i: usize| {
                    s.connections
                        .get(i)
                        .map(|c| c.datatype.clone())
                        .unwrap_or_default()
                };
                return Err(Error::Invalid(format!(
                    "topic {topic} has connections of different definitions ({} in connection {c0}, {} in connection {c}): one table needs one",
                    name(*c0),
                    name(c)
                )));
            }
            Some(_) => {}
        }
    }
    match plan {
        Some((_, p)) => Ok((conns, p)),
        None => Err(Error::NotFound(format!(
            "no topic {topic:?} in the recording"
        ))),
    }
}

/// The schema of [`TopicBatches`] for `topic` and `fields`, without reading a message.
pub fn topic_schema(bag: &Bag, topic: &str, fields: Option<&[String]>) -> Result<SchemaRef, Error> {
    let (_, plan) = topic_plan(bag, topic)?;
    Ok(BatchBuilder::new(&plan, fields)?.schema())
}

impl TopicBatches {
    /// The messages of `topic` within `[start_ns, end_ns)`, every field or those of `fields`.
    /// Every connection of the topic must have the same definition.
    pub fn new(
        bag: &Bag,
        topic: &str,
        fields: Option<&[String]>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> Result<TopicBatches, Error> {
        let (conns, plan) = topic_plan(bag, topic)?;
        let builder = BatchBuilder::new(&plan, fields)?;
        let it = bag.messages(&Filter {
            connections: Some(conns),
            start_ns,
            end_ns,
        })?;
        Ok(TopicBatches {
            builder,
            plan,
            it,
            skipped: 0,
            first_skip: None,
            topic: topic.to_string(),
            done: false,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }

    /// Messages that did not decode and were left out, and the first one's error.
    pub fn skipped(&self) -> (usize, Option<&str>) {
        (self.skipped, self.first_skip.as_deref())
    }

    /// The next batch, `None` after the last.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>, Error> {
        if self.done {
            return Ok(None);
        }
        while !self.builder.full() {
            let Some(m) = self.it.next() else {
                self.done = true;
                break;
            };
            let m = m?;
            match self.plan.decode(&m.data) {
                Ok(node) => self.builder.push(m.time_ns, &node.value, m.data.len()).map_err(|e| {
                    Error::Invalid(format!(
                        "{} at {} ns: the decoded message does not have its definition's shape: {e}",
                        self.topic, m.time_ns
                    ))
                })?,
                Err(e) => {
                    self.skipped += 1;
                    if self.first_skip.is_none() {
                        self.first_skip =
                            Some(format!("{} at {} ns: {e}", self.topic, m.time_ns));
                    }
                }
            }
        }
        if self.done && self.builder.rows() == 0 {
            return Ok(None);
        }
        self.builder
            .finish()
            .map(Some)
            .map_err(|e| Error::Invalid(format!("{}: building the Arrow batch: {e}", self.topic)))
    }
}

impl Iterator for TopicBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl arrow_array::RecordBatchReader for TopicBatches {
    fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
