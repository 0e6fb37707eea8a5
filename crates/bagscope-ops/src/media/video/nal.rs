//! The bytes of a video packet read without decoding it: Annex B start codes, the NAL unit
//! types that say which codec it is and whether it starts a group of pictures, and the
//! colour description a sequence parameter set carries.

use super::{Codec, Colour};

/// Where each NAL unit of an Annex B byte stream lies: its start code's first byte, its first
/// byte after the start code, and its end.
fn spans(data: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    let mut i = 0;
    while i + 3 <= data.len() {
        if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
            // A 4-byte start code's leading zero (and trailing zeros) belong to neither unit.
            let mut sc = i;
            while sc > out.last().map_or(0, |l| l.1) && data[sc - 1] == 0 {
                sc -= 1;
            }
            if let Some(last) = out.last_mut() {
                last.2 = sc.max(last.1);
            }
            out.push((sc, i + 3, data.len()));
            i += 3;
        } else {
            i += 1;
        }
    }
    out
}

/// The NAL units of an Annex B byte stream, each without its start code.
pub fn units(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    spans(data).into_iter().map(move |(_, s, e)| &data[s..e])
}

/// An Annex B elementary stream cut into access units (one coded picture each, with the
/// parameter sets and SEI before it), as a muxer or a recorder would packetise it; an AV1 OBU
/// stream into its temporal units.
pub fn access_units(codec: Codec, data: &[u8]) -> Vec<&[u8]> {
    if codec == Codec::Av1 {
        return super::obu::temporal_units(data);
    }
    let mut cuts = Vec::new();
    let mut seen_vcl = false;
    for (sc, s, e) in spans(data) {
        let u = &data[s..e];
        let (vcl, starts_au, first_slice) = match codec {
            Codec::H264 => match h264_type(u) {
                Some(1..=5) => (true, false, u.get(1).is_some_and(|b| b & 0x80 != 0)),
                Some(6..=9 | 14..=18) => (false, true, false),
                _ => (false, false, false),
            },
            Codec::H265 => match h265_type(u) {
                Some(0..=31) => (true, false, u.get(2).is_some_and(|b| b & 0x80 != 0)),
                Some(32..=35 | 39 | 41..=44 | 48..=55) => (false, true, false),
                _ => (false, false, false),
            },
            Codec::Av1 => (false, false, false),
        };
        if seen_vcl && (starts_au || (vcl && first_slice)) {
            cuts.push(sc);
            seen_vcl = false;
        }
        seen_vcl |= vcl;
    }
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(&data[at..c]);
        at = c;
    }
    if at < data.len() {
        out.push(&data[at..]);
    }
    out
}

/// Whether a packet starts with an Annex B start code.
pub fn is_annex_b(data: &[u8]) -> bool {
    data.starts_with(&[0, 0, 1]) || data.starts_with(&[0, 0, 0, 1])
}

/// The H.264 NAL unit type of a unit's first byte.
pub(super) fn h264_type(u: &[u8]) -> Option<u8> {
    let b = *u.first()?;
    (b & 0x80 == 0).then_some(b & 0x1F)
}

/// The H.265 NAL unit type of a unit's two-byte header (layer 0 only).
pub(super) fn h265_type(u: &[u8]) -> Option<u8> {
    let (b0, b1) = (*u.first()?, *u.get(1)?);
    // forbidden_zero_bit, nuh_layer_id 0, nuh_temporal_id_plus1 ≥ 1.
    (b0 & 0x81 == 0 && b1 & 0xF8 == 0 && b1 & 0x07 != 0).then_some(b0 >> 1)
}

/// The codec of an Annex B packet, recognised from its parameter sets (a packet without
/// them says nothing).
pub fn sniff(data: &[u8]) -> Option<Codec> {
    for u in units(data) {
        // VPS, SPS, PPS of H.265 (0x40 0x01, 0x42 0x01, 0x44 0x01).
        if let Some(32..=34) = h265_type(u) {
            return Some(Codec::H265);
        }
        if h264_type(u) == Some(7) {
            // profile_idc of a real H.264 profile.
            if let Some(p) = u.get(1) {
                if matches!(
                    p,
                    66 | 77
                        | 88
                        | 100
                        | 110
                        | 122
                        | 244
                        | 44
                        | 83
                        | 86
                        | 118
                        | 128
                        | 138
                        | 139
                        | 134
                        | 135
                ) {
                    return Some(Codec::H264);
                }
            }
        }
    }
    None
}

/// What a packet's units say about its place in a group of pictures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kind {
    /// A picture decoding can start at: an H.264 IDR, an H.265 IRAP (IDR, CRA, BLA).
    pub key: bool,
    /// An H.265 IDR or BLA (no picture after it refers to one before it), or an H.264 IDR.
    pub closed: bool,
    /// An H.265 RASL picture: a leading picture that refers to pictures before its CRA.
    pub rasl: bool,
    /// The packet holds a coded picture at all.
    pub picture: bool,
}

/// Reads a packet's NAL unit types.
pub fn kind(codec: Codec, data: &[u8]) -> Kind {
    if codec == Codec::Av1 {
        return super::obu::kind(data);
    }
    let mut k = Kind::default();
    for u in units(data) {
        match codec {
            Codec::H264 => match h264_type(u) {
                Some(5) => {
                    k.key = true;
                    k.closed = true;
                    k.picture = true;
                }
                Some(1..=4) => k.picture = true,
                _ => {}
            },
            Codec::H265 => match h265_type(u) {
                Some(t @ 16..=21) => {
                    k.key = true;
                    // BLA (16-18) and IDR (19, 20); a CRA (21) may have RASL pictures.
                    k.closed |= t != 21;
                    k.picture = true;
                }
                Some(8 | 9) => {
                    k.rasl = true;
                    k.picture = true;
                }
                Some(0..=7) => k.picture = true,
                _ => {}
            },
            Codec::Av1 => {}
        }
    }
    k
}

/// A NAL unit's payload with the emulation prevention bytes (00 00 03) taken out.
pub fn unescape(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len());
    let mut zeros = 0;
    for &b in payload {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

/// An MSB-first bit reader over an RBSP, with Exp-Golomb codes.
pub(super) struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    /// A reader at the first bit of `data`.
    pub(super) fn new(data: &[u8]) -> Bits<'_> {
        Bits { data, pos: 0 }
    }
    pub(super) fn bit(&mut self) -> Option<u32> {
        let b = self.data.get(self.pos / 8)?;
        let v = (b >> (7 - self.pos % 8)) & 1;
        self.pos += 1;
        Some(u32::from(v))
    }
    pub(super) fn bits(&mut self, n: u32) -> Option<u32> {
        let mut v = 0;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Some(v)
    }
    pub(super) fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 31 {
                return None;
            }
        }
        Some((1u32 << zeros) - 1 + self.bits(zeros)?)
    }
    pub(super) fn se(&mut self) -> Option<i32> {
        let k = self.ue()?;
        Some(if k % 2 == 1 {
            (k / 2 + 1) as i32
        } else {
            -((k / 2) as i32)
        })
    }
}

/// What a sequence parameter set says that decoding and showing need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeqInfo {
    /// How its samples become RGB.
    pub colour: Colour,
    /// H.264's `max_num_reorder_frames` (VUI bitstream restriction; 0 for Baseline, which has
    /// no B-frames): how many pictures may wait for display. `None`: not said.
    pub reorder: Option<u32>,
}

/// The sequence parameter set of a packet, if it has one.
pub fn seq_info(codec: Codec, data: &[u8]) -> Option<SeqInfo> {
    if codec == Codec::Av1 {
        let sh = super::obu::sequence_header(data)?;
        let h = super::obu::obus(sh)
            .first()
            .and_then(|o| super::obu::parse_sequence_header(o.payload))?;
        return Some(SeqInfo {
            colour: super::Colour {
                matrix: h.matrix,
                full_range: h.full_range,
            },
            reorder: None,
        });
    }
    for u in units(data) {
        match codec {
            Codec::H264 if h264_type(u) == Some(7) => return h264_sps(&unescape(&u[1..])),
            Codec::H265 if h265_type(u) == Some(33) => {
                let rbsp = unescape(u.get(2..)?);
                let sps = rusty_h265::ps::parse_sps(&rbsp).ok()?;
                let vui = sps.vui.unwrap_or_default();
                return Some(SeqInfo {
                    colour: Colour {
                        matrix: vui.matrix_coeffs,
                        full_range: vui.video_full_range_flag,
                    },
                    reorder: None,
                });
            }
            _ => {}
        }
    }
    None
}

/// An H.264 VUI's `hrd_parameters()` (E.1.2), skipped.
fn skip_hrd(r: &mut Bits) -> Option<()> {
    let n = r.ue()?;
    if n > 31 {
        return None;
    }
    r.bits(8)?;
    for _ in 0..=n {
        r.ue()?;
        r.ue()?;
        r.bit()?;
    }
    r.bits(20)?;
    Some(())
}

/// What an H.264 SPS says before its frame cropping that a slice header is read with
/// (H.264 7.3.2.1.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct H264Sps {
    pub profile: u32,
    pub id: u32,
    pub separate_colour_plane: bool,
    pub log2_max_frame_num: u32,
    pub poc_type: u32,
    pub log2_max_poc_lsb: u32,
    pub frame_mbs_only: bool,
    /// `ChromaArrayType`: 0 monochrome (or colour planes coded apart), 1 4:2:0, 2, 3.
    pub chroma_array_type: u32,
    /// `max_num_ref_frames`: the sliding window's size.
    pub max_refs: u32,
}

/// An H.264 SPS read up to `frame_mbs_only_flag` (and `mb_adaptive_frame_field_flag`).
pub(super) fn h264_sps_head(r: &mut Bits) -> Option<H264Sps> {
    let mut h = H264Sps {
        profile: r.bits(8)?,
        chroma_array_type: 1,
        ..H264Sps::default()
    };
    r.bits(16)?; // constraint flags, level
    h.id = r.ue()?;
    if matches!(
        h.profile,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        let chroma = r.ue()?;
        if chroma == 3 {
            h.separate_colour_plane = r.bit()? == 1;
        }
        h.chroma_array_type = if h.separate_colour_plane { 0 } else { chroma };
        r.ue()?; // bit_depth_luma_minus8
        r.ue()?; // bit_depth_chroma_minus8
        r.bit()?; // qpprime_y_zero_transform_bypass_flag
        if r.bit()? == 1 {
            for i in 0..if chroma == 3 { 12 } else { 8 } {
                if r.bit()? == 1 {
                    let size = if i < 6 { 16 } else { 64 };
                    let (mut last, mut next) = (8i32, 8i32);
                    for _ in 0..size {
                        if next != 0 {
                            next = (last + r.se()? + 256) % 256;
                        }
                        if next != 0 {
                            last = next;
                        }
                    }
                }
            }
        }
    }
    h.log2_max_frame_num = r.ue()? + 4;
    h.poc_type = r.ue()?;
    match h.poc_type {
        0 => {
            h.log2_max_poc_lsb = r.ue()? + 4;
        }
        1 => {
            r.bit()?;
            r.se()?;
            r.se()?;
            let n = r.ue()?;
            if n > 255 {
                return None;
            }
            for _ in 0..n {
                r.se()?;
            }
        }
        _ => {}
    }
    h.max_refs = r.ue()?;
    r.bit()?; // gaps_in_frame_num_value_allowed_flag
    r.ue()?; // pic_width_in_mbs_minus1
    r.ue()?; // pic_height_in_map_units_minus1
    h.frame_mbs_only = r.bit()? == 1;
    if !h.frame_mbs_only {
        r.bit()?; // mb_adaptive_frame_field_flag
    }
    (h.log2_max_frame_num <= 16 && h.log2_max_poc_lsb <= 16).then_some(h)
}

/// `video_full_range_flag`, `matrix_coefficients` and `max_num_reorder_frames` of an H.264
/// SPS's VUI (H.264 7.3.2.1.1 and E.1.1); the defaults (limited range, unspecified matrix,
/// reordering not said) where it has none.
fn h264_sps(rbsp: &[u8]) -> Option<SeqInfo> {
    let mut r = Bits { data: rbsp, pos: 0 };
    let head = h264_sps_head(&mut r)?;
    let profile = head.profile;
    r.bit()?; // direct_8x8_inference_flag
    if r.bit()? == 1 {
        for _ in 0..4 {
            r.ue()?;
        }
    }
    let mut info = SeqInfo {
        reorder: (profile == 66).then_some(0),
        ..SeqInfo::default()
    };
    if r.bit()? == 0 {
        return Some(info);
    }
    if r.bit()? == 1 && r.bits(8)? == 255 {
        r.bits(32)?;
    }
    if r.bit()? == 1 {
        r.bit()?;
    }
    if r.bit()? == 1 {
        r.bits(3)?; // video_format
        info.colour.full_range = r.bit()? == 1;
        if r.bit()? == 1 {
            r.bits(16)?; // colour_primaries, transfer_characteristics
            info.colour.matrix = r.bits(8)? as u8;
        }
    }
    // What follows is only read for the reordering; a stream that ends early keeps the rest.
    let rest = (|| {
        if r.bit()? == 1 {
            r.ue()?;
            r.ue()?;
        }
        if r.bit()? == 1 {
            r.bits(32)?;
            r.bits(32)?;
            r.bit()?;
        }
        let nal_hrd = r.bit()? == 1;
        if nal_hrd {
            skip_hrd(&mut r)?;
        }
        let vcl_hrd = r.bit()? == 1;
        if vcl_hrd {
            skip_hrd(&mut r)?;
        }
        if nal_hrd || vcl_hrd {
            r.bit()?;
        }
        r.bit()?; // pic_struct_present_flag
        if r.bit()? == 1 {
            r.bit()?;
            for _ in 0..4 {
                r.ue()?;
            }
            return r.ue();
        }
        None
    })();
    if rest.is_some() {
        info.reorder = rest;
    }
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_split_on_three_and_four_byte_start_codes() {
        let s = [
            0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 4,
        ];
        let u: Vec<&[u8]> = units(&s).collect();
        assert_eq!(u, vec![&[0x67, 1, 2][..], &[0x68, 3], &[0x65, 4]]);
        assert_eq!(units(b"no start code").count(), 0);
    }

    #[test]
    fn codecs_and_keyframes_are_told_from_the_headers() {
        let h264_idr = [
            0, 0, 0, 1, 0x67, 100, 0, 0x1F, 0, 0, 1, 0x68, 0xEE, 0, 0, 1, 0x65, 0x88,
        ];
        assert_eq!(sniff(&h264_idr), Some(Codec::H264));
        let k = kind(Codec::H264, &h264_idr);
        assert!(k.key && k.closed && k.picture);
        let p = kind(Codec::H264, &[0, 0, 1, 0x41, 0x9A]);
        assert!(!p.key && p.picture);
        let h265_cra = [0, 0, 1, 0x40, 1, 0xC, 0, 0, 1, 0x2A, 1, 0xAF];
        assert_eq!(sniff(&h265_cra), Some(Codec::H265));
        let k = kind(Codec::H265, &h265_cra);
        assert!(k.key && !k.closed);
        assert!(kind(Codec::H265, &[0, 0, 1, 0x10, 1, 0]).rasl);
        assert_eq!(sniff(&[0, 0, 1, 0x41, 0x9A]), None);
    }

    #[test]
    fn access_units_start_at_parameter_sets_and_first_slices() {
        // SPS PPS IDR | P | SEI P(first slice) P(second slice) | P
        let s = [
            0, 0, 0, 1, 0x67, 100, 0, 0, 1, 0x68, 1, 0, 0, 1, 0x65, 0x88, 0, 0, 1, 0x41, 0x9A, 0,
            0, 1, 6, 5, 0, 0, 1, 0x41, 0x9A, 0, 0, 1, 0x41, 0x40, 0, 0, 1, 0x41, 0x9A,
        ];
        let aus = access_units(Codec::H264, &s);
        assert_eq!(aus.len(), 4, "{aus:?}");
        assert_eq!(aus[0].len(), 16);
        assert_eq!(
            aus[2],
            &[0, 0, 1, 6, 5, 0, 0, 1, 0x41, 0x9A, 0, 0, 1, 0x41, 0x40]
        );
        assert_eq!(aus.concat(), s);
    }

    #[test]
    fn emulation_prevention_is_removed() {
        assert_eq!(unescape(&[0, 0, 3, 1, 0, 0, 3, 0]), vec![0, 0, 1, 0, 0, 0]);
    }
}
