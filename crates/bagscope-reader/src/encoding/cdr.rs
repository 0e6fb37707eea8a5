//! CDR (XCDR1 and plain XCDR2, little and big endian), as ROS 2 middlewares write it: what
//! the decoder of [`super`] does differently from ROS 1 serialization.
//!
//! - The message starts with a 4-byte encapsulation header: `00 00` big endian, `00 01` little
//!   endian (XCDR1), `00 06` / `00 07` the same in plain XCDR2, where 8-byte values align to 4;
//!   then two option bytes (the end padding).
//! - Every primitive is aligned to its own size, counted from the end of the header; sequence
//!   counts and string lengths are u32 and so align to 4.
//! - A string's length counts its terminating NUL, which is not part of the value.
//! - An empty type is one byte (rosidl's `structure_needs_at_least_one_member`), which the
//!   decoder reads and the writers write but which is no field of the message.

use super::Decoder;
use crate::definition::msg::Primitive;
use crate::encoding::{read_prim, Value};
use crate::error::DecodeError;

/// CDR alignment of a primitive (strings align their length).
pub(crate) fn prim_align(p: Primitive) -> usize {
    match p {
        Primitive::Time | Primitive::Duration | Primitive::String => 4,
        _ => p.size().unwrap_or(1),
    }
}

/// The padding before an `n`-byte-aligned value at `rel` bytes past the CDR origin, where no
/// alignment exceeds `max_align`.
#[inline]
pub(crate) fn padding(rel: usize, n: usize, max_align: usize) -> usize {
    let n = n.min(max_align);
    if n <= 1 {
        return 0;
    }
    (n - rel % n) % n
}

/// A fixed-size primitive from its bytes as stored: read in place, or its bytes swapped on a
/// stack copy when the data is big-endian.
#[inline]
pub(crate) fn prim_value(p: Primitive, bytes: &[u8], big_endian: bool) -> Value {
    let sz = bytes.len();
    if !big_endian || sz <= 1 || sz > 8 {
        return read_prim(p, bytes);
    }
    let mut a = [0u8; 8];
    a[..sz].copy_from_slice(bytes);
    for c in a[..sz].chunks_exact_mut(prim_align(p)) {
        c.reverse();
    }
    read_prim(p, &a[..sz])
}

/// The byte order (big endian?) and largest alignment of a CDR encapsulation header's first two
/// bytes; `None` where it is not plain CDR.
pub(crate) fn encapsulation(a: u8, b: u8) -> Option<(bool, usize)> {
    match (a, b) {
        (0, 0) => Some((true, 8)),
        (0, 1) => Some((false, 8)),
        // XCDR2 plain (final types): 8-byte values align to 4.
        (0, 6) => Some((true, 4)),
        (0, 7) => Some((false, 4)),
        _ => None,
    }
}

impl Decoder<'_, '_> {
    /// Reads the 4-byte CDR encapsulation header: representation and endianness.
    pub(super) fn cdr_header(&mut self) -> Result<(), DecodeError> {
        let encapsulation_err = |mut e: DecodeError| {
            e.kind = crate::error::DecodeErrorKind::Encapsulation;
            e
        };
        let h = self.take(4).map_err(encapsulation_err)?;
        let Some((be, max_align)) = encapsulation(h[0], h[1]) else {
            let (a, b) = (h[0], h[1]);
            self.pos = 0;
            return Err(encapsulation_err(self.err(format!(
                "CDR encapsulation {a:#04x} {b:#04x} is not plain CDR (0x0000/0x0001 XCDR1, 0x0006/0x0007 XCDR2)"
            ))));
        };
        self.be = be;
        self.max_align = max_align;
        self.origin = 4;
        Ok(())
    }

    /// CDR: skips padding so that the next `n`-byte value is aligned.
    pub(super) fn align(&mut self, n: usize) -> Result<(), DecodeError> {
        if !self.plan.is_cdr() || n <= 1 {
            return Ok(());
        }
        let pad = padding(self.pos - self.origin, n, self.max_align);
        if pad > 0 {
            self.take(pad)?;
        }
        Ok(())
    }
}
