//! The errors of the operations: the reader's [`bagscope_reader::Error`] wrapped whole, and the
//! kinds of problem that only an operation has (an image that does not come out of a message,
//! a transform lookup with no answer, a video stream that does not decode, an argument as typed
//! that does not parse).

use crate::media::image::ImageError;
use crate::media::video::VideoError;
use crate::spatial::geo::GeoError;
use crate::spatial::tf::TfError;
use crate::timefmt::ArgError;

/// Errors of the operations: each keeps its cause, so a caller can match on what went wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading, decoding or writing a recording failed.
    #[error(transparent)]
    Reader(#[from] bagscope_reader::Error),
    /// A message that gives no image.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A transform lookup with no answer.
    #[error(transparent)]
    Tf(#[from] TfError),
    /// A compressed video stream that cannot be indexed, decoded or written.
    #[error(transparent)]
    Video(#[from] VideoError),
    /// A GPS track that cannot be read.
    #[error(transparent)]
    Geo(#[from] GeoError),
    /// An argument as typed (a time, a query, a size) that does not parse.
    #[error(transparent)]
    Arg(#[from] ArgError),
}

/// Result with the operations' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What the reader's error carries whole converts through it (I/O, definitions, decoding,
/// paths, expressions, conversions).
macro_rules! through_reader {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::Reader(e.into())
            }
        }
    )*};
}

through_reader!(
    std::io::Error,
    bagscope_reader::error::DefError,
    bagscope_reader::error::DecodeError,
    bagscope_reader::error::PathError,
    bagscope_reader::error::ExprError,
    bagscope_reader::error::ConvertError
);
