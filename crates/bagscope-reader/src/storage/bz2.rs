//! A bzip2 decoder for a chunk read whole: its input is one slice and its output one buffer of
//! known size, which lets it do what libbz2's streaming decoder cannot.
//!
//! - Huffman codes are decoded through a table of the next `FAST_BITS` bits (libbz2 walks
//!   the code lengths one bit at a time), from a 64-bit window refilled eight bytes at once.
//! - A block's table is reused from the chunk before (per thread), not allocated and faulted in
//!   again (7 MB of tables a chunk cost 308,000 page faults over the benchmark bag).
//! - Each block's CRC is checked over its output at once (crc-fast) rather than a byte at a
//!   time as the bytes are made.
//!
//! Anything it does not handle (a randomised block, which no bzip2 since 0.9.5 writes) or that
//! is wrong is an error, and the caller then decodes the chunk through libbz2, which says what
//! is wrong in its own words: this decoder never has the last word on a damaged chunk. Every
//! block's CRC and the stream's combined CRC must match, so a mistake here cannot pass as data.

/// Bits looked up at once when decoding a Huffman code (longer codes, rare, are decoded by
/// length from the canonical code's first codes).
const FAST_BITS: u32 = 10;
/// Longest code bzip2 allows.
const MAX_CODE_LEN: u32 = 20;
/// Most selectors libbz2 keeps (more may be written; they are read and ignored, as 1.0.8 does).
const MAX_SELECTORS: usize = 18_002;
/// Symbols per selector.
const GROUP_SIZE: u32 = 50;

type Res<T> = std::result::Result<T, String>;

/// The input as bits, most significant first, through a 64-bit window whose top `count` bits
/// are the next ones.
struct Bits<'a> {
    data: &'a [u8],
    /// The next byte to load into the window (past the end: zeros were loaded).
    pos: usize,
    bits: u64,
    count: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        let mut b = Bits {
            data,
            pos: 0,
            bits: 0,
            count: 0,
        };
        b.refill();
        b
    }

    /// Fills the window to at least 57 bits (with zeros past the end of the input, which
    /// [`Bits::overrun`] then reports). Called with fewer than 32 bits in it.
    #[inline]
    fn refill(&mut self) {
        debug_assert!(self.count < 32);
        if let Some(w) = self.data.get(self.pos..self.pos + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            // The bytes past the whole ones taken land below them, as they are in the input:
            // the next refill ORs the same bits in again.
            self.bits |= u64::from_be_bytes(a) >> self.count;
            let take = (64 - self.count) / 8;
            self.pos += take as usize;
            self.count += take * 8;
        } else {
            while self.count <= 56 {
                let b = self.data.get(self.pos).copied().unwrap_or(0);
                self.bits |= u64::from(b) << (56 - self.count);
                self.pos += 1;
                self.count += 8;
            }
        }
    }

    /// The next `n` (at most 24) bits.
    #[inline]
    fn read(&mut self, n: u32) -> u32 {
        debug_assert!((1..=24).contains(&n));
        if self.count < 32 {
            self.refill();
        }
        let v = (self.bits >> (64 - n)) as u32;
        self.bits <<= n;
        self.count -= n;
        v
    }

    fn read32(&mut self) -> u32 {
        (self.read(16) << 16) | self.read(16)
    }

    /// Bits taken so far.
    fn consumed(&self) -> u64 {
        self.pos as u64 * 8 - u64::from(self.count)
    }

    /// Whether more bits were taken than the input has.
    fn overrun(&self) -> bool {
        self.consumed() > self.data.len() as u64 * 8
    }
}

/// The decoding table of one coding group: entries of the next [`FAST_BITS`] bits give
/// `symbol << 5 | length` (0: a longer code, or none), and the canonical code's first code,
/// count and first symbol for each length decode the longer ones.
struct Table {
    fast: Vec<u16>,
    first: [u32; MAX_CODE_LEN as usize + 1],
    count: [u32; MAX_CODE_LEN as usize + 1],
    offset: [u32; MAX_CODE_LEN as usize + 1],
    perm: Vec<u16>,
    max_len: u32,
}

impl Table {
    fn new(lens: &[u8]) -> Res<Table> {
        let mut t = Table {
            fast: vec![0; 1 << FAST_BITS],
            first: [0; MAX_CODE_LEN as usize + 1],
            count: [0; MAX_CODE_LEN as usize + 1],
            offset: [0; MAX_CODE_LEN as usize + 1],
            perm: Vec::with_capacity(lens.len()),
            max_len: 0,
        };
        for &l in lens {
            t.count[usize::from(l)] += 1;
            t.max_len = t.max_len.max(u32::from(l));
        }
        // Codes are assigned in order of length, then of symbol (libbz2's hbAssignCodes).
        let (mut code, mut at) = (0u32, 0u32);
        for l in 1..=MAX_CODE_LEN as usize {
            t.first[l] = code;
            t.offset[l] = at;
            code += t.count[l];
            if code > 1 << l {
                return Err(format!("the Huffman code lengths oversubscribe length {l}"));
            }
            at += t.count[l];
            code <<= 1;
        }
        for l in 1..=MAX_CODE_LEN as u8 {
            for (sym, _) in lens.iter().enumerate().filter(|&(_, &x)| x == l) {
                let i = t.perm.len() as u32 - t.offset[usize::from(l)];
                t.perm.push(sym as u16);
                if u32::from(l) <= FAST_BITS {
                    let c = (t.first[usize::from(l)] + i) << (FAST_BITS - u32::from(l));
                    let span = 1 << (FAST_BITS - u32::from(l));
                    let e = ((sym as u16) << 5) | u16::from(l);
                    t.fast[c as usize..(c + span) as usize].fill(e);
                }
            }
        }
        Ok(t)
    }

    /// The next symbol.
    #[inline]
    fn decode(&self, b: &mut Bits<'_>) -> Res<u32> {
        if b.count < 32 {
            b.refill();
        }
        let e = self.fast[(b.bits >> (64 - FAST_BITS)) as usize];
        if e != 0 {
            let len = u32::from(e & 31);
            b.bits <<= len;
            b.count -= len;
            return Ok(u32::from(e >> 5));
        }
        for l in FAST_BITS + 1..=self.max_len {
            let code = (b.bits >> (64 - l)) as u32;
            let i = code.wrapping_sub(self.first[l as usize]);
            if i < self.count[l as usize] {
                b.bits <<= l;
                b.count -= l;
                let at = (self.offset[l as usize] + i) as usize;
                return self
                    .perm
                    .get(at)
                    .map(|&s| u32::from(s))
                    .ok_or_else(|| "a Huffman code past its table".to_string());
            }
        }
        Err("a bit sequence that is no Huffman code".into())
    }
}

/// A block decoded as far as its Burrows-Wheeler table: `tt[i]` holds the block's `i`-th
/// byte in its low 8 bits and, above them, the link of the inverse transform.
struct Block {
    crc: u32,
    orig: u32,
    tt: Vec<u32>,
}

/// Reads a block's header and symbols into `tt` (reused) and links it.
fn read_block(b: &mut Bits<'_>, max_block: usize, mut tt: Vec<u32>) -> Res<Block> {
    let crc = b.read32();
    if b.read(1) != 0 {
        return Err("a randomised block".into());
    }
    let orig = b.read(24);
    // The symbols in use.
    let used16 = b.read(16);
    let mut seq_to_unseq = [0u8; 256];
    let mut n_in_use = 0usize;
    for i in 0..16 {
        if used16 & (0x8000 >> i) != 0 {
            let bits = b.read(16);
            for j in 0..16 {
                if bits & (0x8000 >> j) != 0 {
                    seq_to_unseq[n_in_use] = (i * 16 + j) as u8;
                    n_in_use += 1;
                }
            }
        }
    }
    if n_in_use == 0 {
        return Err("a block that uses no symbol".into());
    }
    let alpha = n_in_use + 2;
    let n_groups = b.read(3) as usize;
    if !(2..=6).contains(&n_groups) {
        return Err(format!("{n_groups} coding groups (2 to 6 allowed)"));
    }
    let n_sel = b.read(15) as usize;
    if n_sel == 0 {
        return Err("no selectors".into());
    }
    // Selectors, move-to-front coded in unary.
    let mut pos: [u8; 6] = [0, 1, 2, 3, 4, 5];
    let mut selectors = Vec::with_capacity(n_sel.min(MAX_SELECTORS));
    for _ in 0..n_sel {
        let mut j = 0usize;
        while b.read(1) == 1 {
            j += 1;
            if j >= n_groups {
                return Err("a selector past the coding groups".into());
            }
            if b.overrun() {
                return Err("the data ends in the selectors".into());
            }
        }
        let v = pos[j];
        pos.copy_within(0..j, 1);
        pos[0] = v;
        if selectors.len() < MAX_SELECTORS {
            selectors.push(v);
        }
    }
    // Code lengths, delta coded.
    let mut tables = Vec::with_capacity(n_groups);
    let mut lens = vec![0u8; alpha];
    for _ in 0..n_groups {
        let mut cur = b.read(5);
        for l in lens.iter_mut() {
            loop {
                if !(1..=MAX_CODE_LEN).contains(&cur) {
                    return Err(format!("a code length of {cur}"));
                }
                if b.read(1) == 0 {
                    break;
                }
                if b.read(1) == 0 {
                    cur += 1;
                } else {
                    cur -= 1;
                }
                if b.overrun() {
                    return Err("the data ends in the code lengths".into());
                }
            }
            *l = cur as u8;
        }
        tables.push(Table::new(&lens)?);
    }
    // The symbols: move-to-front indexes and runs of the front one (RUNA, RUNB).
    let eob = (n_in_use + 1) as u32;
    let mut yy: [u8; 256] = std::array::from_fn(|i| i as u8);
    let mut counts = [0u32; 256];
    tt.clear();
    tt.reserve(max_block);
    let (mut run, mut run_n) = (0usize, 0usize);
    let mut sel = selectors.iter();
    let mut table = &tables[0];
    let mut left = 0u32;
    loop {
        if left == 0 {
            let Some(&s) = sel.next() else {
                return Err("more symbols than the selectors cover".into());
            };
            table = tables
                .get(usize::from(s))
                .ok_or_else(|| "a selector past the coding groups".to_string())?;
            left = GROUP_SIZE;
        }
        left -= 1;
        let sym = table.decode(b)?;
        if sym <= 1 {
            if run_n == 0 {
                run_n = 1;
            }
            run += (sym as usize + 1) * run_n;
            run_n <<= 1;
            if run_n >= 2 << 20 || run > max_block {
                return Err("a run past the block size".into());
            }
            continue;
        }
        if run_n != 0 {
            let uc = seq_to_unseq[usize::from(yy[0])];
            if tt.len() + run > max_block {
                return Err("more bytes than the block size".into());
            }
            counts[usize::from(uc)] += run as u32;
            tt.resize(tt.len() + run, u32::from(uc));
            (run, run_n) = (0, 0);
        }
        if sym == eob {
            break;
        }
        if tt.len() >= max_block {
            return Err("more bytes than the block size".into());
        }
        if b.overrun() {
            return Err("the data ends in a block".into());
        }
        // sym is below the alphabet's size, so nn < n_in_use <= 256.
        let nn = ((sym - 1) & 0xff) as usize;
        let v = yy[nn];
        if nn < 16 {
            // Most indexes are small: shifted in place rather than by a call to memmove.
            for k in (1..=nn).rev() {
                yy[k] = yy[k - 1];
            }
        } else {
            yy.copy_within(0..nn, 1);
        }
        yy[0] = v;
        let uc = seq_to_unseq[usize::from(v)];
        counts[usize::from(uc)] += 1;
        tt.push(u32::from(uc));
    }
    if b.overrun() {
        return Err("the data ends in a block".into());
    }
    if orig as usize >= tt.len() {
        return Err(format!(
            "the block's origin {orig} is past its {} bytes",
            tt.len()
        ));
    }
    // Link: the i-th byte's successor in the inverse transform.
    let mut cf = [0u32; 256];
    let mut sum = 0u32;
    for (c, n) in cf.iter_mut().zip(counts) {
        *c = sum;
        sum += n;
    }
    for i in 0..tt.len() {
        let uc = (tt[i] & 0xff) as usize;
        let p = cf[uc] as usize;
        cf[uc] += 1;
        tt[p] |= (i as u32) << 8;
    }
    Ok(Block { crc, orig, tt })
}

/// Undoes the initial run-length coding of one block's bytes as they come from the walk:
/// four equal bytes are followed by a count of more.
struct Unrle {
    last: u32,
    run: u32,
}

impl Unrle {
    fn new() -> Self {
        Unrle { last: 256, run: 0 }
    }

    #[inline]
    fn push(&mut self, c: u32, out: &mut Vec<u8>) {
        if self.run == 4 {
            out.resize(out.len() + c as usize, self.last as u8);
            self.run = 0;
            return;
        }
        if c == self.last {
            self.run += 1;
        } else {
            self.run = 1;
            self.last = c;
        }
        out.push(c as u8);
    }
}

/// Walks a block's inverse transform into `out`, its output checked against its CRC.
fn walk(block: &Block, out: &mut Vec<u8>, limit: usize) -> Res<()> {
    let start = out.len();
    let mut un = Unrle::new();
    let tt = &block.tt;
    let mut p = (tt[block.orig as usize] >> 8) as usize;
    for _ in 0..tt.len() {
        let e = tt[p];
        p = (e >> 8) as usize;
        un.push(e & 0xff, out);
    }
    // Checked once the block is walked: a block makes under 52 bytes a byte of its table
    // (4 bytes and a count make at most 259), so what is made past the limit is bounded.
    if out.len() > limit {
        return Err("more bytes than the chunk declares".into());
    }
    if crc(&out[start..]) != block.crc {
        return Err("a block's CRC does not match its data".into());
    }
    Ok(())
}

fn crc(data: &[u8]) -> u32 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Bzip2, data) as u32
}

/// Decodes the bzip2 stream at the start of `data` into `out` (cleared first), which must not
/// grow past `limit` bytes. What follows the stream is not read.
pub fn decode(data: &[u8], out: &mut Vec<u8>, limit: usize) -> Res<()> {
    out.clear();
    let mut b = Bits::new(data);
    if (b.read(8), b.read(8), b.read(8)) != (u32::from(b'B'), u32::from(b'Z'), u32::from(b'h')) {
        return Err("no bzip2 stream header".into());
    }
    let level = b.read(8).wrapping_sub(u32::from(b'0'));
    if !(1..=9).contains(&level) {
        return Err("a bzip2 block size out of range".into());
    }
    let max_block = level as usize * 100_000;
    // The table of the chunk before, on this thread: a fresh 3.6 MB table a block costs more in
    // page faults than in decoding.
    let mut tt = SCRATCH.with(|s| s.take());
    let r = decode_blocks(&mut b, max_block, out, limit, &mut tt);
    SCRATCH.with(|s| s.set(tt));
    let combined = r?;
    let stored = b.read32();
    if b.overrun() {
        return Err("the data ends in the stream".into());
    }
    if stored != combined {
        return Err("the stream's CRC does not match its blocks".into());
    }
    Ok(())
}

thread_local! {
    /// Each thread's block table (see [`decode`]).
    static SCRATCH: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The blocks of a stream, up to its end marker; returns the combined CRC.
fn decode_blocks(
    b: &mut Bits<'_>,
    max_block: usize,
    out: &mut Vec<u8>,
    limit: usize,
    tt: &mut Vec<u32>,
) -> Res<u32> {
    let mut combined = 0u32;
    loop {
        let (m1, m2) = (b.read(24), b.read(24));
        if (m1, m2) == (0x17_7245, 0x38_5090) {
            return Ok(combined);
        }
        if (m1, m2) != (0x31_4159, 0x26_5359) {
            return Err("no block or stream end where one must be".into());
        }
        let blk = read_block(b, max_block, std::mem::take(tt))?;
        combined = combined.rotate_left(1) ^ blk.crc;
        let r = walk(&blk, out, limit);
        *tt = blk.tt;
        r?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn compress(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Inputs that exercise runs, every byte value, long codes and several blocks.
    fn samples() -> Vec<Vec<u8>> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let random: Vec<u8> = (0..250_000).map(|_| rnd() as u8).collect();
        // Skewed: a few common bytes and rare ones (long codes), with runs of every length.
        let skewed: Vec<u8> = (0..300_000)
            .map(|_| {
                let r = rnd();
                if r % 1000 == 0 {
                    (r >> 20) as u8
                } else {
                    b"aab"[(r >> 12) as usize % 3]
                }
            })
            .collect();
        let mut runs = Vec::new();
        for k in 0..3000usize {
            runs.extend(std::iter::repeat_n((k % 7) as u8, k % 300));
        }
        vec![
            Vec::new(),
            b"a".to_vec(),
            b"aaaa".to_vec(),
            b"aaaaa".to_vec(),
            vec![7u8; 400_000],
            (0..=255u8).collect(),
            random,
            skewed,
            runs,
        ]
    }

    #[test]
    fn decodes_what_libbz2_writes() {
        for (k, data) in samples().iter().enumerate() {
            for level in [1, 9] {
                let z = compress(data, level);
                let mut out = Vec::new();
                decode(&z, &mut out, data.len()).unwrap_or_else(|e| panic!("sample {k}: {e}"));
                assert!(out == *data, "sample {k} level {level}");
                // One byte less room than it needs: refused.
                if !data.is_empty() {
                    assert!(decode(&z, &mut out, data.len() - 1).is_err());
                }
            }
        }
    }

    /// The tests over the shared corpora (`../shared`): the corpus tier.
    mod shared_corpus {
        use super::*;

        /// Every bz2 chunk of the ROS 1 corpus (written by rosbag, rosbag.js, MATLAB) decodes to
        /// what libbz2 makes of it.
        #[test]
        #[ignore = "needs ../shared (TESTING.md): cargo xtask test corpus"]
        fn decodes_the_corpus_bz2_chunks_as_libbz2_does() {
            use std::io::Read;
            let root =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bags");
            assert!(root.is_dir(), "the corpus is missing: {}", root.display());
            let (mut stack, mut chunks) = (vec![root], 0);
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                        continue;
                    }
                    if p.extension().is_none_or(|x| x != "bag") {
                        continue;
                    }
                    let f = std::fs::read(&p).unwrap();
                    if !f.starts_with(b"#ROSBAG V2.0\n") {
                        continue;
                    }
                    // Records: header length, header (length-prefixed name=value fields), data.
                    let le = |at: usize| {
                        f.get(at..at + 4)
                            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    };
                    let mut pos = 13;
                    while let Some(hl) = le(pos) {
                        let Some(header) = f.get(pos + 4..pos + 4 + hl) else {
                            break;
                        };
                        let Some(dl) = le(pos + 4 + hl) else { break };
                        let Some(data) = f.get(pos + 8 + hl..pos + 8 + hl + dl) else {
                            break;
                        };
                        pos += 8 + hl + dl;
                        let mut fields = std::collections::HashMap::new();
                        let mut i = 0;
                        while let Some(n) = header
                            .get(i..i + 4)
                            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                        {
                            let Some(kv) = header.get(i + 4..i + 4 + n) else {
                                break;
                            };
                            if let Some(eq) = kv.iter().position(|&c| c == b'=') {
                                fields.insert(kv[..eq].to_vec(), kv[eq + 1..].to_vec());
                            }
                            i += 4 + n;
                        }
                        if fields.get(&b"op"[..]).map(Vec::as_slice) != Some(&[5u8][..])
                            || fields.get(&b"compression"[..]).map(Vec::as_slice)
                                != Some(&b"bz2"[..])
                        {
                            continue;
                        }
                        let mut want = Vec::new();
                        bzip2::read::BzDecoder::new(data)
                            .read_to_end(&mut want)
                            .unwrap();
                        let mut got = Vec::new();
                        decode(data, &mut got, want.len())
                            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                        assert!(got == want, "{}", p.display());
                        chunks += 1;
                    }
                }
            }
            assert!(chunks >= 40, "{chunks} bz2 chunks");
        }
    }

    /// Damaged streams give an error, never a panic, and never data other than the original.
    #[test]
    fn damage_is_an_error() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i * 7 % 251) as u8 ^ (i >> 9) as u8)
            .collect();
        let z = compress(&data, 1);
        let mut out = Vec::new();
        for cut in (0..z.len()).step_by(31) {
            assert!(
                decode(&z[..cut], &mut out, data.len()).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = 0;
        for i in (0..z.len()).step_by(7) {
            for bit in [0x01u8, 0x80] {
                let mut d = z.clone();
                d[i] ^= bit;
                match decode(&d, &mut out, data.len()) {
                    Ok(()) => assert!(out == data, "flip at {i} gave other data"),
                    Err(_) => bad += 1,
                }
            }
        }
        assert!(bad > 0);
    }
}
