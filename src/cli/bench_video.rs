//! `bagscope bench REC --op video-decode|video-seek`: the video figures of
//! `scripts/bench/video.py`, which runs ffmpeg beside them.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use crate::cli::Error;
use bagscope_ops::media::video::{
    decoder_for, PacketReader, Shown, Video, VideoIndex, DEFAULT_BUDGET,
};
use bagscope_reader::Bag;

/// The recording's first video topic's keyframe table.
fn index(bag: &Bag) -> crate::cli::Result<VideoIndex> {
    for t in &bag.summary().topics {
        if bagscope_ops::media::video::is_video_type(&t.datatype) {
            return Ok(VideoIndex::build(bag, &t.name, None)?);
        }
    }
    Err(Error::NotFound("no video topic".into()))
}

/// Decoding throughput on one thread: every packet read into memory first, then decoded by
/// one decoder, pictures in display order (no RGB).
pub fn decode(bag: &Bag, runs: usize) -> crate::cli::Result<serde_json::Value> {
    let ix = Arc::new(index(bag)?);
    let mut reader = PacketReader::default();
    let mut packets = Vec::with_capacity(ix.packets.len());
    for p in &ix.packets {
        packets.push(reader.read(bag, p).map_err(Error::Invalid)?.data);
    }
    let mut best = f64::INFINITY;
    let mut frames = 0;
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let mut dec = decoder_for(ix.codec, ix.seq);
        let mut out = Vec::new();
        let mut n = 0;
        for (i, p) in packets.iter().enumerate() {
            dec.push(p, i as i64, &mut out).map_err(Error::Invalid)?;
            n += out.len();
            out.clear();
        }
        dec.flush(&mut out);
        n += out.len();
        best = best.min(t0.elapsed().as_secs_f64());
        frames = n;
    }
    Ok(
        json!({"codec": ix.codec.name(), "frames": frames, "seconds": best,
              "frames_per_s": frames as f64 / best}),
    )
}

/// Random seeks, each with a fresh reader (nothing cached): from the request to the exact
/// frame decoded and made RGB, read from the file.
pub fn seek(bag: &Bag, count: usize) -> crate::cli::Result<serde_json::Value> {
    let ix = Arc::new(index(bag)?);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut ms = Vec::with_capacity(count);
    let mut picked = Vec::with_capacity(count);
    for _ in 0..count {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let n = (rng % ix.frames.len() as u64) as usize;
        let t0 = Instant::now();
        let mut video = Video::new(Arc::clone(&ix), DEFAULT_BUDGET);
        match video.frame(bag, n) {
            Shown::Frame(f) => {
                std::hint::black_box(f.to_rgba());
            }
            other => return Err(Error::Invalid(format!("frame {n}: {other:?}"))),
        }
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        picked.push(ix.time_of(n).unwrap_or(0) - ix.time_of(0).unwrap_or(0));
    }
    let mut sorted = ms.clone();
    sorted.sort_by(f64::total_cmp);
    let q = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    Ok(
        json!({"codec": ix.codec.name(), "seeks": count, "p50_ms": q(0.5), "p99_ms": q(0.99),
              "times_ns": picked, "ms": ms}),
    )
}
