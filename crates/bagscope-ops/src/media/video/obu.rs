//! AV1's low-overhead bitstream format (AV1 spec §5.3): a temporal unit is a run of OBUs, each
//! a header byte (type, extension flag, has-size flag), an optional extension byte, a LEB128
//! size and its payload. What the index needs of it: which packets hold a key frame (a frame
//! header of `frame_type` KEY_FRAME, shown, not a repeat of a frame shown before), and the
//! sequence header a decoder needs before the first key frame it is given.

use super::nal::{Bits, Kind};

/// OBU types (§6.2.2).
const SEQUENCE_HEADER: u8 = 1;
const TEMPORAL_DELIMITER: u8 = 2;
const FRAME_HEADER: u8 = 3;
const TILE_GROUP: u8 = 4;
const FRAME: u8 = 6;
const REDUNDANT_FRAME_HEADER: u8 = 7;

/// One OBU: its type, all its bytes (header included), and its payload.
pub struct Obu<'a> {
    /// `obu_type`.
    pub kind: u8,
    /// The whole OBU: header, extension, size and payload.
    pub bytes: &'a [u8],
    /// Its payload.
    pub payload: &'a [u8],
}

/// A LEB128 number at the start of `b` and its length (§4.10.5: at most 8 bytes).
fn leb128(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &x) in b.iter().take(8).enumerate() {
        v |= u64::from(x & 0x7F) << (7 * i);
        if x & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The OBUs of a temporal unit, in order; stops at the first that does not parse (a
/// forbidden bit set, a size past the end).
pub fn obus(data: &[u8]) -> Vec<Obu<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let h = data[at];
        if h & 0x80 != 0 {
            break;
        }
        let kind = (h >> 3) & 0x0F;
        let ext = h & 0x04 != 0;
        let has_size = h & 0x02 != 0;
        let mut p = at + 1 + usize::from(ext);
        let size = if has_size {
            let Some((n, len)) = data.get(p..).and_then(leb128) else {
                break;
            };
            p += len;
            match usize::try_from(n) {
                Ok(n) => n,
                Err(_) => break,
            }
        } else {
            // Without a size the OBU runs to the end of the unit.
            data.len().saturating_sub(p)
        };
        let Some(end) = p.checked_add(size).filter(|&e| e <= data.len()) else {
            break;
        };
        out.push(Obu {
            kind,
            bytes: &data[at..end],
            payload: &data[p..end],
        });
        at = end;
    }
    out
}

/// An OBU stream (ffmpeg's `-f obu`, a recorder's concatenated packets) cut into temporal
/// units at its temporal delimiters.
pub fn temporal_units(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let (mut start, mut at) = (0, 0);
    for o in obus(data) {
        if o.kind == TEMPORAL_DELIMITER && at > start {
            out.push(&data[start..at]);
            start = at;
        }
        at += o.bytes.len();
    }
    if data.len() > start {
        out.push(&data[start..]);
    }
    out
}

/// Whether a packet reads as an AV1 temporal unit: it starts with a temporal delimiter or a
/// sequence header (each with an empty or well-formed body) and every byte is in an OBU.
pub fn is_av1(data: &[u8]) -> bool {
    let o = obus(data);
    let whole: usize = o.iter().map(|x| x.bytes.len()).sum();
    o.first()
        .is_some_and(|f| matches!(f.kind, TEMPORAL_DELIMITER | SEQUENCE_HEADER))
        && o.first()
            .is_some_and(|f| f.kind != TEMPORAL_DELIMITER || f.payload.is_empty())
        && whole == data.len()
}

/// What a temporal unit holds: a key frame (`key` and `closed`: AV1 key frames refresh every
/// reference), and whether it holds a frame at all.
pub fn kind(data: &[u8]) -> Kind {
    let mut k = Kind::default();
    for o in obus(data) {
        match o.kind {
            FRAME_HEADER | FRAME => {
                k.picture = true;
                // uncompressed_header() of a sequence without reduced_still_picture_header:
                // show_existing_frame (1 bit), then frame_type (2 bits, 0: KEY_FRAME).
                if let Some(&b) = o.payload.first() {
                    if b & 0x80 == 0 && (b >> 5) & 0x03 == 0 {
                        k.key = true;
                        k.closed = true;
                    }
                }
            }
            TILE_GROUP | REDUNDANT_FRAME_HEADER => k.picture = true,
            _ => {}
        }
    }
    k
}

/// The sequence header OBU of a temporal unit, if it has one.
pub fn sequence_header(data: &[u8]) -> Option<&[u8]> {
    obus(data)
        .into_iter()
        .find(|o| o.kind == SEQUENCE_HEADER)
        .map(|o| o.bytes)
}

/// What a sequence header says (AV1 spec §5.5): what an MP4's `av1C` box repeats, the largest
/// frame, and how samples become RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SequenceHeader {
    /// `seq_profile` (0 Main, 1 High, 2 Professional).
    pub profile: u8,
    /// `seq_level_idx[0]`.
    pub level: u8,
    /// `seq_tier[0]`.
    pub tier: u8,
    /// 10 bits (or 12 with `twelve_bit`).
    pub high_bitdepth: bool,
    /// 12 bits (profile 2).
    pub twelve_bit: bool,
    /// Luma only.
    pub mono: bool,
    /// Chroma halved across, and down.
    pub subsampling: (bool, bool),
    /// Where 4:2:0 chroma sits (0 unknown, 1 vertical, 2 colocated).
    pub chroma_sample_position: u8,
    /// H.273 matrix coefficients (2: unspecified).
    pub matrix: u8,
    /// Full range (`color_range`).
    pub full_range: bool,
    /// The largest frame, pixels.
    pub max_size: (u32, u32),
}

/// Reads a sequence header OBU's payload; `None` where it does not parse.
pub fn parse_sequence_header(payload: &[u8]) -> Option<SequenceHeader> {
    let mut r = Bits::new(payload);
    let mut h = SequenceHeader {
        matrix: 2,
        ..Default::default()
    };
    h.profile = r.bits(3)? as u8;
    let _still_picture = r.bit()?;
    let reduced = r.bit()? == 1;
    let mut decoder_model_info = false;
    let mut buffer_delay_len = 0;
    if reduced {
        h.level = r.bits(5)? as u8;
    } else {
        if r.bit()? == 1 {
            // timing_info(): two 32-bit numbers, then equal_picture_interval and its uvlc.
            r.bits(32)?;
            r.bits(32)?;
            if r.bit()? == 1 {
                r.ue()?;
            }
            decoder_model_info = r.bit()? == 1;
            if decoder_model_info {
                buffer_delay_len = r.bits(5)? + 1;
                r.bits(32)?;
                r.bits(5)?;
                r.bits(5)?;
            }
        }
        let initial_display_delay = r.bit()? == 1;
        let points = r.bits(5)? + 1;
        for i in 0..points {
            let _idc = r.bits(12)?;
            let level = r.bits(5)? as u8;
            let tier = if level > 7 { r.bit()? as u8 } else { 0 };
            if i == 0 {
                (h.level, h.tier) = (level, tier);
            }
            if decoder_model_info && r.bit()? == 1 {
                r.bits(buffer_delay_len)?;
                r.bits(buffer_delay_len)?;
                r.bit()?;
            }
            if initial_display_delay && r.bit()? == 1 {
                r.bits(4)?;
            }
        }
    }
    let (wb, hb) = (r.bits(4)? + 1, r.bits(4)? + 1);
    h.max_size = (r.bits(wb)? + 1, r.bits(hb)? + 1);
    if !reduced && r.bit()? == 1 {
        r.bits(4)?;
        r.bits(3)?;
    }
    // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter.
    r.bits(3)?;
    if !reduced {
        // interintra, masked compound, warped motion, dual filter.
        r.bits(4)?;
        let order_hint = r.bit()? == 1;
        if order_hint {
            r.bits(2)?;
        }
        let force_screen_content = if r.bit()? == 1 { 2 } else { r.bit()? };
        if force_screen_content > 0 && r.bit()? == 0 {
            r.bit()?;
        }
        if order_hint {
            r.bits(3)?;
        }
    }
    // enable_superres, enable_cdef, enable_restoration; then color_config().
    r.bits(3)?;
    h.high_bitdepth = r.bit()? == 1;
    if h.profile == 2 && h.high_bitdepth {
        h.twelve_bit = r.bit()? == 1;
    }
    h.mono = h.profile != 1 && r.bit()? == 1;
    let (mut primaries, mut transfer) = (2, 2);
    if r.bit()? == 1 {
        primaries = r.bits(8)?;
        transfer = r.bits(8)?;
        h.matrix = r.bits(8)? as u8;
    }
    if h.mono {
        h.full_range = r.bit()? == 1;
        h.subsampling = (true, true);
        return Some(h);
    }
    if primaries == 1 && transfer == 13 && h.matrix == 0 {
        // sRGB: full range, no subsampling.
        h.full_range = true;
        return Some(h);
    }
    h.full_range = r.bit()? == 1;
    h.subsampling = match h.profile {
        0 => (true, true),
        1 => (false, false),
        _ if h.twelve_bit => {
            let x = r.bit()? == 1;
            (x, x && r.bit()? == 1)
        }
        _ => (true, false),
    };
    if h.subsampling == (true, true) {
        h.chroma_sample_position = r.bits(2)? as u8;
    }
    Some(h)
}

/// The `av1C` box's four bytes before its OBUs (AV1-ISOBMFF §2.3.3) for a sequence header.
pub fn av1c_head(h: &SequenceHeader) -> [u8; 4] {
    let b = |v: bool| u8::from(v);
    [
        0x81,
        (h.profile << 5) | (h.level & 0x1F),
        (h.tier << 7)
            | (b(h.high_bitdepth) << 6)
            | (b(h.twelve_bit) << 5)
            | (b(h.mono) << 4)
            | (b(h.subsampling.0) << 3)
            | (b(h.subsampling.1) << 2)
            | (h.chroma_sample_position & 3),
        0,
    ]
}

/// A temporal unit as an MP4 sample: its OBUs without the temporal delimiter (and without
/// padding), as AV1-ISOBMFF asks.
pub fn to_sample(data: &[u8]) -> Vec<u8> {
    obus(data)
        .into_iter()
        .filter(|o| !matches!(o.kind, TEMPORAL_DELIMITER | 15))
        .flat_map(|o| o.bytes.iter().copied())
        .collect()
}

/// `params` (a sequence header) put into the temporal unit `data`, after its temporal
/// delimiter (an OBU stream's first OBU of a unit).
pub fn with_sequence_header(params: &[u8], data: &[u8]) -> Vec<u8> {
    let td = obus(data)
        .first()
        .filter(|o| o.kind == TEMPORAL_DELIMITER)
        .map_or(0, |o| o.bytes.len());
    [&data[..td], params, &data[td..]].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse_and_key_frames_are_found() {
        // TD, a sequence header of 3 bytes, a frame whose header says KEY_FRAME, shown.
        let key = [0x12, 0x00, 0x0A, 0x03, 1, 2, 3, 0x32, 0x02, 0x10, 0xFF];
        assert!(is_av1(&key));
        let o = obus(&key);
        assert_eq!(o.iter().map(|x| x.kind).collect::<Vec<_>>(), [2, 1, 6]);
        let k = kind(&key);
        assert!(k.key && k.closed && k.picture);
        assert_eq!(sequence_header(&key), Some(&key[2..7]));
        // An inter frame (frame_type 1) and a shown existing frame are not keys.
        let inter = [0x12, 0x00, 0x32, 0x02, 0x30, 0x00];
        assert!(!kind(&inter).key && kind(&inter).picture);
        let shown = [0x12, 0x00, 0x1A, 0x01, 0x80];
        assert!(!kind(&shown).key);
        // The header goes in after the delimiter.
        let with = with_sequence_header(&key[2..7], &inter);
        assert_eq!(with[..2], [0x12, 0x00]);
        assert_eq!(with[2..7], key[2..7]);
        assert!(is_av1(&with));
        // Not AV1: Annex B, a size past the end, a forbidden bit, a long LEB128.
        assert!(!is_av1(&[0, 0, 0, 1, 0x67]));
        assert!(!is_av1(&[0x12, 0x00, 0x32, 0x09, 0x10]));
        assert!(!is_av1(&[0x92, 0x00]));
        assert!(!is_av1(&[
            0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01
        ]));
        assert!(obus(&[]).is_empty());
        // A stream of two units, cut at the delimiter.
        let two = [&key[..], &inter[..]].concat();
        assert_eq!(temporal_units(&two), [&key[..], &inter[..]]);
    }
}
