//! Image assembly: the imaging condition and the cut of the requested boxes.
//!
//! The image at a depth level is `scale · Re(IFFT2(Σ_ω w_ω P(ω, k)))` (see [`super::Plan::image_scale`] and
//! [`super::formulas::imaging_weight`]). Methods that image in the wavenumber domain (phase shift, Stolt)
//! hand over one k-domain plane per level; split-step, which images in space, hands over the requested
//! pixels directly. Either way only the pixels some box needs are kept.
//!
//! A share migrated in several frequency bands images every level once per band; the imaging condition
//! being a sum over frequency, each band's values add into the boxes, band after band in order, and a box
//! is handed over when its last level is in during the last band.

use num_complex::Complex32;
use rayon::prelude::*;

use super::delivery::{Completion, ProductSink};
use super::request::ImageRequest;
use super::spectrum::Fft2;
use super::Plan;
use crate::attributes::AttributeOutput;
use seis_core::alloc::try_host_vec;
use seis_core::error::Result;
use seis_core::volume::IndexBox;

/// The requested boxes being filled, level by level; each goes to the sink once its last level is in.
pub struct ImageAssembly<'s> {
    boxes: Vec<IndexBox>,
    /// Per box, the attribute handed over instead of its values.
    attributes: Vec<Option<AttributeOutput>>,
    /// Row length of the padded plane.
    plane_cols: usize,
    out: Vec<Vec<f32>>,
    completion: Completion,
    sink: &'s dyn ProductSink,
    /// Whether the band being imaged is the last (only then are boxes finished).
    last_band: bool,
}

impl<'s> ImageAssembly<'s> {
    pub fn new(request: &ImageRequest, plan: &Plan, sink: &'s dyn ProductSink) -> Result<Self> {
        let out = request.boxes.iter().map(|b| try_host_vec(b.len(), "the image")).collect::<Result<_>>()?;
        Ok(ImageAssembly {
            boxes: request.boxes.clone(),
            attributes: (0..request.boxes.len()).map(|i| request.attribute(i).cloned()).collect(),
            plane_cols: plan.padded[1],
            out,
            completion: Completion::new(request),
            sink,
            last_band: true,
        })
    }

    /// The values that follow belong to the next band, the last one when `last`.
    pub(crate) fn begin_band(&mut self, last: bool) {
        self.last_band = last;
    }

    /// Indices in the padded plane of the pixels requested at `level`, box after box, row after row.
    pub fn pixels(&self, level: usize) -> Vec<usize> {
        self.boxes
            .iter()
            .filter(|b| b.s.contains(&level))
            .flat_map(|b| b.il.clone().flat_map(move |i| b.xl.clone().map(move |j| i * self.plane_cols + j)))
            .collect()
    }

    /// Add the band's image values of `level`, in the order of [`Self::pixels`], and in the last band hand
    /// over the boxes this level finishes.
    pub fn add(&mut self, level: usize, values: &[f32]) {
        let mut next = values.iter();
        for (b, out) in self.boxes.iter().zip(&mut self.out) {
            if !b.s.contains(&level) {
                continue;
            }
            let (nx, nz) = (b.xl.len(), b.s.len());
            for i in 0..b.il.len() {
                for j in 0..nx {
                    out[(i * nx + j) * nz + level - b.s.start] += *next.next().expect("one value per pixel");
                }
            }
        }
        if !self.last_band {
            return;
        }
        for i in self.completion.imaged(&[level]) {
            let values = std::mem::take(&mut self.out[i]);
            // A box with an attribute hands the attribute over, computed here where the image is.
            let values = match &self.attributes[i] {
                Some(a) => crate::attributes::compute(&values, self.boxes[i].s.len(), a),
                None => values,
            };
            self.sink.complete(i, values);
        }
    }

    /// The migration is over: every box must have been handed over.
    pub fn finish(self) -> Result<()> {
        self.completion.check_all_finished()
    }
}

/// Wavenumbers per chunk of [`KImages`]: the unit of parallel work of the k-domain methods.
pub const K_CHUNK: usize = 256;

/// The k-domain images of one block of levels, stored chunk by chunk: for each chunk of [`K_CHUNK`]
/// wavenumbers, one run of values per level (`[chunk][level][k]`), so a task owns one contiguous piece and
/// walks it along k.
pub struct KImages {
    pub data: Vec<Complex32>,
    levels: usize,
    nk: usize,
}

impl KImages {
    pub fn new(levels: usize, nk: usize) -> Result<Self> {
        Ok(KImages { data: try_host_vec(levels * nk, "the images of a block of depth levels")?, levels, nk })
    }

    /// One piece per chunk of wavenumbers, `levels × (chunk length)` values, with its first wavenumber.
    pub fn chunks_mut(&mut self) -> impl IndexedParallelIterator<Item = (usize, &mut [Complex32])> {
        self.data.par_chunks_mut(K_CHUNK * self.levels).enumerate().map(|(c, piece)| (c * K_CHUNK, piece))
    }

    /// The plane of level `b` of the block, in `[il][xl]` order.
    fn plane(&self, b: usize, out: &mut [Complex32]) {
        for (c, piece) in self.data.chunks(K_CHUNK * self.levels).enumerate() {
            let len = piece.len() / self.levels;
            out[c * K_CHUNK..c * K_CHUNK + len].copy_from_slice(&piece[b * len..(b + 1) * len]);
        }
        debug_assert_eq!(out.len(), self.nk);
    }
}

/// Image a block of levels from their k-domain sums. Levels are transformed in parallel.
pub fn image_block(kimg: &KImages, levels: &[usize], plan: &Plan, fft2: &Fft2, asm: &mut ImageAssembly<'_>) {
    let scale = plan.image_scale() as f32;
    let values: Vec<Vec<f32>> = levels
        .par_iter()
        .enumerate()
        .map_init(
            || (fft2.scratch(), vec![Complex32::default(); plan.nk()]),
            |(s, plane), (b, &level)| {
                kimg.plane(b, plane);
                fft2.inverse(plane, s);
                asm.pixels(level).iter().map(|&p| plane[p].re * scale).collect()
            },
        )
        .collect();
    for (level, v) in levels.iter().zip(&values) {
        asm.add(*level, v);
    }
}
