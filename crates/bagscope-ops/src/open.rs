//! A recording opened as the app, the command line and the Python package see it: a file the
//! reader takes as it is, an MP4 file as the recording of its video tracks
//! ([`crate::media::video::mp4_read`]), and the virtual topics of message scripts beside it
//! ([`crate::script::message`]); what is made is made once, into a cache folder.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use bagscope_reader::{Bag, OpenOptions};

use crate::script::message::{self, MessageScript};
use crate::script::ScriptError;

/// Why [`open`] could not open a recording with its scripts.
#[derive(Debug, Clone)]
pub enum OpenError {
    /// The recording (or what is made of it) could not be read or written.
    Ops(crate::Error),
    /// Scripts that are wrong (before work) or failed while they ran.
    Scripts(Vec<ScriptError>),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Ops(e) => write!(f, "{e}"),
            OpenError::Scripts(v) => {
                let lines: Vec<String> = v.iter().map(ToString::to_string).collect();
                write!(f, "{}", lines.join("\n"))
            }
        }
    }
}

impl<E: Into<crate::Error>> From<E> for OpenError {
    fn from(e: E) -> Self {
        OpenError::Ops(e.into())
    }
}

/// Opens `path` with the virtual topics of `scripts`, what is made kept under `cache` (an MP4
/// file's recording, named by its path, size and time; the scripts' topics, named by those and
/// the scripts: made again when any changes). Returns the recording and what the scripts
/// printed.
pub fn open(
    path: &Path,
    scripts: &[MessageScript],
    opts: &OpenOptions,
    cache: &Path,
    cancel: &AtomicBool,
) -> Result<(Bag, Vec<String>), OpenError> {
    let converted;
    let path = if crate::media::video::mp4_read::is_mp4(path) {
        converted = crate::media::video::mp4_read::cached(path, cache)?;
        converted.as_path()
    } else {
        path
    };
    let bag = Bag::open_with(path, opts)?;
    message::with_scripts(bag, path, scripts, opts, cache, cancel)
}
