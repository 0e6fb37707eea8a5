//! Pictures: 2D annotations of images ([`annotate`]), camera, depth, map, scan and cloud messages to pixels ([`image`]), and compressed
//! video ([`video`]: H.264/H.265 packets, decoding, seeking, MP4).

pub mod annotate;
pub mod image;
pub mod video;
