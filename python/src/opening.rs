//! `bagscope.open`: one recording, or several on one timeline.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use bagscope_reader::Bag;

use super::errors::to_py;
use super::Recording;

/// Paths from a `str`/`PathLike` or a list of them.
pub(super) fn paths_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = obj.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    let v: Vec<PathBuf> = obj.extract()?;
    Ok(v)
}

/// Opens a recording: a ROS 1 bag, an MCAP file, a rosbag2 directory, its `metadata.yaml` or a
/// storage file, local or at an `s3://`, `gs://`, `az://` or `http(s)://` location (read by
/// ranges; credentials from each cloud's environment); a list of them opens several on one timeline (split parts joined, others
/// merged in time order), as the app does. `msg_path`: a directory or a list of directories of
/// ROS packages searched for definitions a recording does not store (as `--msg-path`; set for
/// the process).
/// `keep_topic_names`: several recordings keep their topics' names (one topic's connections of
/// every recording under its one name, as rosbags' `AnyReader` has them) instead of each
/// recording's topics under a namespace named after its file.
/// `offsets_ns`: with several recordings, the nanoseconds added to each one's times (to compare
/// runs from one start, as the app's offsets do).
/// `threads`: how many threads a read may use (default: the machine's cores, at most 8; 1: all
/// of it on the calling thread, for a process that runs its own pool of readers).
#[pyfunction]
#[pyo3(signature = (path_or_paths, msg_path=None, *, keep_topic_names=false, offsets_ns=None, threads=None))]
pub(super) fn open(
    py: Python<'_>,
    path_or_paths: &Bound<'_, PyAny>,
    msg_path: Option<&Bound<'_, PyAny>>,
    keep_topic_names: bool,
    offsets_ns: Option<Vec<i64>>,
    threads: Option<usize>,
) -> PyResult<Recording> {
    let paths = paths_of(path_or_paths)?;
    let mut parts = bagscope_reader::bag::merge::parts_of(&paths);
    if let Some(offs) = offsets_ns {
        if offs.len() != parts.len() {
            return Err(PyValueError::new_err(format!(
                "offsets_ns: {} offsets for {} recordings",
                offs.len(),
                parts.len()
            )));
        }
        for (p, o) in parts.iter_mut().zip(offs) {
            p.offset_ns = o;
        }
    }
    // The search path is this recording's option, not the process's.
    let mut opts = match msg_path {
        Some(m) => bagscope_reader::OpenOptions::default().with_msg_path(paths_of(m)?),
        None => bagscope_reader::OpenOptions::default(),
    };
    match threads {
        Some(0) => return Err(PyValueError::new_err("threads: at least 1")),
        Some(n) => opts = opts.with_threads(n),
        None => {}
    }
    let bag = py
        .detach(|| {
            if paths.len() == 1 && parts[0].offset_ns == 0 {
                Bag::open_with(&paths[0], &opts)
            } else {
                let naming = if keep_topic_names {
                    bagscope_reader::bag::merge::TopicNames::Kept
                } else {
                    bagscope_reader::bag::merge::TopicNames::ByRecording
                };
                Bag::open_many_with(&parts, naming, &opts)
            }
        })
        .map_err(to_py)?;
    Ok(Recording {
        bag: Some(bag),
        classes: None,
    })
}
