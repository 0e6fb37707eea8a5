//! Expectations from Python: one recording checked against a rules file, as the rows of the
//! `expectations` table `bagscope catalog --expect` writes (the Dask reader builds a fleet's
//! table from them, one recording a partition).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bagscope_ops::reports::expect::Rules;
use bagscope_ops::tables::catalog::expect::check_recording;

fn read_rules(rules: &std::path::Path) -> PyResult<Rules> {
    let name = rules.display().to_string();
    let text = std::fs::read_to_string(rules)
        .map_err(|e| PyValueError::new_err(format!("{name}: cannot read: {e}")))?;
    Rules::parse(&text).map_err(|e| PyValueError::new_err(e.at(&name)))
}

/// Parses a rules file: `ValueError` naming its line where it does not parse.
#[pyfunction]
pub fn _check_rules(rules: std::path::PathBuf) -> PyResult<()> {
    read_rules(&rules).map(|_| ())
}

/// Checks `recording` against the rules file `rules` (docs/expectations.md): one dict per
/// rule with the `expectations` table's columns (`recording, check, topic, status, measured,
/// expected, start_ns, end_ns, detail, line`). A rules file that does not parse raises
/// ``ValueError`` naming its line; a recording that does not open, or whose types lack a
/// condition's field, is a failed row (`check` `open` or `rules`), as in a fleet's table.
#[pyfunction]
#[pyo3(signature = (recording, rules, threads=None))]
pub fn expect<'py>(
    py: Python<'py>,
    recording: std::path::PathBuf,
    rules: std::path::PathBuf,
    threads: Option<usize>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let name = rules.display().to_string();
    let parsed = read_rules(&rules)?;
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let report = py.detach(|| check_recording(&recording, &parsed, &name, threads));
    let mut rows = Vec::with_capacity(report.outcomes.len());
    for o in &report.outcomes {
        let d = PyDict::new(py);
        d.set_item("recording", &report.recording)?;
        d.set_item("check", o.check)?;
        d.set_item("topic", &o.topic)?;
        d.set_item("status", o.status.name())?;
        d.set_item("measured", o.measured.filter(|x| x.is_finite()))?;
        d.set_item("expected", &o.expected)?;
        d.set_item("start_ns", o.range.map(|r| r.0))?;
        d.set_item("end_ns", o.range.map(|r| r.1))?;
        d.set_item("detail", &o.detail)?;
        d.set_item("line", o.line)?;
        rows.push(d);
    }
    Ok(rows)
}

/// Adds the functions to the module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(expect, m)?)?;
    m.add_function(wrap_pyfunction!(_check_rules, m)?)
}
