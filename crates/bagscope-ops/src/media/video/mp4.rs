//! A video topic's range as an MP4 file without re-encoding: the packets muxed as they are
//! (Annex B start codes turned into 4-byte lengths, the parameter sets moved into the sample
//! description, `avc1`/`hvc1`), from the keyframe at or before the range's start to the
//! keyframe after its end, so that every frame written decodes. Decoding times are the
//! messages' times; presentation times put the N-th frame shown at the N-th message's time
//! (the packets are decoded once to learn their display order; an edit list starts the
//! presentation at the first frame).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use bagscope_reader::Bag;

use super::index::{PacketReader, PacketRef, VideoIndex};
use super::{decoder_for, nal, Codec, VideoError};

/// Media time units a second.
const TIMESCALE: u64 = 90_000;

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mp4Written {
    /// Frames (samples).
    pub frames: usize,
    /// Of which keyframes.
    pub keyframes: usize,
    /// Frame size.
    pub width: usize,
    /// Frame size.
    pub height: usize,
    /// Bytes of the file.
    pub bytes: u64,
    /// The receive time of the first frame written: the file's time 0 (ns).
    pub first_ns: u64,
}

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut b = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    b.extend_from_slice(kind);
    b.extend_from_slice(body);
    b
}

fn full(kind: &[u8; 4], version: u8, flags: u32, body: &[u8]) -> Vec<u8> {
    let mut b = vec![version];
    b.extend_from_slice(&flags.to_be_bytes()[1..]);
    b.extend_from_slice(body);
    boxed(kind, &b)
}

fn u16b(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn u32b(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}

const MATRIX: [u32; 9] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000];

/// The frames of `ix` shown from `start_ns` to `end_ns` (whole groups of pictures) into an
/// MP4 at `out`, written under a temporary name and renamed into place.
pub fn write_mp4(
    bag: &Bag,
    ix: &VideoIndex,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    out: &Path,
) -> Result<Mp4Written, VideoError> {
    write_mp4_timed(
        bag,
        ix,
        (start_ns, end_ns),
        &HashMap::new(),
        &mut |_, _| {},
        out,
    )
}

/// [`write_mp4`], with some frames shown at other times: `shown_at` maps a frame (its index in
/// `ix.frames`) to the time (ns) it is shown at instead of its message's (the LeRobot export puts
/// the frames it picked exactly on its frame clock). The packets are not touched; the times
/// must keep the frames in order. `see` is handed each picture as it is decoded (the packets
/// are decoded once to learn their display order), with its frame.
pub fn write_mp4_timed(
    bag: &Bag,
    ix: &VideoIndex,
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    shown_at: &HashMap<usize, u64>,
    see: &mut dyn FnMut(usize, &super::Yuv),
    out: &Path,
) -> Result<Mp4Written, VideoError> {
    let err = |reason: String| VideoError {
        topic: ix.topic.clone(),
        time_ns: None,
        codec: Some(ix.codec),
        reason,
    };
    let first_frame = start_ns.and_then(|t| ix.frame_at(t)).unwrap_or(0);
    let Some(ki) = ix
        .key_before(first_frame)
        .or(if ix.keys.is_empty() { None } else { Some(0) })
    else {
        return Err(err("no keyframe: nothing decodable to write".into()));
    };
    let first = ix.keys[ki] as usize;
    let last_frame = end_ns
        .map(|t| {
            ix.frames
                .partition_point(|&p| ix.packets[p as usize].time_ns < t)
        })
        .unwrap_or(ix.frames.len())
        .max(first + 1);
    // To the keyframe after the range's last frame.
    let end = ix
        .keys
        .iter()
        .map(|&k| k as usize)
        .find(|&k| k >= last_frame && k > first)
        .unwrap_or(ix.frames.len());
    // The packets, in decoding order; an H.265 CRA's RASL pictures (which refer to what is
    // not written) are left out.
    let rasl = ix.rasl_after(first);
    let mut picked: Vec<usize> = Vec::new();
    // The frame (index into `ix.frames`) of each picked packet.
    let mut frame_of: Vec<usize> = Vec::new();
    for f in first..end {
        if f > first && f <= first + rasl {
            continue;
        }
        picked.push(ix.frames[f] as usize);
        frame_of.push(f);
    }
    let mut reader = PacketReader::default();
    let mut samples: Vec<(Vec<u8>, &PacketRef)> = Vec::with_capacity(picked.len());
    let mut params: Vec<Vec<u8>> = Vec::new();
    let mut dec = decoder_for(ix.codec, ix.seq);
    let mut shown = Vec::new();
    let mut order: Vec<i64> = Vec::new();
    let mut size = (0, 0);
    // The packets' messages read in one pass over their chunks (each chunk once), not one by
    // one.
    let mut conns: Vec<usize> = picked.iter().map(|&p| ix.packets[p].conn).collect();
    conns.sort_unstable();
    conns.dedup();
    let span = picked
        .first()
        .zip(picked.last())
        .map(|(&a, &b)| (ix.packets[a].time_ns, ix.packets[b].time_ns));
    let mut stream = match span {
        Some((a, b)) => bag
            .messages(&bagscope_reader::Filter {
                connections: Some(conns),
                start_ns: Some(a),
                end_ns: Some(b.saturating_add(1)),
            })
            .ok(),
        None => None,
    };
    for (i, &p) in picked.iter().enumerate() {
        let pr = &ix.packets[p];
        let mut found = None;
        if let Some(it) = stream.as_mut() {
            for m in it.by_ref() {
                match m {
                    Ok(m) if m.conn == pr.conn && m.entry == pr.entry => {
                        found = Some(m);
                        break;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
        let pkt = match found {
            Some(m) => reader
                .packet(bag, m.conn, &m.data)
                .and_then(|p| p.ok_or_else(|| "the message holds no video packet".to_string())),
            None => reader.read(bag, pr),
        }
        .map_err(|e| VideoError {
            time_ns: Some(pr.time_ns),
            ..err(e)
        })?;
        let mut data = pkt.data;
        if i == 0 {
            if let Some(ps) = ix.params.get(&(first as u32)) {
                data = super::index::with_params(ix.codec, ps, &data);
            }
        }
        dec.push(&data, i as i64, &mut shown)
            .map_err(|e| VideoError {
                time_ns: Some(pr.time_ns),
                ..err(format!("decoding failed: {e}"))
            })?;
        for f in shown.drain(..) {
            size = (f.width, f.height);
            if let Some(&fr) = frame_of.get(order.len()) {
                see(fr, &f);
            }
            order.push(f.tag);
        }
        let (sample, ps) = to_sample(ix.codec, &data);
        if params.is_empty() && !ps.is_empty() {
            params = ps;
        }
        samples.push((sample, pr));
    }
    dec.flush(&mut shown);
    for f in shown.drain(..) {
        size = (f.width, f.height);
        if let Some(&fr) = frame_of.get(order.len()) {
            see(fr, &f);
        }
        order.push(f.tag);
    }
    if params.is_empty() {
        return Err(err("no parameter sets before the first keyframe".into()));
    }
    // Display rank of each sample; a sample the decoder gave nothing for is shown last.
    let mut rank = vec![usize::MAX; samples.len()];
    for (j, &tag) in order.iter().enumerate() {
        if let Some(r) = usize::try_from(tag).ok().and_then(|t| rank.get_mut(t)) {
            *r = j;
        }
    }
    let t0 = samples[0].1.time_ns;
    let ticks =
        |t: u64| (u128::from(t.saturating_sub(t0)) * u128::from(TIMESCALE) / 1_000_000_000) as u64;
    let (dts, step) = decoding_times(samples.iter().map(|s| ticks(s.1.time_ns)).collect());
    // The time each display slot is shown at: its message's, or the one asked for.
    let mut shown: Vec<u64> = dts.clone();
    for (r, f) in frame_of.iter().enumerate() {
        if let (Some(&t), Some(slot)) = (shown_at.get(f), shown.get_mut(r)) {
            *slot = ticks(t);
        }
    }
    if shown.windows(2).any(|w| w[1] <= w[0]) {
        return Err(err(
            "the frames' new times would show them out of order".into()
        ));
    }
    let pts: Vec<u64> = rank
        .iter()
        .map(|&r| {
            shown
                .get(r)
                .copied()
                .unwrap_or(shown[shown.len() - 1] + step)
        })
        .collect();
    // Composition offsets must not be negative: every presentation time is shifted by the
    // largest lead, which the edit list takes back.
    let shift = dts
        .iter()
        .zip(&pts)
        .map(|(d, p)| d.saturating_sub(*p))
        .max()
        .unwrap_or(0);
    let duration = dts[dts.len() - 1] + step;

    let keyframes: Vec<u32> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| s.1.kind.key)
        .map(|(i, _)| i as u32 + 1)
        .collect();
    let bytes = write_file(
        out,
        &samples.iter().map(|s| s.0.as_slice()).collect::<Vec<_>>(),
        Moov {
            codec: ix.codec,
            size,
            params: &params,
            dts: &dts,
            pts: &pts,
            shift,
            duration,
            sizes: Vec::new(),
            offsets: Vec::new(),
            keyframes: &keyframes,
        },
    )
    .map_err(err)?;
    Ok(written(&keyframes, samples.len(), size, bytes, t0))
}

/// AV1 temporal units made by this program (one shown frame each, [`super::encode`]) into an
/// MP4 at `out`, the `k`-th shown at `times_ns[k]` (the file's time 0 the first's), written
/// under a temporary name and renamed into place. `header` is the sequence header OBU.
pub fn write_mp4_av1(
    units: &[super::encode::Av1Unit],
    header: &[u8],
    size: (usize, usize),
    times_ns: &[u64],
    out: &Path,
) -> Result<Mp4Written, String> {
    if units.is_empty() || units.len() != times_ns.len() {
        return Err(format!(
            "{} AV1 frames for {} times",
            units.len(),
            times_ns.len()
        ));
    }
    let t0 = times_ns[0];
    let (dts, step) = decoding_times(
        times_ns
            .iter()
            .map(|&t| {
                (u128::from(t.saturating_sub(t0)) * u128::from(TIMESCALE) / 1_000_000_000) as u64
            })
            .collect(),
    );
    let samples: Vec<Vec<u8>> = units
        .iter()
        .map(|u| super::obu::to_sample(&u.data))
        .collect();
    let keyframes: Vec<u32> = (0..units.len())
        .filter(|&i| units[i].key)
        .map(|i| i as u32 + 1)
        .collect();
    let bytes = write_file(
        out,
        &samples.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        Moov {
            codec: Codec::Av1,
            size,
            params: &[header.to_vec()],
            dts: &dts,
            pts: &dts,
            shift: 0,
            duration: dts[dts.len() - 1] + step,
            sizes: Vec::new(),
            offsets: Vec::new(),
            keyframes: &keyframes,
        },
    )?;
    Ok(written(&keyframes, samples.len(), size, bytes, t0))
}

/// What a writer wrote: `frames` samples of `size`, the `keyframes`, `bytes` in all, time 0 at
/// `first_ns`.
fn written(
    keyframes: &[u32],
    frames: usize,
    size: (usize, usize),
    bytes: u64,
    first_ns: u64,
) -> Mp4Written {
    Mp4Written {
        frames,
        keyframes: keyframes.len(),
        width: size.0,
        height: size.1,
        bytes,
        first_ns,
    }
}

/// The MP4 at `out`, written under a temporary name and renamed into place: `ftyp`, the
/// samples in one `mdat`, then `moov` from `m` with the samples' sizes and places. Its size in
/// bytes.
fn write_file(out: &Path, samples: &[&[u8]], m: Moov<'_>) -> Result<u64, String> {
    let io = |e: std::io::Error| format!("writing {}: {e}", out.display());
    let mut file = crate::tables::csv::AtomicFile::create(out).map_err(|e| e.to_string())?;
    let mut ftyp = b"isom".to_vec();
    u32b(&mut ftyp, 0x200);
    for b in [b"isom", b"iso2", sample_entry(m.codec), b"mp41"] {
        ftyp.extend_from_slice(b);
    }
    let ftyp = boxed(b"ftyp", &ftyp);
    let payload: u64 = samples.iter().map(|s| s.len() as u64).sum();
    // A 64-bit mdat header: size 1, the type, then the size.
    let mut mdat_head = 1u32.to_be_bytes().to_vec();
    mdat_head.extend_from_slice(b"mdat");
    mdat_head.extend_from_slice(&(payload + 16).to_be_bytes());
    file.write_all(&ftyp).map_err(io)?;
    file.write_all(&mdat_head).map_err(io)?;
    let mut offsets = Vec::with_capacity(samples.len());
    let mut at = (ftyp.len() + mdat_head.len()) as u64;
    for s in samples {
        offsets.push(at);
        at += s.len() as u64;
        file.write_all(s).map_err(io)?;
    }
    let moov = moov(&Moov {
        sizes: samples.iter().map(|s| s.len() as u32).collect(),
        offsets,
        ..m
    });
    file.write_all(&moov).map_err(io)?;
    file.commit().map_err(|e| e.to_string())?;
    Ok(at + moov.len() as u64)
}

/// Media times (in [`TIMESCALE`] units) made strictly increasing, and the mean step between
/// them (a frame's duration; 1/30 s for one frame).
fn decoding_times(mut dts: Vec<u64>) -> (Vec<u64>, u64) {
    for i in 1..dts.len() {
        if dts[i] <= dts[i - 1] {
            dts[i] = dts[i - 1] + 1;
        }
    }
    let step = if dts.len() > 1 {
        (dts[dts.len() - 1] / (dts.len() as u64 - 1)).max(1)
    } else {
        3000
    };
    (dts, step)
}

/// The sample entry's name: `avc1`, `hvc1` or `av01`.
fn sample_entry(codec: Codec) -> &'static [u8; 4] {
    match codec {
        Codec::H264 => b"avc1",
        Codec::H265 => b"hvc1",
        Codec::Av1 => b"av01",
    }
}

/// An access unit as an MP4 sample (4-byte lengths), and the parameter sets it held; an AV1
/// temporal unit without its delimiter, and its sequence header.
fn to_sample(codec: Codec, au: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    if codec == Codec::Av1 {
        let params = super::obu::sequence_header(au).map(<[u8]>::to_vec);
        return (super::obu::to_sample(au), params.into_iter().collect());
    }
    let mut sample = Vec::with_capacity(au.len() + 16);
    let mut params = Vec::new();
    for u in nal::units(au) {
        let Some(&b) = u.first() else { continue };
        let (param, aud) = match codec {
            Codec::H264 => (matches!(b & 0x1F, 7 | 8), b & 0x1F == 9),
            Codec::H265 => (matches!(b >> 1, 32..=34), b >> 1 == 35),
            Codec::Av1 => (false, false),
        };
        if param {
            params.push(u.to_vec());
        } else if !aud {
            sample.extend_from_slice(&(u.len() as u32).to_be_bytes());
            sample.extend_from_slice(u);
        }
    }
    (sample, params)
}

struct Moov<'a> {
    codec: Codec,
    size: (usize, usize),
    params: &'a [Vec<u8>],
    dts: &'a [u64],
    pts: &'a [u64],
    shift: u64,
    duration: u64,
    sizes: Vec<u32>,
    offsets: Vec<u64>,
    keyframes: &'a [u32],
}

fn moov(m: &Moov) -> Vec<u8> {
    let (w, h) = (m.size.0 as u32, m.size.1 as u32);
    // The presentation: `duration` from the shifted first frame; the media runs `shift` longer.
    let movie_ms = m.duration * 1000 / TIMESCALE;
    let mut mvhd = Vec::new();
    u32b(&mut mvhd, 0);
    u32b(&mut mvhd, 0);
    u32b(&mut mvhd, 1000);
    u32b(&mut mvhd, movie_ms as u32);
    u32b(&mut mvhd, 0x10000);
    u16b(&mut mvhd, 0x100);
    mvhd.extend_from_slice(&[0; 10]);
    MATRIX.iter().for_each(|&x| u32b(&mut mvhd, x));
    mvhd.extend_from_slice(&[0; 24]);
    u32b(&mut mvhd, 2);
    let mvhd = full(b"mvhd", 0, 0, &mvhd);

    let mut tkhd = Vec::new();
    u32b(&mut tkhd, 0);
    u32b(&mut tkhd, 0);
    u32b(&mut tkhd, 1);
    u32b(&mut tkhd, 0);
    u32b(&mut tkhd, movie_ms as u32);
    tkhd.extend_from_slice(&[0; 8]);
    tkhd.extend_from_slice(&[0; 8]); // layer, alternate group, volume, reserved
    MATRIX.iter().for_each(|&x| u32b(&mut tkhd, x));
    u32b(&mut tkhd, w << 16);
    u32b(&mut tkhd, h << 16);
    let tkhd = full(b"tkhd", 0, 3, &tkhd);

    let mut elst = Vec::new();
    u32b(&mut elst, 1);
    u32b(&mut elst, movie_ms as u32);
    u32b(&mut elst, m.shift as u32);
    u32b(&mut elst, 0x10000);
    let edts = boxed(b"edts", &full(b"elst", 0, 0, &elst));

    let mut mdhd = Vec::new();
    u32b(&mut mdhd, 0);
    u32b(&mut mdhd, 0);
    u32b(&mut mdhd, TIMESCALE as u32);
    u32b(&mut mdhd, (m.duration + m.shift) as u32);
    u16b(&mut mdhd, 0x55C4); // "und"
    u16b(&mut mdhd, 0);
    let mdhd = full(b"mdhd", 0, 0, &mdhd);
    let mut hdlr = vec![0; 4];
    hdlr.extend_from_slice(b"vide");
    hdlr.extend_from_slice(&[0; 12]);
    hdlr.extend_from_slice(b"VideoHandler\0");
    let hdlr = full(b"hdlr", 0, 0, &hdlr);
    let vmhd = full(b"vmhd", 0, 1, &[0; 8]);
    let mut dref = Vec::new();
    u32b(&mut dref, 1);
    dref.extend_from_slice(&full(b"url ", 0, 1, &[]));
    let dinf = boxed(b"dinf", &full(b"dref", 0, 0, &dref));
    let stbl = boxed(b"stbl", &[stsd(m), tables(m)].concat());
    let minf = boxed(b"minf", &[vmhd, dinf, stbl].concat());
    let mdia = boxed(b"mdia", &[mdhd, hdlr, minf].concat());
    let trak = boxed(b"trak", &[tkhd, edts, mdia].concat());
    boxed(b"moov", &[mvhd, trak].concat())
}

/// The sample description: `avc1` with `avcC`, or `hvc1` with `hvcC`.
fn stsd(m: &Moov) -> Vec<u8> {
    let find = |t: u8| -> Vec<&Vec<u8>> {
        m.params
            .iter()
            .filter(|p| match m.codec {
                Codec::H264 => p.first().is_some_and(|b| b & 0x1F == t),
                Codec::H265 => p.first().is_some_and(|b| b >> 1 == t),
                Codec::Av1 => false,
            })
            .collect()
    };
    let config = match m.codec {
        Codec::H264 => {
            let (sps, pps) = (find(7), find(8));
            let s0 = sps.first().map_or(&[][..], |s| s.as_slice());
            let mut c = vec![
                1,
                *s0.get(1).unwrap_or(&66),
                *s0.get(2).unwrap_or(&0),
                *s0.get(3).unwrap_or(&30),
                0xFF,
            ];
            c.push(0xE0 | sps.len().min(31) as u8);
            for s in sps.iter().take(31) {
                u16b(&mut c, s.len() as u16);
                c.extend_from_slice(s);
            }
            c.push(pps.len().min(255) as u8);
            for p in pps.iter().take(255) {
                u16b(&mut c, p.len() as u16);
                c.extend_from_slice(p);
            }
            boxed(b"avcC", &c)
        }
        Codec::H265 => {
            let sps = find(33);
            // The general profile, tier and level: the 12 bytes after the SPS's first.
            let rbsp = sps
                .first()
                .map(|s| nal::unescape(s.get(2..).unwrap_or(&[])))
                .unwrap_or_default();
            let ptl: Vec<u8> = (1..13).map(|i| rbsp.get(i).copied().unwrap_or(0)).collect();
            let mut c = vec![1];
            c.extend_from_slice(&ptl[..11]);
            c.push(ptl[11]);
            c.extend_from_slice(&[0xF0, 0x00, 0xFC, 0xFD, 0xF8, 0xF8, 0, 0, 0x0F]);
            let arrays: Vec<(u8, Vec<&Vec<u8>>)> = [32u8, 33, 34]
                .iter()
                .map(|&t| (t, find(t)))
                .filter(|a| !a.1.is_empty())
                .collect();
            c.push(arrays.len() as u8);
            for (t, units) in arrays {
                c.push(0x80 | t);
                u16b(&mut c, units.len() as u16);
                for u in units {
                    u16b(&mut c, u.len() as u16);
                    c.extend_from_slice(u);
                }
            }
            boxed(b"hvcC", &c)
        }
        // AV1-ISOBMFF's `av1C`: what the sequence header says, then the header itself.
        Codec::Av1 => {
            let sh = m.params.first().map_or(&[][..], |p| p.as_slice());
            let head = super::obu::obus(sh)
                .first()
                .and_then(|o| super::obu::parse_sequence_header(o.payload))
                .map(|h| super::obu::av1c_head(&h))
                .unwrap_or([0x81, 0, 0, 0]);
            boxed(b"av1C", &[&head[..], sh].concat())
        }
    };
    let (w, h) = (m.size.0 as u16, m.size.1 as u16);
    let mut e = vec![0; 6];
    u16b(&mut e, 1);
    e.extend_from_slice(&[0; 16]);
    u16b(&mut e, w);
    u16b(&mut e, h);
    u32b(&mut e, 0x0048_0000);
    u32b(&mut e, 0x0048_0000);
    u32b(&mut e, 0);
    u16b(&mut e, 1);
    e.extend_from_slice(&[0; 32]);
    u16b(&mut e, 0x18);
    u16b(&mut e, 0xFFFF);
    e.extend_from_slice(&config);
    let entry = boxed(sample_entry(m.codec), &e);
    let mut d = Vec::new();
    u32b(&mut d, 1);
    d.extend_from_slice(&entry);
    full(b"stsd", 0, 0, &d)
}

/// Decoding times, composition offsets, keyframes, sizes and places of the samples.
fn tables(m: &Moov) -> Vec<u8> {
    let n = m.dts.len();
    let delta = |i: usize| {
        if i + 1 < n {
            m.dts[i + 1] - m.dts[i]
        } else {
            (m.duration - m.dts[i]).max(1)
        }
    };
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for i in 0..n {
        let d = delta(i) as u32;
        match runs.last_mut() {
            Some(r) if r.1 == d => r.0 += 1,
            _ => runs.push((1, d)),
        }
    }
    let table = |runs: &[(u32, u32)]| {
        let mut b = Vec::new();
        u32b(&mut b, runs.len() as u32);
        for &(c, v) in runs {
            u32b(&mut b, c);
            u32b(&mut b, v);
        }
        b
    };
    let stts = full(b"stts", 0, 0, &table(&runs));
    let mut offs: Vec<(u32, u32)> = Vec::new();
    for i in 0..n {
        let o = (m.pts[i] + m.shift - m.dts[i]) as u32;
        match offs.last_mut() {
            Some(r) if r.1 == o => r.0 += 1,
            _ => offs.push((1, o)),
        }
    }
    let ctts = full(b"ctts", 0, 0, &table(&offs));
    let mut stss = Vec::new();
    u32b(&mut stss, m.keyframes.len() as u32);
    m.keyframes.iter().for_each(|&k| u32b(&mut stss, k));
    let stss = full(b"stss", 0, 0, &stss);
    let mut stsz = Vec::new();
    u32b(&mut stsz, 0);
    u32b(&mut stsz, n as u32);
    m.sizes.iter().for_each(|&s| u32b(&mut stsz, s));
    let stsz = full(b"stsz", 0, 0, &stsz);
    let mut stsc = Vec::new();
    u32b(&mut stsc, 1);
    u32b(&mut stsc, 1);
    u32b(&mut stsc, 1);
    u32b(&mut stsc, 1);
    let stsc = full(b"stsc", 0, 0, &stsc);
    let mut co64 = Vec::new();
    u32b(&mut co64, n as u32);
    m.offsets
        .iter()
        .for_each(|&o| co64.extend_from_slice(&o.to_be_bytes()));
    let co64 = full(b"co64", 0, 0, &co64);
    [stts, ctts, stss, stsz, stsc, co64].concat()
}
