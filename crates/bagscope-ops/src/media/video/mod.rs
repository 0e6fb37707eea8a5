//! Compressed video: H.264 and H.265 camera streams out of `foxglove.CompressedVideo`
//! (protobuf, JSON, ROS 1, ROS 2), `ffmpeg_image_transport_msgs/FFMPEGPacket` and
//! `sensor_msgs/CompressedImage` messages whose bytes are an Annex B stream, and AV1 (a
//! temporal unit of OBUs a message, `format` `av1`: [`obu`]).
//!
//! A message is a packet, in decoding order. [`VideoIndex`] reads every packet's first NAL
//! unit headers (no decoding) into a keyframe table; [`Video`] decodes the group of pictures
//! a frame belongs to, from its keyframe, in-process through a [`FrameDecoder`], and keeps
//! the decoded frames around the last one asked in a bounded cache. With B-frames the
//! pictures come out of the decoder in display order; the N-th picture shown belongs to the
//! N-th packet's time (frame N of a topic is shown from its N-th message on).

mod av1;
mod decode;
pub mod encode;
mod h264_refs;
mod index;
pub mod mp4;
pub mod mp4_read;
pub mod nal;
pub mod obu;
mod packet;
mod poc;
pub mod proto;
mod yuv;

pub use decode::{decoder_for, FrameDecoder};
pub use index::{PacketReader, PacketRef, Shown, Video, VideoIndex, DEFAULT_BUDGET};
pub use packet::{is_video_type, packet_of, Packet};
pub use poc::Order;
pub use yuv::{Planes, Yuv};

/// A video codec bagscope decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// H.264 / AVC (Baseline, Main, High; B-frames).
    H264,
    /// H.265 / HEVC (Main, Main 10).
    H265,
    /// AV1 (Main profile, 8 and 10 bits; 4:2:0, 4:2:2, 4:4:4), decoded by rav1d.
    Av1,
}

impl Codec {
    /// Its usual name (`h264`, `h265`), as Foxglove's `format` field has it.
    pub fn name(self) -> &'static str {
        match self {
            Codec::H264 => "h264",
            Codec::H265 => "h265",
            Codec::Av1 => "av1",
        }
    }

    /// The codec a `format` or `encoding` string names (`h264`, `avc1`, `libx264`,
    /// `h264_nvenc`, `hevc`, `h265`, `libx265`, …), if one bagscope decodes.
    pub fn from_name(s: &str) -> Option<Codec> {
        let s = s.to_ascii_lowercase();
        if s.contains("264") || s.contains("avc") {
            Some(Codec::H264)
        } else if s.contains("265") || s.contains("hevc") {
            Some(Codec::H265)
        } else if s.contains("av1") || s.contains("av01") {
            Some(Codec::Av1)
        } else {
            None
        }
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a stream's Y'CbCr samples become R'G'B' (H.273's `matrix_coefficients` and
/// `video_full_range_flag`, as its sequence parameter set says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Colour {
    /// H.273 matrix coefficients: 1 BT.709, 5 or 6 BT.601, 9 BT.2020; anything else
    /// (unspecified) is read as BT.601, as ffmpeg does.
    pub matrix: u8,
    /// Full range (0-255) rather than limited (16-235, 16-240).
    pub full_range: bool,
}

impl Colour {
    /// The matrix's name.
    pub fn matrix_name(&self) -> &'static str {
        match self.matrix {
            1 => "BT.709",
            9 | 10 => "BT.2020",
            _ => "BT.601",
        }
    }
}

/// A video error: what failed, on which topic, at what time, with which codec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VideoError {
    /// The topic.
    pub topic: String,
    /// The packet's time (ns), where one is concerned.
    pub time_ns: Option<u64>,
    /// The codec, once known.
    pub codec: Option<Codec>,
    /// What went wrong.
    pub reason: String,
}

impl std::fmt::Display for VideoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.topic)?;
        if let Some(t) = self.time_ns {
            write!(f, " at {}", crate::timefmt::date(t))?;
        }
        if let Some(c) = self.codec {
            write!(f, " ({c})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for VideoError {}
