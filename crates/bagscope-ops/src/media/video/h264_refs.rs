//! Which earlier pictures an H.264 picture may refer to, read from its slice header without
//! decoding it: the reference lists the decoder builds (H.264 8.2.4: the initial lists by
//! frame number or by order count, then the header's modifications, cut to the active
//! length) from the short-term reference frames it keeps (8.2.5: the sliding window and the
//! memory management operations that mark a frame unused). A seek then decodes only the
//! pictures its frame's lists lead back to, as for H.265's reference picture sets.
//!
//! Followed: frames (not fields) with short-term references. What is not (long-term
//! references, operation 5, a gap in `frame_num`, slice groups, redundant pictures, a bottom
//! field counted before its top) leaves the pictures from there to the next IDR without
//! references, and a seek among them skips only the disposable pictures, as before.

use super::nal::{Bits, H264Sps};

/// What of a PPS the later fields of a slice header are read with (7.3.2.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RefPps {
    bottom_field_pic_order: bool,
    l0_default: u32,
    l1_default: u32,
    weighted_pred: bool,
    weighted_bipred: u32,
    redundant_pic_cnt: bool,
}

/// The fields of a PPS after its two ids; `None` for one with slice groups (not followed).
pub(super) fn ref_pps(r: &mut Bits) -> Option<RefPps> {
    r.bit()?; // entropy_coding_mode_flag
    let bottom_field_pic_order = r.bit()? == 1;
    if r.ue()? != 0 {
        return None; // slice groups
    }
    let (l0_default, l1_default) = (r.ue()? + 1, r.ue()? + 1);
    let weighted_pred = r.bit()? == 1;
    let weighted_bipred = r.bits(2)?;
    r.se()?; // pic_init_qp_minus26
    r.se()?; // pic_init_qs_minus26
    r.se()?; // chroma_qp_index_offset
    r.bit()?; // deblocking_filter_control_present_flag
    r.bit()?; // constrained_intra_pred_flag
    let redundant_pic_cnt = r.bit()? == 1;
    (l0_default <= 32 && l1_default <= 32).then_some(RefPps {
        bottom_field_pic_order,
        l0_default,
        l1_default,
        weighted_pred,
        weighted_bipred,
        redundant_pic_cnt,
    })
}

/// What the slice header said before its reference fields.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    pub slice_type: u32,
    pub frame_num: u32,
    pub idr: bool,
    /// `nal_ref_idc` is not 0: the picture is kept as a reference.
    pub reference: bool,
    /// Its order count as [`super::poc`] counts it.
    pub poc: i64,
}

/// A short-term reference frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ref {
    frame_num: u32,
    poc: i64,
}

/// How a reference picture marks the frames kept after it (8.2.5).
enum Marking {
    Idr,
    SlidingWindow,
    /// Operation 1: the frames `difference_of_pic_nums_minus1 + 1` before it made unused.
    Unused(Vec<u32>),
}

/// The short-term reference frames kept after each picture, in decoding order.
#[derive(Debug, Default)]
pub(super) struct Dpb {
    refs: Vec<Ref>,
    prev_ref_frame_num: Option<u32>,
    /// An IDR was read: the frames kept are known from there (a stream that starts at
    /// another picture refers to frames before it).
    from_idr: bool,
    /// Something not followed since the last IDR.
    lost: bool,
}

impl Dpb {
    /// A picture was not followed: the frames kept are not known until the next IDR.
    pub(super) fn lose(&mut self) {
        self.lost = true;
    }

    /// Reads the rest of a frame's first slice header (`r` just after its order count's
    /// least significant bits) and marks the picture as the decoder does. The counts,
    /// relative to its own, of the pictures its lists hold; `None` where not followed.
    pub(super) fn picture(
        &mut self,
        r: &mut Bits,
        sps: &H264Sps,
        pps: Option<&RefPps>,
        h: &Head,
    ) -> Option<Vec<i32>> {
        if h.idr {
            *self = Dpb {
                from_idr: true,
                ..Dpb::default()
            };
        }
        let max = 1u32 << sps.log2_max_frame_num.min(16);
        if let Some(prev) = self.prev_ref_frame_num {
            if h.frame_num != prev && h.frame_num != (prev + 1) % max {
                self.lost = true; // "non-existing" frames (8.2.5.2)
            }
        }
        let Some((lists, marking)) = pps.and_then(|pps| self.read(r, sps, pps, h, max)) else {
            self.lost = true;
            return None;
        };
        // A count too far to say as a difference is not followed either (never dropped: a
        // reference left out would be a picture decoded without it).
        let uses = if self.from_idr && !self.lost {
            lists
                .iter()
                .map(|&poc| i32::try_from(poc - h.poc).ok())
                .collect()
        } else {
            None
        };
        if h.reference {
            self.mark(marking, h, max, sps.max_refs);
            self.prev_ref_frame_num = Some(h.frame_num);
        }
        uses
    }

    /// `FrameNumWrap` (8-27) of a frame numbered `n` seen from a picture numbered `cur`.
    fn wrap(n: u32, cur: u32, max: u32) -> i64 {
        if n > cur {
            i64::from(n) - i64::from(max)
        } else {
            i64::from(n)
        }
    }

    /// The header's reference fields: the counts of the pictures its lists hold and how it
    /// marks the frames kept.
    fn read(
        &self,
        r: &mut Bits,
        sps: &H264Sps,
        pps: &RefPps,
        h: &Head,
        max: u32,
    ) -> Option<(Vec<i64>, Marking)> {
        if sps.poc_type == 0 && pps.bottom_field_pic_order && r.se()? < 0 {
            return None; // the bottom field counted first: the frame's count is not the top's
        }
        if pps.redundant_pic_cnt && r.ue()? != 0 {
            return None;
        }
        let t = h.slice_type % 5;
        let (p, b) = (t == 0 || t == 3, t == 1);
        if b {
            r.bit()?; // direct_spatial_mv_pred_flag
        }
        let (mut n0, mut n1) = (pps.l0_default, pps.l1_default);
        if (p || b) && r.bit()? == 1 {
            n0 = r.ue()? + 1;
            if b {
                n1 = r.ue()? + 1;
            }
        }
        if n0 > 32 || n1 > 32 {
            return None;
        }
        let mut lists = Vec::new();
        if p || b {
            let (l0, l1) = self.initial(h, b, max);
            lists.extend(self.modified(r, l0, n0, h.frame_num, max)?);
            if b {
                lists.extend(self.modified(r, l1, n1, h.frame_num, max)?);
            }
        }
        if (pps.weighted_pred && p) || (pps.weighted_bipred == 1 && b) {
            weights(r, sps.chroma_array_type, n0, b.then_some(n1))?;
        }
        let marking = if h.reference {
            marking(r, h.idr)?
        } else {
            Marking::SlidingWindow
        };
        Some((lists.iter().map(|f| f.poc).collect(), marking))
    }

    /// The initial lists (8.2.4.2.1 for P, 8.2.4.2.3 for B).
    fn initial(&self, h: &Head, b: bool, max: u32) -> (Vec<Ref>, Vec<Ref>) {
        let mut refs = self.refs.clone();
        if !b {
            refs.sort_by_key(|f| std::cmp::Reverse(Self::wrap(f.frame_num, h.frame_num, max)));
            return (refs, Vec::new());
        }
        let (mut before, mut after): (Vec<Ref>, Vec<Ref>) =
            refs.into_iter().partition(|f| f.poc < h.poc);
        before.sort_by_key(|f| std::cmp::Reverse(f.poc));
        after.sort_by_key(|f| f.poc);
        let l0: Vec<Ref> = before.iter().chain(&after).copied().collect();
        let mut l1: Vec<Ref> = after.iter().chain(&before).copied().collect();
        if l1.len() > 1 && l1 == l0 {
            l1.swap(0, 1);
        }
        (l0, l1)
    }

    /// `list` after the header's modifications (8.2.4.3.1), `n` long.
    fn modified(
        &self,
        r: &mut Bits,
        mut list: Vec<Ref>,
        n: u32,
        cur: u32,
        max: u32,
    ) -> Option<Vec<Ref>> {
        let n = n as usize;
        list.truncate(n);
        if r.bit()? == 1 {
            let (cur_i, max_i) = (i64::from(cur), i64::from(max));
            let mut pred = cur_i;
            let mut idx = 0;
            loop {
                let op = r.ue()?;
                if op == 3 {
                    break;
                }
                if op > 1 || idx >= n {
                    return None; // a long-term picture (2), or more than the list holds
                }
                let d = i64::from(r.ue()?) + 1;
                let mut no_wrap = if op == 0 { pred - d } else { pred + d };
                if no_wrap < 0 {
                    no_wrap += max_i;
                } else if no_wrap >= max_i {
                    no_wrap -= max_i;
                }
                pred = no_wrap;
                let num = if no_wrap > cur_i {
                    no_wrap - max_i
                } else {
                    no_wrap
                };
                let f = *self
                    .refs
                    .iter()
                    .find(|f| Self::wrap(f.frame_num, cur, max) == num)?;
                list.insert(idx.min(list.len()), f);
                idx += 1;
                let mut k = idx;
                while k < list.len() {
                    if list[k] == f {
                        list.remove(k);
                    } else {
                        k += 1;
                    }
                }
            }
        }
        list.truncate(n);
        Some(list)
    }

    /// Marks the frames kept once picture `h` is decoded (8.2.5.3, 8.2.5.4).
    fn mark(&mut self, m: Marking, h: &Head, max: u32, max_refs: u32) {
        match m {
            Marking::Idr => self.refs.clear(),
            Marking::SlidingWindow => {
                if self.refs.len() >= max_refs.max(1) as usize {
                    if let Some(oldest) = self
                        .refs
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, f)| Self::wrap(f.frame_num, h.frame_num, max))
                        .map(|(i, _)| i)
                    {
                        self.refs.remove(oldest);
                    }
                }
            }
            Marking::Unused(diffs) => {
                for d in diffs {
                    let num = i64::from(h.frame_num) - i64::from(d);
                    self.refs
                        .retain(|f| Self::wrap(f.frame_num, h.frame_num, max) != num);
                }
            }
        }
        self.refs.push(Ref {
            frame_num: h.frame_num,
            poc: h.poc,
        });
    }
}

/// Reads past `pred_weight_table` (7.3.3.2).
fn weights(r: &mut Bits, chroma: u32, n0: u32, n1: Option<u32>) -> Option<()> {
    r.ue()?; // luma_log2_weight_denom
    if chroma != 0 {
        r.ue()?; // chroma_log2_weight_denom
    }
    for n in std::iter::once(n0).chain(n1) {
        for _ in 0..n {
            if r.bit()? == 1 {
                r.se()?;
                r.se()?;
            }
            if chroma != 0 && r.bit()? == 1 {
                for _ in 0..4 {
                    r.se()?;
                }
            }
        }
    }
    Some(())
}

/// `dec_ref_pic_marking` (7.3.3.3); `None` for what is not followed (long-term references,
/// operations 2 to 6).
fn marking(r: &mut Bits, idr: bool) -> Option<Marking> {
    if idr {
        r.bit()?; // no_output_of_prior_pics_flag
        return (r.bit()? == 0).then_some(Marking::Idr);
    }
    if r.bit()? == 0 {
        return Some(Marking::SlidingWindow);
    }
    let mut unused = Vec::new();
    loop {
        match r.ue()? {
            0 => return Some(Marking::Unused(unused)),
            1 if unused.len() < 64 => unused.push(r.ue()? + 1),
            _ => return None,
        }
    }
}
