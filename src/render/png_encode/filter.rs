//! PNG row filters (PNG spec, section 9) for 8-bit RGB, i.e. 3 bytes per pixel.
//!
//! Every filter reads only unfiltered bytes (`cur` and `prev`), never its own output, so rows can be filtered in any
//! order and on any thread; the loops are written over zipped slices so LLVM can vectorise them.

/// Bytes per complete pixel: the distance to the "left" byte `a`.
const BPP: usize = 3;

/// Row filter choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFilter {
    /// Type 0: bytes as they are.
    None,
    /// Type 1: difference to the byte one pixel to the left.
    Sub,
    /// Type 2: difference to the byte above.
    Up,
    /// Type 3: difference to the mean of left and above.
    Avg,
    /// Type 4: difference to the Paeth predictor of left, above, upper-left.
    Paeth,
    /// Per row, the type (0-4) with the smallest sum of absolute signed differences (libpng's heuristic).
    Adaptive,
}

/// Filter one row. `prev` is the unfiltered row above (all zeros for the first image row), `out` receives the
/// filter type byte followed by the filtered row, so `out.len() == cur.len() + 1`. `scratch` is only used by
/// `Adaptive` and must then hold `cur.len()` bytes.
pub(crate) fn filter_row(filter: RowFilter, prev: &[u8], cur: &[u8], out: &mut [u8], scratch: &mut [u8]) {
    debug_assert_eq!(prev.len(), cur.len());
    debug_assert_eq!(out.len(), cur.len() + 1);
    let (ty, body) = out.split_first_mut().expect("out holds at least the filter byte");
    *ty = match filter {
        RowFilter::None => {
            body.copy_from_slice(cur);
            0
        }
        RowFilter::Sub => {
            sub(cur, body);
            1
        }
        RowFilter::Up => {
            up(prev, cur, body);
            2
        }
        RowFilter::Avg => {
            avg(prev, cur, body);
            3
        }
        RowFilter::Paeth => {
            paeth(prev, cur, body);
            4
        }
        RowFilter::Adaptive => adaptive(prev, cur, body, scratch),
    };
}

fn sub(cur: &[u8], out: &mut [u8]) {
    let n = cur.len();
    let head = n.min(BPP);
    out[..head].copy_from_slice(&cur[..head]);
    if n > BPP {
        for ((o, &x), &a) in out[BPP..].iter_mut().zip(&cur[BPP..]).zip(&cur[..n - BPP]) {
            *o = x.wrapping_sub(a);
        }
    }
}

fn up(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    for ((o, &x), &b) in out.iter_mut().zip(cur).zip(prev) {
        *o = x.wrapping_sub(b);
    }
}

fn avg(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    let n = cur.len();
    let head = n.min(BPP);
    // The first pixel has no left neighbour: a = 0.
    for i in 0..head {
        out[i] = cur[i].wrapping_sub(prev[i] >> 1);
    }
    if n > BPP {
        let iter = out[BPP..].iter_mut().zip(&cur[BPP..]).zip(&prev[BPP..]).zip(&cur[..n - BPP]);
        for (((o, &x), &b), &a) in iter {
            *o = x.wrapping_sub(((u16::from(a) + u16::from(b)) >> 1) as u8);
        }
    }
}

/// The Paeth predictor, in i16 so that the vectorised loop needs no branches.
#[inline(always)]
fn paeth_predict(a: u8, b: u8, c: u8) -> u8 {
    let (a16, b16, c16) = (i16::from(a), i16::from(b), i16::from(c));
    let pa = (b16 - c16).abs();
    let pb = (a16 - c16).abs();
    let pc = (a16 + b16 - 2 * c16).abs();
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

fn paeth(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    let n = cur.len();
    let head = n.min(BPP);
    // First pixel: a = c = 0, so the predictor is b.
    for i in 0..head {
        out[i] = cur[i].wrapping_sub(prev[i]);
    }
    if n > BPP {
        let iter = out[BPP..].iter_mut().zip(&cur[BPP..]).zip(&prev[BPP..]).zip(&cur[..n - BPP]).zip(&prev[..n - BPP]);
        for ((((o, &x), &b), &a), &c) in iter {
            *o = x.wrapping_sub(paeth_predict(a, b, c));
        }
    }
}

/// Sum of the bytes read as signed values, in absolute value: small when the filtered row is close to zero,
/// which is what deflate compresses best.
fn cost(row: &[u8]) -> u64 {
    row.iter().map(|&v| u64::from((v as i8).unsigned_abs())).sum()
}

fn adaptive(prev: &[u8], cur: &[u8], out: &mut [u8], scratch: &mut [u8]) -> u8 {
    // Keep the best candidate in `out`, try the others in `scratch`.
    let mut best_ty = 0u8;
    out.copy_from_slice(cur);
    let mut best_cost = cost(out);
    for ty in 1..=4u8 {
        match ty {
            1 => sub(cur, scratch),
            2 => up(prev, cur, scratch),
            3 => avg(prev, cur, scratch),
            _ => paeth(prev, cur, scratch),
        }
        let c = cost(scratch);
        if c < best_cost {
            best_cost = c;
            best_ty = ty;
            out.copy_from_slice(scratch);
        }
    }
    best_ty
}
