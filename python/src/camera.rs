//! Camera models in Python: `bagscope.project_points` and `bagscope.undistort` in OpenCV's
//! argument order, and a recording's calibration as a `Camera` (`Recording.camera`).

use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray2, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use bagscope_ops::spatial::camera::rectify::Map;
use bagscope_ops::spatial::camera::{Camera as Model, Lens};
use bagscope_reader::Bag;

use super::errors::{ops_to_py, to_py, NotFoundError};

fn mat3(name: &str, v: Vec<f64>) -> PyResult<[f64; 9]> {
    <[f64; 9]>::try_from(v.as_slice())
        .map_err(|_| PyValueError::new_err(format!("{name} is 3×3 (9 numbers), not {}", v.len())))
}

fn lens(d: Vec<f64>, model: &str) -> PyResult<Lens> {
    let m = bagscope_ops::spatial::camera::Model::parse(model).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown model {model:?}: plumb_bob, rational_polynomial or equidistant"
        ))
    })?;
    Lens::new(m, &d).map_err(PyValueError::new_err)
}

/// Pixels (N×2) of points (N×3, the camera's frame) through `K` and the lens: what
/// `cv2.projectPoints(points, 0, 0, K, D)` (or `cv2.fisheye.projectPoints` for
/// `equidistant`) gives.
#[pyfunction]
#[pyo3(name = "_project_points")]
pub(super) fn project_points<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f64>,
    k: Vec<f64>,
    d: Vec<f64>,
    model: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let k = mat3("K", k)?;
    let lens = lens(d, model)?;
    let a = points.as_array();
    if a.ncols() != 3 {
        return Err(PyValueError::new_err(format!(
            "points are N×3, not N×{}",
            a.ncols()
        )));
    }
    let pts: Vec<[f64; 3]> = a.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
    let px = py.detach(|| bagscope_ops::spatial::camera::project_points(&pts, &k, &lens));
    let out = Array2::from_shape_fn((px.len(), 2), |(i, j)| px[i][j]);
    Ok(PyArray2::from_owned_array(py, out))
}

/// An image (H×W or H×W×C of uint8, C 1, 3 or 4) undistorted as `cv2.undistort` (or, with
/// `R`, `cv2.initUndistortRectifyMap` then `cv2.remap` with `INTER_LINEAR`) does it.
#[pyfunction]
#[pyo3(name = "_undistort")]
pub(super) fn undistort<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    k: Vec<f64>,
    d: Vec<f64>,
    model: &str,
    r: Vec<f64>,
    new_k: Vec<f64>,
) -> PyResult<Bound<'py, PyArrayDyn<u8>>> {
    let (k, r, new_k) = (mat3("K", k)?, mat3("R", r)?, mat3("new_K", new_k)?);
    let lens = lens(d, model)?;
    let a = image.as_array();
    let shape = a.shape().to_vec();
    let (h, w, c) = match shape.as_slice() {
        [h, w] => (*h, *w, 1),
        [h, w, c] if [1, 3, 4].contains(c) => (*h, *w, *c),
        _ => {
            return Err(PyValueError::new_err(format!(
                "an image is H×W or H×W×C (C 1, 3 or 4), not {shape:?}"
            )))
        }
    };
    let (w32, h32) = (
        u32::try_from(w).map_err(|_| PyValueError::new_err("too wide"))?,
        u32::try_from(h).map_err(|_| PyValueError::new_err("too high"))?,
    );
    let cam = Model::new(w32, h32, k, lens).map_err(PyValueError::new_err)?;
    let src: Vec<u8> = a.iter().copied().collect();
    let out = py.detach(|| {
        let map = Map::new(&cam, &r, &new_k, (w32, h32))?;
        Some(match c {
            1 => map.bilinear::<1>(&src, w32, h32),
            3 => map.bilinear::<3>(&src, w32, h32),
            _ => map.bilinear::<4>(&src, w32, h32),
        })
    });
    let out = out.ok_or_else(|| PyValueError::new_err("new_K · R is singular"))?;
    PyArray1::from_vec(py, out).reshape(shape)
}

/// A row-by-row matrix of `cols` columns as a numpy array.
fn matrix<'py>(py: Python<'py>, m: &[f64], cols: usize) -> Bound<'py, PyArray2<f64>> {
    let a = Array2::from_shape_fn((m.len() / cols, cols), |(i, j)| m[i * cols + j]);
    PyArray2::from_owned_array(py, a)
}

/// A camera's calibration, from a recording's `CameraInfo` or `foxglove.CameraCalibration`.
#[pyclass(module = "bagscope", frozen)]
pub(super) struct Camera {
    model: Model,
    time_ns: u64,
}

#[pymethods]
impl Camera {
    /// `K`, 3×3.
    #[getter(K)]
    fn k<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        matrix(py, &self.model.k, 3)
    }

    /// `P`, 3×4.
    #[getter(P)]
    fn p<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        matrix(py, &self.model.p, 4)
    }

    /// `R`, 3×3.
    #[getter(R)]
    fn r<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        matrix(py, &self.model.r, 3)
    }

    /// The distortion coefficients, as given (empty for an undistorted lens).
    #[getter(D)]
    fn d<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.model.lens.coefficients())
    }

    /// The lens model's name.
    #[getter]
    fn model(&self) -> &'static str {
        self.model.lens.model.name()
    }

    /// `(width, height)` as calibrated.
    #[getter]
    fn size(&self) -> (u32, u32) {
        (self.model.width, self.model.height)
    }

    /// The optical frame.
    #[getter]
    fn frame_id(&self) -> String {
        self.model.frame.clone()
    }

    /// The calibration message's receive time (ns).
    #[getter]
    fn time_ns(&self) -> u64 {
        self.time_ns
    }

    /// What was taken for a missing part (`P` or `R` not set).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.model.notes.clone()
    }

    /// Pixels (N×2; NaN behind the camera or beyond the calibrated field) of points (N×3, m,
    /// the optical frame) in the image as recorded, or with `rectified` in the rectified image
    /// (through `P`); binning and ROI applied.
    #[pyo3(signature = (points, rectified=false))]
    fn project<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        rectified: bool,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let a = points.as_array();
        if a.ncols() != 3 {
            return Err(PyValueError::new_err("points are N×3"));
        }
        let out = Array2::from_shape_fn((a.nrows(), 2), |(i, j)| {
            let r = a.row(i);
            self.model
                .project([r[0], r[1], r[2]], rectified)
                .map_or(f64::NAN, |p| p[j])
        });
        Ok(PyArray2::from_owned_array(py, out))
    }

    fn __repr__(&self) -> String {
        let (w, h) = (self.model.width, self.model.height);
        format!(
            "Camera({w}×{h} {} fx={:.3} fy={:.3} in {:?})",
            self.model.lens.model.name(),
            self.model.k[0],
            self.model.k[4],
            self.model.frame
        )
    }
}

/// The calibration on `topic` at or before `at_ns` (the first one where `None`).
pub(super) fn camera_at(bag: &Bag, topic: &str, at_ns: Option<u64>) -> PyResult<Camera> {
    let pick = bagscope_ops::spatial::camera::overlay::message_at_or_before(bag, topic, at_ns)
        .map_err(ops_to_py)?;
    let Some((conn, entry)) = pick else {
        return Err(NotFoundError::new_err(format!(
            "{topic} has no calibration at or before the time asked"
        )));
    };
    let time_ns = entry.time_ns;
    let (plan, _) = bag.plan(conn).map_err(|e| to_py(e.into()))?;
    let m = bag.message(conn, entry).map_err(to_py)?;
    let node = plan
        .decode(&m.data)
        .map_err(|e| PyValueError::new_err(format!("{topic} at {time_ns}: {e}")))?;
    let model = Model::from_message(&plan.def, &node)
        .map_err(|e| PyValueError::new_err(format!("{topic}'s calibration at {time_ns}: {e}")))?;
    Ok(Camera { model, time_ns })
}

/// Every annotation message of `topic` (ImageMarker, arrays of them, ImageAnnotations) in
/// `[start_ns, end_ns)`: per message its receive time, its stamp (-1 where none) and its
/// shapes, each a dict with its points as an `N×2` float32 array.
pub(super) fn annotations<'py>(
    py: Python<'py>,
    bag: &Bag,
    topic: &str,
    (start_ns, end_ns): (Option<u64>, Option<u64>),
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use bagscope_ops::media::annotate::{parse, Annotations, Kind};
    let conns = bag.connections_of_topics(&[topic]).map_err(to_py)?;
    let read = py.detach(|| {
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let mut out: Vec<(u64, Annotations)> = Vec::new();
        bagscope_ops::decoded::each_decoded(bag, conns, &cancel, |m, d| {
            let in_range =
                start_ns.is_none_or(|s| m.time_ns >= s) && end_ns.is_none_or(|e| m.time_ns < e);
            if let (true, Some((plan, node))) = (in_range, d) {
                out.push((m.time_ns, parse(&plan.def, node)));
            }
            Ok(std::ops::ControlFlow::Continue(()))
        })
        .map(|_| out)
    });
    let read = read.map_err(to_py)?;
    let d = pyo3::types::PyDict::new(py);
    let times: Vec<i64> = read
        .iter()
        .map(|(t, _)| i64::try_from(*t).unwrap_or(i64::MAX))
        .collect();
    let stamps: Vec<i64> = read
        .iter()
        .map(|(_, a)| a.stamp.map_or(-1, |s| i64::try_from(s).unwrap_or(i64::MAX)))
        .collect();
    d.set_item("time_ns", PyArray1::from_vec(py, times))?;
    d.set_item("stamp_ns", PyArray1::from_vec(py, stamps))?;
    let shapes = pyo3::types::PyList::empty(py);
    let notes = pyo3::types::PyList::empty(py);
    for (_, a) in &read {
        let per = pyo3::types::PyList::empty(py);
        for s in &a.shapes {
            let x = pyo3::types::PyDict::new(py);
            x.set_item(
                "kind",
                match s.kind {
                    Kind::Circle => "circle",
                    Kind::LineStrip => "line_strip",
                    Kind::LineLoop => "line_loop",
                    Kind::LineList => "line_list",
                    Kind::Polygon => "polygon",
                    Kind::Points => "points",
                    Kind::Text => "text",
                },
            )?;
            x.set_item("label", &s.label)?;
            let pts = Array2::from_shape_fn((s.points.len(), 2), |(i, j)| s.points[i][j]);
            x.set_item("points", PyArray2::from_owned_array(py, pts))?;
            // (As tuples of ints: a Vec<u8> would come as bytes.)
            let rgba = |c: [u8; 4]| (c[0], c[1], c[2], c[3]);
            x.set_item("color", rgba(s.color))?;
            x.set_item("fill", s.fill.map(rgba))?;
            x.set_item("thickness", s.thickness)?;
            x.set_item("radius", s.radius)?;
            x.set_item("text", &s.text)?;
            x.set_item("font_size", s.font_size)?;
            per.append(x)?;
        }
        shapes.append(per)?;
        notes.append(a.notes.clone())?;
    }
    d.set_item("shapes", shapes)?;
    d.set_item("notes", notes)?;
    Ok(d)
}
