//! LeRobot datasets made on a cluster (`bagscope.dask.lerobot`): the mapping checked against
//! every recording on the driver, each recording's episodes made into a part on a worker, the
//! parts assembled into the dataset on the driver (`ops::tables::lerobot::parts`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bagscope_ops::script::message::MessageScript;
use bagscope_ops::tables::lerobot::{assemble_parts, check, make_part, Mapping};
use bagscope_reader::Bag;

use super::errors::to_py;

fn read_mapping(path: &Path) -> PyResult<(Mapping, String)> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| PyValueError::new_err(format!("{name}: cannot read: {e}")))?;
    let m = Mapping::parse(&text).map_err(|e| PyValueError::new_err(e.at(&name)))?;
    Ok((m, name))
}

/// The mapping (and its name) and the message scripts of `scripts`.
fn read_all(
    mapping: &Path,
    scripts: &[PathBuf],
) -> PyResult<(Mapping, String, Vec<MessageScript>)> {
    let (m, name) = read_mapping(mapping)?;
    Ok((m, name, super::scripts::message_scripts(scripts)?))
}

/// A recording opened with the virtual topics of `scripts` (made once into bagscope's cache).
fn open_with(p: &Path, scripts: &[MessageScript]) -> Result<Bag, String> {
    let cache = bagscope_ops::demo::cache_dir().join("virtual");
    bagscope_ops::open::open(
        p,
        scripts,
        &bagscope_reader::OpenOptions::default(),
        &cache,
        &AtomicBool::new(false),
    )
    .map(|(b, _)| b)
    .map_err(|e| e.to_string())
}

/// Parses the mapping file and checks it against every recording (opened with the virtual
/// topics of the message script files `scripts`), reading no message: ``ValueError`` naming
/// the mapping's line, or the recording that does not open.
#[pyfunction]
#[pyo3(signature = (recordings, mapping, scripts=Vec::new()))]
pub fn _lerobot_check(
    py: Python<'_>,
    recordings: Vec<PathBuf>,
    mapping: PathBuf,
    scripts: Vec<PathBuf>,
) -> PyResult<()> {
    let (m, name, scripts) = read_all(&mapping, &scripts)?;
    let with = |p: &Path| open_with(p, &scripts);
    py.detach(|| {
        check(
            &recordings,
            (&m, &name),
            (!scripts.is_empty()).then_some(&with as _),
        )
    })
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Makes the episodes of `recording` into the part directory `part` (a worker's task): the
/// episodes made. A recording or episode that fails is kept in the part as left out.
#[pyfunction]
#[pyo3(signature = (recording, mapping, part, threads=1, scripts=Vec::new()))]
pub fn _lerobot_part(
    py: Python<'_>,
    recording: PathBuf,
    mapping: PathBuf,
    part: PathBuf,
    threads: usize,
    scripts: Vec<PathBuf>,
) -> PyResult<usize> {
    let (m, name, scripts) = read_all(&mapping, &scripts)?;
    let with = |p: &Path| open_with(p, &scripts);
    py.detach(|| {
        make_part(
            &recording,
            (&m, &name),
            (!scripts.is_empty()).then_some(&with as _),
            &part,
            threads.max(1),
        )
    })
    .map_err(to_py)
}

/// Assembles the parts `parts`, in order, into the dataset at `out`: a dict of `episodes`,
/// `frames`, `dropped`, `filled` and `left_out` (each episode left out, and why).
#[pyfunction]
pub fn _lerobot_assemble<'py>(
    py: Python<'py>,
    parts: Vec<PathBuf>,
    mapping: PathBuf,
    out: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    let (m, _) = read_mapping(&mapping)?;
    let r = py
        .detach(|| assemble_parts(&parts, &m, &out))
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("episodes", r.episodes)?;
    d.set_item("frames", r.frames)?;
    d.set_item("dropped", r.dropped)?;
    d.set_item("filled", r.filled)?;
    d.set_item("left_out", r.left_out)?;
    Ok(d)
}

/// Adds the functions to the module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_lerobot_check, m)?)?;
    m.add_function(wrap_pyfunction!(_lerobot_part, m)?)?;
    m.add_function(wrap_pyfunction!(_lerobot_assemble, m)?)
}
