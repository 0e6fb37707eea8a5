//! `Recording.frames`: a video topic's frames (H.264, H.265) decoded in-process, as numpy
//! arrays in display order.

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;

use bagscope_ops::media::video::{Shown, Video, VideoIndex, DEFAULT_BUDGET};
use bagscope_reader::Bag;

use crate::Error;

/// An iterator of `(time_ns, frame)`: each frame an `(height, width, 3)` uint8 RGB array, by
/// the stream's colour description (BT.601/BT.709/BT.2020, limited or full range; 10-bit shown
/// 8-bit). Frames before the first keyframe are left out; one that cannot be decoded raises
/// `bagscope.Error` naming the topic, time and codec.
#[pyclass(module = "bagscope")]
pub struct Frames {
    bag: Bag,
    video: Mutex<Video>,
    next: Mutex<usize>,
    end: usize,
}

impl Frames {
    /// The frames of `topic` shown from `start_ns` (inclusive) to `end_ns` (exclusive).
    pub fn open(
        bag: Bag,
        topic: &str,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> bagscope_ops::Result<Frames> {
        let ix = Arc::new(VideoIndex::build(&bag, topic, None)?);
        let time = |n: usize| ix.time_of(n).unwrap_or(u64::MAX);
        let first = start_ns.map_or(0, |s| {
            (0..ix.frames.len())
                .find(|&n| time(n) >= s)
                .unwrap_or(ix.frames.len())
        });
        let end = end_ns.map_or(ix.frames.len(), |e| {
            (0..ix.frames.len())
                .find(|&n| time(n) >= e)
                .unwrap_or(ix.frames.len())
        });
        Ok(Frames {
            bag,
            video: Mutex::new(Video::new(ix, DEFAULT_BUDGET)),
            next: Mutex::new(first),
            end,
        })
    }
}

#[pymethods]
impl Frames {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<(u64, Bound<'py, PyAny>)>> {
        // Held while a frame is decoded with the GIL let go: another Python thread asking this
        // iterator waits for them likewise, never holding the GIL.
        let mut next = self
            .next
            .lock_py_attached(py)
            .map_err(|_| Error::new_err("frames: poisoned"))?;
        let mut video = self
            .video
            .lock_py_attached(py)
            .map_err(|_| Error::new_err("frames: poisoned"))?;
        while *next < self.end {
            let n = *next;
            *next += 1;
            let v: &mut Video = &mut video;
            let shown = py.detach(|| v.frame(&self.bag, n));
            let t = video.index.time_of(n).unwrap_or(0);
            match shown {
                Shown::Waiting => continue,
                Shown::Lost(why) => return Err(Error::new_err(why)),
                Shown::Frame(f) => {
                    let rgb: Vec<u8> = py.detach(|| {
                        f.to_rgba()
                            .chunks_exact(4)
                            .flat_map(|p| [p[0], p[1], p[2]])
                            .collect()
                    });
                    let a = PyArray1::from_vec(py, rgb).reshape([f.height, f.width, 3])?;
                    return Ok(Some((t, a.into_any())));
                }
            }
        }
        Ok(None)
    }

    /// How many frames the topic has in all.
    #[getter]
    fn total(&self, py: Python<'_>) -> PyResult<usize> {
        let video = self
            .video
            .lock_py_attached(py)
            .map_err(|_| Error::new_err("frames: poisoned"))?;
        Ok(video.index.frames.len())
    }
}
