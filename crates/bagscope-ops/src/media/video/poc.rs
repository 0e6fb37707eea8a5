//! Each picture's place in display order, read from its slice header without decoding it
//! (its picture order count: H.264 8.2.1.1, H.265 8.3.1), whether a later picture may refer
//! to it (H.264 `nal_ref_idc` 0 and H.265 sub-layer non-reference pictures of the highest
//! sub-layer are disposable), and for H.265 the pictures it uses (the entries of its reference
//! picture set used by it, from the decoder's own header parser). A seek then decodes only
//! what the frame asked refers to ([`super::index`]'s `sparse`), as libavcodec's
//! `skip_frame=nonref` skips what nothing refers to, and places the pictures by their counts.
//!
//! What this does not follow (fields, H.264's `pic_order_cnt_type` 1, several pictures in one
//! packet, pictures not output) gives no order, and those groups are decoded whole. A count
//! read wrongly (an H.264 memory management operation 5 resets it, and is not read here)
//! cannot show a wrong frame: the seek checks that the decoder's own output order is the one
//! read here, and decodes the group whole when it is not.

use std::collections::HashMap;

use super::h264_refs::{ref_pps, Dpb, Head, RefPps};
use super::nal::{h264_sps_head, h264_type, h265_type, unescape, units, Bits, H264Sps};
use super::Codec;
use rusty_h265::bits::BitReader;
use rusty_h265::nal::NalHeader;
use rusty_h265::ps::{Pps, Sps};
use rusty_h265::slice::parse_slice_header;

/// A picture's place in display order and whether any picture refers to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// Its picture order count, counted on from the start of the recording (a decoder started
    /// at a keyframe may count from another origin; the order is the same).
    pub poc: i64,
    /// No other picture refers to it: a seek to another frame may skip it.
    pub disposable: bool,
}

/// Reads the packets of one stream in decoding order, keeping the parameter sets and the
/// previous count the next one is derived from.
#[derive(Debug, Default)]
pub(super) struct PocReader {
    h264_sps: HashMap<u32, H264Sps>,
    /// PPS id → SPS id, and what the reference fields of a slice header are read with.
    h264_pps: HashMap<u32, (u32, Option<RefPps>)>,
    /// The reference frames H.264 pictures' lists are built from.
    h264_dpb: Dpb,
    /// A slice of the packet's picture other than its first was seen: its lists are not read.
    h264_more_slices: bool,
    h265_sps: HashMap<u8, Sps>,
    h265_pps: HashMap<u8, Pps>,
    prev_msb: i64,
    prev_lsb: i64,
    /// Pictures read (an H.265 CRA that is the first starts a count of its own).
    pictures: u64,
}

/// The most significant part of a count from its least significant bits and the previous
/// picture's (8-4 of H.264, 8-1 of H.265).
fn msb(prev_msb: i64, prev_lsb: i64, lsb: i64, max: i64) -> i64 {
    if lsb < prev_lsb && prev_lsb - lsb >= max / 2 {
        prev_msb + max
    } else if lsb > prev_lsb && lsb - prev_lsb > max / 2 {
        prev_msb - max
    } else {
        prev_msb
    }
}

/// The first bytes of a unit's payload without emulation prevention: a slice header's first
/// fields are within them.
fn head(payload: &[u8], n: usize) -> Vec<u8> {
    unescape(&payload[..payload.len().min(n)])
}

impl PocReader {
    /// Reads one packet: the order of the picture it holds, or `None` (no picture, several,
    /// or one this does not follow); and the counts, relative to its own, of the pictures it
    /// refers to (H.265: its reference picture set's entries used by it; H.264: the entries
    /// of its reference lists, [`super::h264_refs`]).
    pub(super) fn packet(
        &mut self,
        codec: Codec,
        data: &[u8],
    ) -> (Option<Order>, Option<Vec<i32>>) {
        let mut found = (None, None);
        let mut pictures = 0;
        self.h264_more_slices = false;
        for u in units(data) {
            let first = match codec {
                Codec::H264 => self.h264_unit(u),
                Codec::H265 => self.h265_unit(u),
                Codec::Av1 => return (None, None),
            };
            if let Some(first) = first {
                pictures += 1;
                if pictures == 1 {
                    found = first;
                }
            }
        }
        if pictures == 1 {
            if self.h264_more_slices {
                // Each slice has lists of its own; only the first one's are read.
                found.1 = None;
            }
            found
        } else {
            (None, None)
        }
    }

    /// One H.264 unit: parameter sets are kept; the first slice of a picture gives
    /// `Some((order, uses))` (`Some((None, None))`: a picture whose order is not followed).
    #[allow(clippy::type_complexity)]
    fn h264_unit(&mut self, u: &[u8]) -> Option<(Option<Order>, Option<Vec<i32>>)> {
        let t = h264_type(u)?;
        match t {
            7 => {
                if let Some(sps) = h264_sps_head(&mut Bits::new(&unescape(&u[1..]))) {
                    self.h264_sps.insert(sps.id, sps);
                }
                None
            }
            8 => {
                let rbsp = head(&u[1..], 64);
                let mut r = Bits::new(&rbsp);
                if let (Some(pps), Some(sps)) = (r.ue(), r.ue()) {
                    self.h264_pps.insert(pps, (sps, ref_pps(&mut r)));
                }
                None
            }
            1 | 5 => {
                // Room for the reference lists' modifications and a weight table.
                let rbsp = head(&u[1..], 512);
                let mut r = Bits::new(&rbsp);
                if r.ue()? != 0 {
                    // Not the picture's first slice.
                    self.h264_more_slices = true;
                    return None;
                }
                let read = self.h264_slice(&mut r, t == 5, (u[0] >> 5) & 3 != 0);
                if read.is_none() {
                    // Not followed: neither are the references of the pictures after it.
                    self.h264_dpb.lose();
                }
                Some(read.map_or((None, None), |(o, uses)| (Some(o), uses)))
            }
            2..=4 => Some((None, None)),
            _ => None,
        }
    }

    fn h264_slice(
        &mut self,
        r: &mut Bits,
        idr: bool,
        reference: bool,
    ) -> Option<(Order, Option<Vec<i32>>)> {
        self.pictures += 1;
        let slice_type = r.ue()?;
        let (sps, pps) = *self.h264_pps.get(&r.ue()?)?;
        let sps = *self.h264_sps.get(&sps)?;
        if sps.separate_colour_plane {
            r.bits(2)?;
        }
        let frame_num = r.bits(sps.log2_max_frame_num)?;
        if !sps.frame_mbs_only && r.bit()? == 1 {
            return None; // a field
        }
        if idr {
            r.ue()?; // idr_pic_id
            self.prev_msb = 0;
            self.prev_lsb = 0;
        }
        let poc = match sps.poc_type {
            0 => {
                let lsb = i64::from(r.bits(sps.log2_max_poc_lsb)?);
                let m = msb(self.prev_msb, self.prev_lsb, lsb, 1 << sps.log2_max_poc_lsb);
                if reference {
                    (self.prev_msb, self.prev_lsb) = (m, lsb);
                }
                m + lsb
            }
            // Display order is decoding order.
            2 => self.pictures as i64,
            _ => return None,
        };
        let head = Head {
            slice_type,
            frame_num,
            idr,
            reference,
            poc,
        };
        let uses = self.h264_dpb.picture(r, &sps, pps.as_ref(), &head);
        let order = Order {
            poc,
            disposable: !reference,
        };
        Some((order, uses))
    }

    /// One H.265 unit, as [`PocReader::h264_unit`], with the picture's references. The slice
    /// header is read by the decoder's own parser (`rusty_h265::slice`), which derives the
    /// reference picture set as decoding does.
    #[allow(clippy::type_complexity)]
    fn h265_unit(&mut self, u: &[u8]) -> Option<(Option<Order>, Option<Vec<i32>>)> {
        let t = h265_type(u)?;
        match t {
            33 => {
                if let Ok(sps) = rusty_h265::ps::parse_sps(&unescape(&u[2..])) {
                    self.h265_sps.insert(sps.id, sps);
                }
                None
            }
            34 => {
                if let Ok(pps) = rusty_h265::ps::parse_pps(&unescape(&u[2..])) {
                    self.h265_pps.insert(pps.id, pps);
                }
                None
            }
            0..=9 | 16..=21 => {
                // Not the picture's first slice segment.
                if u.get(2).is_none_or(|b| b & 0x80 == 0) {
                    return None;
                }
                Some(
                    self.h265_slice(u, t)
                        .map_or((None, None), |(o, r)| (Some(o), r)),
                )
            }
            10..=15 | 22..=31 => Some((None, None)),
            _ => None,
        }
    }

    fn h265_slice(&mut self, u: &[u8], t: u8) -> Option<(Order, Option<Vec<i32>>)> {
        let first_picture = self.pictures == 0;
        self.pictures += 1;
        let nal = NalHeader::parse(u)?;
        // The header's fields lie in its first bytes; a long one (many entry points) is read
        // from the whole unit.
        let (sps_map, pps_map) = (&self.h265_sps, &self.h265_pps);
        let lookup = |id: u8| {
            let pps = pps_map.get(&id)?;
            Some((sps_map.get(&pps.sps_id)?, pps))
        };
        let header =
            |rbsp: &[u8]| parse_slice_header(&mut BitReader::new(rbsp), &nal, &lookup, None).ok();
        let sh =
            header(&unescape(&u[2..u.len().min(2048)])).or_else(|| header(&unescape(&u[2..])))?;
        let sps = lookup(sh.pps_id)?.0;
        if !sh.pic_output_flag {
            return None; // a picture that is not shown
        }
        if sps.log2_max_poc_lsb > 16 {
            return None;
        }
        let max = 1i64 << sps.log2_max_poc_lsb;
        let lsb = if t == 19 || t == 20 {
            0
        } else {
            i64::from(sh.poc_lsb)
        };
        // An IDR, a BLA, or a CRA a decoder starts at: the count starts again.
        let restart = (16..=20).contains(&t) || (t == 21 && first_picture);
        let m = if restart {
            0
        } else {
            msb(self.prev_msb, self.prev_lsb, lsb, max)
        };
        // Sub-layer non-reference pictures (even types up to 14).
        let slnr = t <= 14 && t.is_multiple_of(2);
        // The previous picture of temporal sub-layer 0 that is not RASL, RADL or SLNR.
        if nal.temporal_id == 0 && !(6..=9).contains(&t) && !slnr {
            (self.prev_msb, self.prev_lsb) = (m, lsb);
        }
        let order = Order {
            poc: m + lsb,
            disposable: slnr && nal.temporal_id == sps.max_sub_layers_minus1,
        };
        // Long-term references are not followed: such a picture keeps every reference.
        let uses = sh.long_term.is_empty().then(|| {
            let rps = &sh.st_rps;
            rps.neg
                .iter()
                .chain(&rps.pos)
                .filter(|r| r.1)
                .map(|r| r.0)
                .collect()
        });
        Some((order, uses))
    }
}
