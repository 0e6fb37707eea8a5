//! A ROS 1 or CDR definition compiled into a flat program that walks over a message without
//! reading its values: what [`Plan::validates`] runs on every message of a `check`. It
//! accepts exactly what the decoder's skipping walk accepts (see the test against it on the
//! corpora), with the walk's per-field dispatch compiled away: nested messages are inlined,
//! runs of fixed-size fields are one step (ROS 1 has no padding; CDR keeps its alignment
//! steps), arrays of primitives are one step.

use super::{Plan, Wire, MAX_EMPTY_ELEMENTS};
use crate::definition::msg::{ArrayKind, Field, FieldType, Primitive};
use crate::encoding::cdr::prim_align;

/// One step of a [`Skip`] program.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// `n` bytes.
    Take(usize),
    /// CDR: padding to an `n`-byte boundary (at most the header's largest alignment).
    Align(usize),
    /// A string: a u32 length (CDR: aligned to 4), then that many bytes.
    Str,
    /// A sequence of primitives: a u32 count, then `count * size` bytes (aligned to `align`
    /// when there are any).
    Prims { size: usize, align: usize },
    /// A sequence of other values: a u32 count, then each value; each takes `min` bytes at
    /// least.
    Each { min: usize, body: Vec<Op> },
    /// A fixed array of `n` non-primitive values, each of `min` bytes at least.
    Repeat { n: usize, min: usize, body: Vec<Op> },
}

/// A definition compiled for skipping (see the module).
#[derive(Debug, Clone)]
pub(crate) struct Skip {
    ops: Vec<Op>,
    cdr: bool,
    /// The program without loops over values, where it has none (see [`Straight`]).
    straight: Option<Box<Straight>>,
}

/// A program with no loop over values: fixed runs between sequences of primitives (a string
/// is one of bytes), each run's length looked up by where it starts, so that validating is
/// one short loop without a step's dispatch per field (the dispatch's mispredicted jumps were
/// most of the program's time). A header, a pose, an IMU reading, a scan, an image: most
/// messages are straight.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Straight {
    head: Run,
    tail: Vec<(Seq, Run)>,
}

/// A run of fixed steps: how far it goes, by the largest alignment (8 or 4: XCDR1 or
/// XCDR2; ROS 1 has no alignment steps) and by where it starts past the origin, modulo 8
/// (alignments are at most 8).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run([[usize; 8]; 2]);

/// A sequence of primitives: its count, then `size` bytes each aligned to `align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seq {
    size: usize,
    align: usize,
}

impl Run {
    /// The run of `ops` (fixed steps only).
    fn of(ops: &[Op]) -> Option<Run> {
        let mut adv = [[0usize; 8]; 2];
        for (k, max_align) in [8usize, 4].into_iter().enumerate() {
            for (start, a) in adv[k].iter_mut().enumerate() {
                let mut rel = start;
                for op in ops {
                    rel = match op {
                        Op::Take(n) => rel.checked_add(*n)?,
                        Op::Align(n) => rel + (rel.wrapping_neg() & ((*n).min(max_align) - 1)),
                        _ => return None,
                    };
                }
                *a = rel - start;
            }
        }
        Some(Run(adv))
    }
}

impl Straight {
    /// `ops` as fixed runs between sequences of primitives; `None` where it loops over
    /// other values.
    fn of(ops: &[Op]) -> Option<Straight> {
        let mut parts = ops.split(|op| matches!(op, Op::Str | Op::Prims { .. }));
        let head = Run::of(parts.next()?)?;
        let seqs = ops.iter().filter_map(|op| match op {
            Op::Str => Some(Seq { size: 1, align: 1 }),
            Op::Prims { size, align } => Some(Seq {
                size: *size,
                align: *align,
            }),
            _ => None,
        });
        let tail = seqs
            .zip(parts)
            .map(|(q, run)| Some((q, Run::of(run)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Straight { head, tail })
    }

    /// Where the walk of `w` (at its start) ends, if it does: the steps of
    /// [`Walk::run`] (a string's count, its bytes; a sequence's count, its padding, its
    /// values) with each run looked up.
    #[inline]
    fn end(&self, w: &mut Walk<'_>, cdr: bool) -> Option<usize> {
        let k = usize::from(w.max_align != 8);
        let len = w.data.len();
        w.pos += self.head.0[k][0];
        if w.pos > len {
            return None;
        }
        for (q, run) in &self.tail {
            let count = w.u32(cdr)? as usize;
            if count > 0 && cdr {
                w.align(q.align)?;
            }
            w.take(count.checked_mul(q.size)?)?;
            w.pos += run.0[k][(w.pos - w.origin) & 7];
            if w.pos > len {
                return None;
            }
        }
        (w.pos <= len).then_some(w.pos)
    }
}

/// Nesting deeper than this (a hostile definition may nest without end) is left to the
/// decoder's walk.
const MAX_DEPTH: usize = 64;
/// Steps in all; past this the decoder's walk is used.
const MAX_OPS: usize = 4096;

impl Skip {
    /// The program of `plan`'s root type; `None` where the walk must do it (foreign wires,
    /// definitions too deep or too large).
    pub(crate) fn compile(plan: &Plan) -> Option<Skip> {
        let cdr = match plan.wire {
            Wire::Ros1 => false,
            Wire::Cdr => true,
            Wire::Protobuf(_) | Wire::Json => return None,
        };
        let mut c = Compiler {
            plan,
            cdr,
            count: 0,
        };
        let mut ops = Vec::new();
        c.message(0, 0, &mut ops)?;
        let straight = Straight::of(&ops).map(Box::new);
        Some(Skip { ops, cdr, straight })
    }

    /// The program of what comes before a field: `path` names it, a (type, field index) per
    /// level from the root, each field but the last a message (not an array). `None` where the
    /// walk must do it.
    pub(crate) fn compile_to(plan: &Plan, path: &[(usize, usize)]) -> Option<Skip> {
        if !matches!(plan.wire, Wire::Cdr) {
            return None;
        }
        let mut c = Compiler {
            plan,
            cdr: true,
            count: 0,
        };
        let mut ops = Vec::new();
        for (depth, &(ty, fi)) in path.iter().enumerate() {
            for f in plan.def.types.get(ty)?.fields.get(..fi)? {
                c.field(f, depth, &mut ops)?;
            }
        }
        let straight = Straight::of(&ops).map(Box::new);
        Some(Skip {
            ops,
            cdr: true,
            straight,
        })
    }

    /// Where the walk of a [`Self::compile_to`] program over `data` ends (where the field it
    /// leads to starts, before its own alignment), if it does.
    pub(crate) fn seek(&self, data: &[u8]) -> Option<usize> {
        self.end(data)
    }

    /// Whether the message `data` is walked over to its end (CDR: within the 3 bytes of end
    /// padding), as [`Plan::validates`] says.
    #[inline]
    pub(crate) fn validates(&self, data: &[u8]) -> bool {
        let slack = if self.cdr { 3 } else { 0 };
        self.end(data).is_some_and(|end| end + slack >= data.len())
    }

    /// Where the program's walk over `data` (after its CDR header) ends, if it does.
    #[inline]
    fn end(&self, data: &[u8]) -> Option<usize> {
        let mut w = Walk {
            data,
            pos: 0,
            origin: 0,
            be: false,
            max_align: 8,
        };
        if self.cdr {
            let h = data.get(..4)?;
            (w.be, w.max_align) = crate::encoding::cdr::encapsulation(h[0], h[1])?;
            (w.pos, w.origin) = (4, 4);
        }
        match &self.straight {
            Some(s) => s.end(&mut w, self.cdr),
            None => w.run(&self.ops, self.cdr).map(|()| w.pos),
        }
    }
}

struct Compiler<'a> {
    plan: &'a Plan,
    cdr: bool,
    count: usize,
}

impl Compiler<'_> {
    fn push(&mut self, ops: &mut Vec<Op>, op: Op) -> Option<()> {
        self.count += 1;
        if self.count > MAX_OPS {
            return None;
        }
        match op {
            Op::Align(n) if !n.is_power_of_two() => return None,
            Op::Prims { align, .. } if !align.is_power_of_two() => return None,
            Op::Align(n) if !self.cdr || n <= 1 => {}
            Op::Take(0) => {}
            Op::Take(n) => match ops.last_mut() {
                Some(Op::Take(m)) => *m += n,
                _ => ops.push(Op::Take(n)),
            },
            op => ops.push(op),
        }
        Some(())
    }

    fn message(&mut self, ty: usize, depth: usize, ops: &mut Vec<Op>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let fields = &self.plan.def.types.get(ty)?.fields;
        if fields.is_empty() && self.cdr {
            // An empty type is one byte in CDR (no alignment).
            return self.push(ops, Op::Take(1));
        }
        for f in fields {
            self.field(f, depth, ops)?;
        }
        Some(())
    }

    fn scalar(&mut self, ty: &FieldType, depth: usize, ops: &mut Vec<Op>) -> Option<()> {
        match ty {
            FieldType::Primitive(Primitive::String) => self.push(ops, Op::Str),
            FieldType::Primitive(p) => {
                self.push(ops, Op::Align(prim_align(*p)))?;
                self.push(ops, Op::Take(p.size()?))
            }
            FieldType::Message(j) => self.message(*j, depth + 1, ops),
        }
    }

    fn field(&mut self, f: &Field, depth: usize, ops: &mut Vec<Op>) -> Option<()> {
        let (_, min) = self.plan.elem_sizes(f);
        match (f.array, &f.ty) {
            (ArrayKind::Scalar, ty) => self.scalar(ty, depth, ops),
            (ArrayKind::Fixed(n), FieldType::Primitive(Primitive::U8)) => {
                self.push(ops, Op::Take(n))
            }
            (ArrayKind::Fixed(n), FieldType::Primitive(p)) if *p != Primitive::String => {
                if n > 0 {
                    self.push(ops, Op::Align(prim_align(*p)))?;
                }
                self.push(ops, Op::Take(n.checked_mul(p.size()?)?))
            }
            (ArrayKind::Fixed(n), ty) => {
                if min == 0 && n as u64 > MAX_EMPTY_ELEMENTS {
                    return None;
                }
                let mut body = Vec::new();
                self.scalar(ty, depth, &mut body)?;
                self.push(ops, Op::Repeat { n, min, body })
            }
            (ArrayKind::Variable, FieldType::Primitive(Primitive::U8)) => {
                self.push(ops, Op::Prims { size: 1, align: 1 })
            }
            (ArrayKind::Variable, FieldType::Primitive(p)) if *p != Primitive::String => self.push(
                ops,
                Op::Prims {
                    size: p.size()?,
                    align: prim_align(*p),
                },
            ),
            (ArrayKind::Variable, ty) => {
                let mut body = Vec::new();
                self.scalar(ty, depth, &mut body)?;
                self.push(ops, Op::Each { min, body })
            }
        }
    }
}

/// A walk over one message.
struct Walk<'d> {
    data: &'d [u8],
    pos: usize,
    origin: usize,
    be: bool,
    max_align: usize,
}

impl Walk<'_> {
    #[inline]
    fn take(&mut self, n: usize) -> Option<()> {
        if n > self.data.len() - self.pos {
            return None;
        }
        self.pos += n;
        Some(())
    }

    #[inline]
    fn align(&mut self, n: usize) -> Option<()> {
        // Alignments are powers of two (checked when compiled): padding by a mask, not a
        // division (the division was most of the walk).
        let mask = n.min(self.max_align) - 1;
        let rel = self.pos - self.origin;
        self.take(rel.wrapping_neg() & mask)
    }

    #[inline]
    fn u32(&mut self, cdr: bool) -> Option<u32> {
        if cdr {
            self.align(4)?;
        }
        let b = self.data.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        let a = [b[0], b[1], b[2], b[3]];
        Some(if self.be {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    /// A sequence's count, refused as the decoder refuses it: more elements than the bytes
    /// left can hold, or too many empty ones.
    fn count(&mut self, cdr: bool, min: usize) -> Option<u64> {
        let count = u64::from(self.u32(cdr)?);
        self.fits(count, min)?;
        Some(count)
    }

    fn fits(&self, count: u64, min: usize) -> Option<()> {
        let avail = (self.data.len() - self.pos) as u64;
        if count.saturating_mul(min as u64) > avail || (min == 0 && count > MAX_EMPTY_ELEMENTS) {
            return None;
        }
        Some(())
    }

    fn run(&mut self, ops: &[Op], cdr: bool) -> Option<()> {
        for op in ops {
            match op {
                Op::Take(n) => self.take(*n)?,
                Op::Align(n) => self.align(*n)?,
                Op::Str => {
                    let n = self.u32(cdr)?;
                    self.take(n as usize)?;
                }
                Op::Prims { size, align } => {
                    let count = self.count(cdr, *size)?;
                    if count > 0 && cdr {
                        self.align(*align)?;
                    }
                    self.take(usize::try_from(count).ok()? * size)?;
                }
                Op::Each { min, body } => {
                    let count = self.count(cdr, *min)?;
                    for _ in 0..count {
                        self.run(body, cdr)?;
                    }
                }
                Op::Repeat { n, min, body } => {
                    self.fits(*n as u64, *min)?;
                    for _ in 0..*n {
                        self.run(body, cdr)?;
                    }
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::definition::msg::MsgDef;
    use crate::encoding::extract::Extractor;
    use crate::encoding::path::FieldPath;

    fn plan(text: &str, cdr: bool) -> Plan {
        let def = MsgDef::parse("t/T", text).unwrap();
        if cdr {
            Plan::new_cdr(def)
        } else {
            Plan::new(def)
        }
    }

    /// The walk's answer and the program's, for `data` and every prefix of it and every
    /// single byte set to 0x00, 0x01 and 0xff.
    fn agree(p: &Plan, data: &[u8]) -> usize {
        let skip = Skip::compile(p).expect("compiles");
        let mut n = 0;
        let mut one = |d: &[u8]| {
            assert_eq!(skip.validates(d), p.validates_walk(d), "{d:?}");
            n += 1;
        };
        for len in 0..=data.len() {
            one(&data[..len]);
        }
        for i in 0..data.len() {
            for b in [0u8, 1, 0xff] {
                let mut d = data.to_vec();
                d[i] = b;
                one(&d);
            }
        }
        let mut longer = data.to_vec();
        longer.extend_from_slice(&[0, 0, 0, 0, 0]);
        for len in data.len()..longer.len() {
            one(&longer[..len]);
        }
        n
    }

    #[test]
    fn compiles_fixed_runs_into_one_step() {
        let p = plan("float64 x\nfloat64 y\nstring s\nuint8[3] b\nint32 i", false);
        let s = Skip::compile(&p).unwrap();
        assert_eq!(s.ops, vec![Op::Take(16), Op::Str, Op::Take(7)]);
        let p = plan("uint8 a\nfloat64 x\nstring s\nuint16 u", true);
        let s = Skip::compile(&p).unwrap();
        assert_eq!(
            s.ops,
            vec![
                Op::Take(1),
                Op::Align(8),
                Op::Take(8),
                Op::Str,
                Op::Align(2),
                Op::Take(2)
            ]
        );
    }

    #[test]
    fn agrees_with_the_walk_on_every_kind_of_field() {
        let text = "uint8 a\nfloat64 x\nstring s\nint16[] v\nuint8[] raw\nstring[] names\n\
                    float32[2] f2\nbool[2] bb\nstring[2] s2\ntime t\nduration d\n";
        for cdr in [false, true] {
            let p = plan(text, cdr);
            let mut data = Vec::new();
            if cdr {
                data.extend_from_slice(&[0, 1, 0, 0]);
            }
            // a, padding, x
            data.push(7);
            if cdr {
                data.extend_from_slice(&[0; 7]);
            }
            data.extend_from_slice(&1.5f64.to_le_bytes());
            // s: "hi" (CDR counts the NUL)
            if cdr {
                data.extend_from_slice(&3u32.to_le_bytes());
                data.extend_from_slice(b"hi\0");
                data.push(0);
            } else {
                data.extend_from_slice(&2u32.to_le_bytes());
                data.extend_from_slice(b"hi");
            }
            data.extend_from_slice(&2u32.to_le_bytes());
            data.extend_from_slice(&[1, 0, 2, 0]);
            data.extend_from_slice(&3u32.to_le_bytes());
            data.extend_from_slice(&[9, 9, 9]);
            if cdr {
                data.push(0);
            }
            data.extend_from_slice(&1u32.to_le_bytes());
            data.extend_from_slice(&1u32.to_le_bytes());
            data.push(b'z');
            if cdr {
                data.extend_from_slice(&[0, 0, 0]);
            }
            data.extend_from_slice(&[0; 8]);
            data.extend_from_slice(&[1, 0]);
            // s2: two empty strings (CDR: the first length aligned to 4)
            if cdr {
                data.extend_from_slice(&[0, 0]);
            }
            data.extend_from_slice(&0u32.to_le_bytes());
            data.extend_from_slice(&0u32.to_le_bytes());
            // t, d
            data.extend_from_slice(&[0; 16]);
            assert!(p.validates_walk(&data), "cdr {cdr}: the sample is valid");
            assert!(agree(&p, &data) > 100);
        }
    }

    #[test]
    fn a_message_of_fixed_size_is_validated_by_its_length_as_the_walk_would() {
        // CDR: padding before x and f differs between XCDR1 (8) and XCDR2 (4) headers.
        let text = "uint8 a\nfloat64 x\nuint16 u\nfloat32[3] f\nPair p\n\
                    ================================================================================\n\
                    MSG: t/Pair\nuint8 k\nfloat64 v\n";
        let p = plan(text, true);
        let s = Skip::compile(&p).unwrap().straight.unwrap();
        // XCDR1: a, 7 pad, x, u, 2 pad, f (12), k, 7 pad, v = 48.
        // XCDR2: a, 3 pad, x, u, 2 pad, f (12), k, 3 pad, v = 40.
        assert_eq!((s.head.0[0][0], s.head.0[1][0], s.tail.len()), (48, 40, 0));
        for (header, len) in [
            ([0u8, 1, 0, 0], 52usize),
            ([0, 7, 0, 0], 44),
            ([0, 0, 0, 0], 52),
        ] {
            let mut data = header.to_vec();
            data.resize(len, 0);
            assert!(p.validates_walk(&data), "{header:?}: the sample is valid");
            assert!(agree(&p, &data) > 100);
        }
        let p = plan("uint8 a\nfloat64 x\nint32[2] i", false);
        assert_eq!(
            Skip::compile(&p).unwrap().straight.unwrap().head.0,
            [[17; 8]; 2]
        );
        assert!(agree(&p, &[0; 17]) > 50);
    }

    #[test]
    fn a_straight_message_agrees_with_the_walk() {
        // Strings and sequences of primitives between fixed runs, each run starting at
        // another alignment: the runs' lengths are looked up by where they start.
        let text = "uint8 a\nstring s\nfloat64 x\nint16[] v\nuint8 b\nfloat64[] d\nuint8[] raw\n\
                    uint32 tail\n";
        for cdr in [false, true] {
            let p = plan(text, cdr);
            let skip = Skip::compile(&p).unwrap();
            assert_eq!(skip.straight.as_ref().map(|s| s.tail.len()), Some(4));
            for header in [[0u8, 1, 0, 0], [0, 7, 0, 0], [0, 0, 0, 0]] {
                if !cdr && header != [0, 1, 0, 0] {
                    continue;
                }
                let be = header[1] & 1 == 0;
                let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
                let ma = if header[1] >= 6 { 4 } else { 8 };
                let mut data = Vec::new();
                let pad = |data: &mut Vec<u8>, n: usize| {
                    if cdr {
                        let n = n.min(ma);
                        while !(data.len() - 4).is_multiple_of(n) {
                            data.push(0);
                        }
                    }
                };
                if cdr {
                    data.extend_from_slice(&header);
                }
                data.push(1);
                pad(&mut data, 4);
                data.extend_from_slice(&u32b(if cdr { 3 } else { 2 }));
                data.extend_from_slice(if cdr { b"hi\0" } else { b"hi" });
                pad(&mut data, 8);
                data.extend_from_slice(&[0; 8]);
                pad(&mut data, 4);
                data.extend_from_slice(&u32b(3));
                pad(&mut data, 2);
                data.extend_from_slice(&[0; 6]);
                data.push(2);
                pad(&mut data, 4);
                data.extend_from_slice(&u32b(1));
                pad(&mut data, 8);
                data.extend_from_slice(&[0; 8]);
                pad(&mut data, 4);
                data.extend_from_slice(&u32b(0));
                pad(&mut data, 4);
                data.extend_from_slice(&[0; 4]);
                assert!(
                    p.validates_walk(&data),
                    "cdr {cdr} {header:?}: the sample is valid"
                );
                assert!(agree(&p, &data) > 100);
                // A field reached by the program of what comes before it (CDR) reads what
                // decoding the whole message gives, and nothing else in any prefix.
                for q in ["a", "x", "b", "tail"] {
                    let fp = FieldPath::parse(&format!("/t.{q}")).unwrap();
                    let x = Extractor::new(&p, &fp.segments).unwrap();
                    assert!(x.extract(&data).is_some(), "{q}");
                    assert_eq!(x.extract(&data), x.extract_decoded(&data), "{q} {header:?}");
                    for cut in 0..data.len() {
                        if let Some(v) = x.extract(&data[..cut]) {
                            assert_eq!(Some(v), x.extract(&data), "{q} cut at {cut}");
                        }
                    }
                }
            }
        }
        // A loop over other values leaves it to the program.
        let p = plan("uint8 a\nstring[] s", true);
        assert_eq!(Skip::compile(&p).unwrap().straight, None);
    }

    #[test]
    fn agrees_with_the_walk_on_nested_and_empty_types() {
        let text = "Inner[] items\nInner[2] pair\nEmpty e\nEmpty[] es\nfloat64 tail\n\
                    ================================================================================\n\
                    MSG: t/Inner\nstring name\nfloat32 v\n\
                    ================================================================================\n\
                    MSG: t/Empty\n";
        for cdr in [false, true] {
            let p = plan(text, cdr);
            let mut data = Vec::new();
            if cdr {
                data.extend_from_slice(&[0, 0, 0, 0]);
            }
            let be = |v: u32| {
                if cdr {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            data.extend_from_slice(&be(1));
            for _ in 0..3 {
                data.extend_from_slice(&be(1));
                data.push(b'a');
                if cdr {
                    data.extend_from_slice(&[0, 0, 0]);
                }
                data.extend_from_slice(&[0; 4]);
            }
            if cdr {
                data.push(0);
                data.extend_from_slice(&[0, 0, 0]);
            }
            data.extend_from_slice(&be(2));
            if cdr {
                data.extend_from_slice(&[0, 0]);
                data.extend_from_slice(&[0; 6]);
            }
            data.extend_from_slice(&[0; 8]);
            agree(&p, &data);
        }
    }
}
