//! Why a message gives no image ([`ImageError`]).

use std::fmt;

use bagscope_reader::error::DecodeError;

/// Why a message gives no image: what kind of problem, in words that say which field or
/// which dimension.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ImageError {
    /// The message does not decode with its definition.
    Decode(DecodeError),
    /// A field the image needs is missing or out of range (`data`, `width`, `info.height`).
    Field {
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// Pixels bagscope does not read: an encoding, a bayer pattern, a compressed format.
    Unsupported(String),
    /// Dimensions that do not fit: empty, too large, or more than the data holds.
    Size(String),
    /// Compressed bytes the codec refuses, in its words.
    Codec(String),
    /// Pixels that do not encode (PNG, JPEG).
    Encode(String),
}

impl ImageError {
    /// A problem with `field`.
    pub fn field(field: &str, reason: impl Into<String>) -> ImageError {
        ImageError::Field {
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Decode(e) => write!(f, "{e}"),
            ImageError::Field { reason, .. } => f.write_str(reason),
            ImageError::Unsupported(s)
            | ImageError::Size(s)
            | ImageError::Codec(s)
            | ImageError::Encode(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for ImageError {}

impl From<DecodeError> for ImageError {
    fn from(e: DecodeError) -> Self {
        ImageError::Decode(e)
    }
}
