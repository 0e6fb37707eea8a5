//! The errors of the live transports: the reader's [`bagscope_reader::Error`] wrapped whole
//! (the recording played or written), and what a live system did: a peer that refused, failed
//! or broke its protocol, a socket that failed, an option that cannot work.

/// Errors of playing, recording and serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the recording failed.
    #[error(transparent)]
    Reader(#[from] bagscope_reader::Error),
    /// A live system (a ROS master, node, publisher or DDS participant) that refused, failed or
    /// broke its protocol.
    #[error("{peer}: {reason}")]
    Live {
        /// Who: the master at an address, a publisher of a topic, ...
        peer: String,
        /// What went wrong.
        reason: String,
    },
    /// A socket or file of the transport failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An option or request that cannot work as given (a type with no definition, a topic
    /// that does not exist, a QoS that does not parse).
    #[error("{0}")]
    Invalid(String),
}

/// Result with the live transports' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
