//! A seek that decodes only what the frame asked refers to (the orders of
//! [`super::super::poc`]): from its keyframe, the pictures its references lead back to (H.265:
//! its reference picture sets; H.264: its reference lists, [`super::super::h264_refs`]), and
//! the frame itself; where those are not known, every picture a later one may refer to (the
//! disposable ones skipped).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bagscope_reader::Bag;

use super::super::{decoder_for, Codec};
use super::{with_params, Video, VideoIndex};

impl Video {
    /// Decodes frame `n` from keyframe `ki` (its place in `keys`), skipping the disposable
    /// pictures before it; every picture decoded whose samples the decoder gave (all of them
    /// but H.265's, which gives frame `n`'s alone) goes into the cache. Says whether frame `n`
    /// is there now. `false` leaves the group to be decoded whole, which also says any error:
    /// a picture whose order is not read, a count two pictures share, a packet that does not
    /// read or decode, or a decoder whose output order is not the one read from the headers.
    pub(super) fn sparse(&mut self, bag: &Bag, n: usize, ki: usize) -> bool {
        let ix = Arc::clone(&self.index);
        if ix.codec == Codec::Av1 {
            return false;
        }
        let k = ix.keys[ki] as usize;
        let rasl = ix.rasl_after(k);
        let first = k + rasl;
        // The frames of this group are `first..end`: from the keyframe on in display order,
        // without its RASL pictures (frames of the group before) and with the next
        // keyframe's (shown before it). That keyframe, shown right after them as frame
        // `end`, is among the pictures read: a RASL picture asked for refers to it.
        let next = ix.keys.get(ki + 1).map(|&k2| k2 as usize);
        // (An IDR or BLA counts again from nothing: the group ends before it.)
        let (end, upto) = match next {
            Some(k2) if !ix.packets[ix.frames[k2] as usize].kind.closed => {
                let r2 = ix.rasl_after(k2);
                (k2 + r2, k2 + r2 + 1)
            }
            Some(k2) => (k2, k2),
            None => (ix.frames.len(), ix.frames.len()),
        };
        // The group's first frame shown comes out of a whole decode as soon: no seek.
        if n <= first || n >= end {
            return false;
        }
        let mut shown = Vec::with_capacity(upto - first);
        for f in std::iter::once(k).chain(k + rasl + 1..upto) {
            match ix.packets[ix.frames[f] as usize].order {
                Some(o) => shown.push((o.poc, f)),
                None => return false,
            }
        }
        shown.sort_unstable();
        if shown.windows(2).any(|w| w[0].0 == w[1].0) {
            return false;
        }
        let target = ix.frames[shown[n - first].1] as usize;
        let place: HashMap<usize, usize> = shown
            .iter()
            .enumerate()
            .map(|(i, &(_, f))| (ix.frames[f] as usize, first + i))
            .collect();
        let needed = references(&ix, &shown, target);
        let mut dec = decoder_for(ix.codec, ix.seq);
        // The pictures it refers to come out hollow (where that saves a copy): the decoder
        // started at the keyframe after this seek goes through the group whole anyway.
        dec.samples_only_for(target as i64);
        let mut out = Vec::new();
        let mut want = Vec::new();
        for p in ix.frames[k] as usize..=target {
            let pr = &ix.packets[p];
            let f = ix.frames.partition_point(|&q| (q as usize) < p);
            let picture = ix.frames.get(f) == Some(&(p as u32));
            if picture {
                let of_key = f > k && f <= k + rasl;
                let keep = match &needed {
                    Some(set) => set.contains(&p),
                    None => pr.order.is_some_and(|o| !o.disposable),
                };
                if of_key || (p != target && !keep) {
                    continue;
                }
                match place.get(&p) {
                    Some(&at) => want.push(at),
                    None => return false,
                }
            }
            let mut data = match self.reader.read(bag, pr) {
                Ok(pkt) => pkt.data,
                Err(_) => return false,
            };
            if picture && pr.kind.key {
                if let Some(ps) = ix.params.get(&(f as u32)) {
                    data = with_params(ix.codec, ps, &data);
                }
            }
            if dec.push(&data, p as i64, &mut out).is_err() {
                return false;
            }
        }
        dec.flush(&mut out);
        // The decoder shows the pictures in the order read from their headers, or nothing
        // decoded here is kept.
        want.sort_unstable();
        let got: Option<Vec<usize>> = out
            .iter()
            .map(|y| {
                usize::try_from(y.tag)
                    .ok()
                    .and_then(|p| place.get(&p).copied())
            })
            .collect();
        if got.as_ref() != Some(&want) {
            return false;
        }
        self.decoded += out.len() as u64;
        for (yuv, at) in out.into_iter().zip(want) {
            if !yuv.is_hollow() {
                self.insert(at, Arc::new(yuv), n);
            }
        }
        self.cache.contains_key(&n)
    }
}

/// The packets frame `target` (a packet) needs decoded: itself and what it refers to, followed
/// back through the references each picture's header lists. `None` where a picture's
/// references are not known (a long-term reference, what [`super::super::h264_refs`] does not
/// follow) or one lies outside `shown`: then every picture that is not disposable is decoded.
fn references(ix: &VideoIndex, shown: &[(i64, usize)], target: usize) -> Option<HashSet<usize>> {
    let by_poc: HashMap<i64, usize> = shown
        .iter()
        .map(|&(poc, f)| (poc, ix.frames[f] as usize))
        .collect();
    let mut need = HashSet::new();
    let mut stack = vec![target];
    while let Some(p) = stack.pop() {
        if !need.insert(p) {
            continue;
        }
        let poc = ix.packets[p].order?.poc;
        for &d in ix.uses.get(&(p as u32))?.iter() {
            stack.push(*by_poc.get(&(poc + i64::from(d)))?);
        }
    }
    Some(need)
}
