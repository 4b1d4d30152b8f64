//! Reading a box of a volume whose dataset holds its axes in another order than the model's
//! `[iline][xline][sample]` (the order its dimension scales name, `order.rs`).
//!
//! Two ways, chosen by where the samples are:
//!
//! - **Samples last** (`[xline][iline][sample]`): every trace is contiguous in the dataset as in the
//!   model, so the box is read one inline at a time, each read being the crosslines of that inline
//!   straight into their place in the caller's buffer: no copy of ours, no memory beyond the box. A
//!   chunked dataset is opened with a chunk cache that holds the chunks one such read touches, up to
//!   [`SLAB_MAX_BYTES`], so that the next inline finds them decoded instead of reading them again.
//! - **Any other order**: the box is read in slabs across the dataset's first dimension, one chunk deep
//!   (the chunk boundaries of a chunked dataset, so each chunk is read once), and at most
//!   [`SLAB_MAX_BYTES`], into one buffer, whose values are then put in their places in the caller's
//!   buffer. A read takes the box plus that one slab.

use std::ops::Range;

use ::hdf5::Dataset;

use crate::hdf5::raw;
use seis_core::cancel::CancelToken;
use seis_core::volume::IndexBox;

/// The most memory a read of a volume stored in another order takes beyond the box: one slab (or, for
/// samples last, the chunk cache).
pub(crate) const SLAB_MAX_BYTES: usize = 256 << 20;

/// The order in which only inlines and crosslines trade places: each read is one inline.
pub(super) const SAMPLES_LAST: [usize; 3] = [1, 0, 2];

/// The chunk cache (slots, bytes) for reading a dataset of shape `stored`, chunked as `chunk`, stored in
/// [`SAMPLES_LAST`] order with values of `value_bytes`: the chunks that one inline crosses, at most
/// [`SLAB_MAX_BYTES`].
pub(super) fn samples_last_cache(stored: [usize; 3], chunk: [usize; 3], value_bytes: usize) -> (usize, usize) {
    let chunk = chunk.map(|c| c.max(1));
    let chunks_crossed = stored[0].div_ceil(chunk[0]).saturating_mul(stored[2].div_ceil(chunk[2]));
    let chunk_bytes = chunk.iter().product::<usize>().saturating_mul(value_bytes);
    let bytes = chunks_crossed.saturating_mul(chunk_bytes).min(SLAB_MAX_BYTES);
    // HDF5 finds a chunk in its cache by the chunk's index modulo the slots: many more slots than chunks
    // make two chunks in one slot (which evicts one) rare.
    let slots = chunks_crossed.saturating_mul(100).clamp(521, 1 << 20);
    (slots, bytes)
}

/// The ranges of the box `b` (model order) in the order of the dataset's dimensions.
fn stored_ranges(axes: [usize; 3], b: &IndexBox) -> [Range<usize>; 3] {
    let model = [b.il.clone(), b.xl.clone(), b.s.clone()];
    axes.map(|axis| model[axis].clone())
}

fn index_box([a, b, c]: [Range<usize>; 3]) -> IndexBox {
    // The box's fields are only its three dimensions here, in the dataset's order.
    IndexBox { il: a, xl: b, s: c }
}

/// Read box `b` (model order) of `ds`, whose dimension `d` holds axis `axes[d]` of the model, into `out`
/// (`b.len()` values in model order). A stop of the process ends it with `out` incomplete, which the
/// caller checks.
pub(super) fn read_box(ds: &Dataset, axes: [usize; 3], b: &IndexBox, out: &mut [f32]) -> ::hdf5::Result<()> {
    assert_eq!(out.len(), b.len(), "the caller checks the buffer against the box");
    if axes == SAMPLES_LAST {
        let plane = b.xl.len() * b.s.len();
        for (il, part) in b.il.clone().zip(out.chunks_exact_mut(plane)) {
            if CancelToken::process().stopped().is_some() {
                return Ok(());
            }
            raw::read_box(ds, &index_box([b.xl.clone(), il..il + 1, b.s.clone()]), part)?;
        }
        return Ok(());
    }
    let ranges = stored_ranges(axes, b);
    let plane = ranges[1].len() * ranges[2].len();
    let most = (SLAB_MAX_BYTES / 4 / plane.max(1)).max(1);
    let deep = match ds.chunk() {
        Some(chunk) => chunk[0].clamp(1, most),
        None => most,
    };
    let mut slab = Vec::new();
    slab.try_reserve_exact(deep.min(ranges[0].len()) * plane)
        .map_err(|_| ::hdf5::Error::from("cannot allocate the slab to reorder the volume's axes in"))?;
    // Where one step along each dimension of the dataset goes in `out`.
    let model_strides = [b.xl.len() * b.s.len(), b.s.len(), 1];
    let strides = axes.map(|axis| model_strides[axis]);
    let mut start = ranges[0].start;
    while start < ranges[0].end {
        if CancelToken::process().stopped().is_some() {
            return Ok(());
        }
        // Up to the next multiple of the slab's depth: chunk boundaries for a chunked dataset.
        let end = ((start / deep + 1) * deep).min(ranges[0].end);
        slab.resize((end - start) * plane, 0.0);
        raw::read_box(ds, &index_box([start..end, ranges[1].clone(), ranges[2].clone()]), &mut slab)?;
        let mut values = slab.iter();
        for a in start - ranges[0].start..end - ranges[0].start {
            for c in 0..ranges[1].len() {
                let base = a * strides[0] + c * strides[1];
                for (k, v) in (0..ranges[2].len()).zip(&mut values) {
                    out[base + k * strides[2]] = *v;
                }
            }
        }
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_ranges_follow_the_dataset() {
        let b = IndexBox { il: 1..3, xl: 4..9, s: 0..7 };
        assert_eq!(stored_ranges([2, 0, 1], &b), [0..7, 1..3, 4..9]);
        assert_eq!(stored_ranges(SAMPLES_LAST, &b), [4..9, 1..3, 0..7]);
    }

    #[test]
    fn the_cache_holds_the_chunks_of_one_inline_up_to_the_bound() {
        // 10 × 4 chunks of 8 × 2 × 16 float32 (1 kB each) are crossed by one inline.
        assert_eq!(samples_last_cache([80, 6, 64], [8, 2, 16], 4), (4000, 40 * 1024));
        let (_, bytes) = samples_last_cache([100_000, 100, 100_000], [64, 64, 64], 4);
        assert_eq!(bytes, SLAB_MAX_BYTES);
    }
}
