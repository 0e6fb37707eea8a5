//! A video packet out of a message: `foxglove.CompressedVideo` (`timestamp`, `frame_id`,
//! `data`, `format`), `ffmpeg_image_transport_msgs/FFMPEGPacket` (`header`, `encoding`,
//! `pts`, `flags`, `data`) and `sensor_msgs/CompressedImage` (`header`, `format`, `data`)
//! whose data is an Annex B stream. In JSON the data is base64, as Foxglove's schemas say.

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};

use super::{nal, Codec};

/// A packet: one access unit of a video stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    /// The Annex B bytes.
    pub data: Vec<u8>,
    /// The codec its `format`/`encoding` names, or its parameter sets show.
    pub codec: Option<Codec>,
    /// What the message says its format is.
    pub format: String,
    /// FFMPEGPacket's `pts`, where set.
    pub pts: Option<u64>,
}

/// Whether a type is a video stream by its name alone (a `CompressedImage` is one when its
/// bytes are Annex B, which [`packet_of`] tells).
pub fn is_video_type(datatype: &str) -> bool {
    let base = datatype.rsplit(['/', '.']).next().unwrap_or(datatype);
    matches!(base, "CompressedVideo" | "FFMPEGPacket")
}

/// The packet of a decoded message, or `None` when the message is not video (an image whose
/// bytes are a JPEG, say). VP8 and VP9 packets are video of a codec bagscope does not decode
/// (`codec` is `None`).
pub fn packet_of(def: &MsgDef, node: &Node) -> Option<Packet> {
    let field = |n: &str| node.field(def, n).map(|x| &x.value);
    // A raw image (`step`) whose first pixels are zeros is not a stream.
    if field("step").is_some() {
        return None;
    }
    let data = match field("data")? {
        Value::Bytes(b) => b.clone(),
        Value::String(s) => bagscope_reader::encoding::base64::decode(s)?,
        _ => return None,
    };
    let text = |n: &str| match field(n) {
        Some(Value::String(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    };
    let format = text("format")
        .or_else(|| text("encoding"))
        .unwrap_or_default();
    let av1 = !nal::is_annex_b(&data) && super::obu::is_av1(&data);
    if !nal::is_annex_b(&data) && !av1 {
        // A codec bagscope does not decode is still video (and said so by name).
        let f = format.to_ascii_lowercase();
        if !["av1", "vp9", "vp8", "av01"].iter().any(|c| f.contains(c)) {
            return None;
        }
    }
    let codec = Codec::from_name(&format)
        .or_else(|| nal::sniff(&data))
        .or(av1.then_some(Codec::Av1));
    let pts = match field("pts") {
        Some(Value::U64(v)) => Some(*v),
        Some(Value::I64(v)) => u64::try_from(*v).ok(),
        _ => None,
    };
    Some(Packet {
        data,
        codec,
        format,
        pts,
    })
}
