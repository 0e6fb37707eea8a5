//! The command line's error: what a verb failed on, from whichever crate said it, printed as
//! `bagscope: …` with exit status 2.

use std::path::PathBuf;

use bagscope_ops::media::image::ImageError;
use bagscope_ops::media::video::VideoError;
use bagscope_ops::spatial::tf::TfError;
use bagscope_ops::timefmt::ArgError;

/// Why a verb failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading, decoding or writing a recording.
    #[error(transparent)]
    Reader(#[from] bagscope_reader::Error),
    /// An operation (images, transforms, export, ...).
    #[error(transparent)]
    Ops(#[from] bagscope_ops::Error),
    /// Playing, recording or serving.
    #[error(transparent)]
    Live(#[from] bagscope_live::Error),
    /// A file of the command's own (an output) could not be written or read.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A file could not be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// What was opened.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Arguments that do not fit together, or that the recording cannot answer.
    #[error("{0}")]
    Invalid(String),
    /// A topic, message or frame asked for that the recording does not have.
    #[error("{0}")]
    NotFound(String),
}

/// The errors an operation or the reader carries whole convert through it.
macro_rules! through {
    ($via:ident: $($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::$via(e.into())
            }
        }
    )*};
}

through!(Ops: ArgError, ImageError, TfError, VideoError);
through!(
    Reader: bagscope_reader::error::DefError,
    bagscope_reader::error::DecodeError,
    bagscope_reader::error::PathError,
    bagscope_reader::error::ExprError,
    bagscope_reader::error::ConvertError
);

/// Result with the command line's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A write to a pipe whose reader has gone (`| head`).
    pub fn is_broken_pipe(&self) -> bool {
        let io = match self {
            Error::Io(e) => Some(e),
            Error::Reader(bagscope_reader::Error::Io(e))
            | Error::Ops(bagscope_ops::Error::Reader(bagscope_reader::Error::Io(e))) => Some(e),
            _ => None,
        };
        io.is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}
