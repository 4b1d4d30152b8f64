//! The spectrum layout and the transforms that fill it.
//!
//! The input goes in by chunks of inlines: each chunk is read, windowed, and every trace (contiguous in
//! memory) is zero-padded and transformed with a real FFT; only the bins of the share's frequencies are
//! kept, multiplied by `exp(−iω t0)` when the first sample is not at t = 0. The chunk then goes into the
//! store ([`super::store`]), frequency-major (the CPU engine's ingest, [`super::cpu`]). Each band taken from the store is the ω-major layout
//! `[ω][il_pad][xl_pad]`, whose padding is zero, and a 2-D FFT per ω finishes its forward transform. Each ω
//! plane is then an independent unit of work.
//!
//! All transforms are unnormalised (rustfft's convention); [`super::Plan::image_scale`] holds the
//! normalisation the imaging condition applies once.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use num_complex::Complex32;
use rayon::prelude::*;
use realfft::{RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftPlanner};

use super::formulas::angular_frequency;
use super::Plan;
use seis_core::context::RunContext;

/// The wavefield of a band in the ω-major layout: planes of `nk = il_pad · xl_pad` values, plane `p` holding
/// the plan's frequency `first + p` (see [`Plan::omega`]).
#[derive(Clone, Default)]
pub struct Spectrum {
    pub data: Vec<Complex32>,
    pub nk: usize,
    pub first: usize,
}

impl Spectrum {
    pub(crate) fn planes_mut(&mut self) -> rayon::slice::ChunksMut<'_, Complex32> {
        self.data.par_chunks_mut(self.nk)
    }
}

/// The time FFT of one trace, keeping some of the plan's frequencies.
pub(crate) struct TraceTransform {
    r2c: Arc<dyn RealToComplex<f32>>,
    first: usize,
    /// `exp(−iω t0)` for each kept bin.
    delay: Vec<Complex32>,
}

/// Per-thread buffers of [`TraceTransform`].
pub(crate) struct TraceScratch {
    padded: Vec<f32>,
    half: Vec<Complex32>,
    work: Vec<Complex32>,
}

impl TraceTransform {
    /// Keeping the plan's frequencies `frequencies` (indices into its band).
    pub fn new(plan: &Plan, frequencies: Range<usize>) -> Self {
        let nt = plan.padded[2];
        let r2c = RealFftPlanner::<f32>::new().plan_fft_forward(nt);
        let first = plan.band.first + frequencies.start;
        let delay = (0..frequencies.len())
            .map(|iw| {
                let phase = -angular_frequency(first + iw, nt, plan.dt) * plan.t0;
                Complex32::from_polar(1.0, phase as f32)
            })
            .collect();
        TraceTransform { r2c, first, delay }
    }

    pub fn scratch(&self) -> TraceScratch {
        TraceScratch {
            padded: self.r2c.make_input_vec(),
            half: self.r2c.make_output_vec(),
            work: self.r2c.make_scratch_vec(),
        }
    }

    /// The kept bins of the (zero-padded) trace into `out` (one value per kept frequency).
    pub fn forward(&self, trace: &[f32], s: &mut TraceScratch, out: &mut [Complex32]) {
        s.padded[..trace.len()].copy_from_slice(trace);
        s.padded[trace.len()..].fill(0.0);
        self.r2c
            .process_with_scratch(&mut s.padded, &mut s.half, &mut s.work)
            .expect("buffer sizes come from the plan");
        for ((o, x), d) in out.iter_mut().zip(&s.half[self.first..]).zip(&self.delay) {
            *o = x * d;
        }
    }
}

/// 2-D FFTs of one padded plane `[il_pad][xl_pad]`: along the contiguous rows, then along the columns
/// through a transposed copy.
///
/// The transposes are the `transpose` crate's (the one rustfft uses): `cargo bench --bench transpose` set it
/// against the cache-tiled loop (32 × 32 tiles, indexed with bounds checks) seisimage had, a plane of
/// Complex32 transposed and back, alternating. The crate's time as a ratio to the tiled loop's, one run
/// on a 16-core x86-64 host: 36 × 30 points 0.27, 160 × 160 0.25, 250 × 270 0.22, 512 × 512 0.26,
/// 540 × 640 0.46, 1024 × 1024 0.29, 2048 × 2048 0.96; one run on a 2-core machine: 0.28 to 0.39 up to
/// 540 × 640, 0.61 to 0.64 above.
pub struct Fft2 {
    shape: [usize; 2],
    forward: [Arc<dyn Fft<f32>>; 2],
    inverse: [Arc<dyn Fft<f32>>; 2],
}

/// Per-thread buffers of [`Fft2`].
pub struct Fft2Scratch {
    transposed: Vec<Complex32>,
    work: Vec<Complex32>,
}

impl Fft2 {
    /// Transforms of planes of `[rows, cols]` points.
    pub fn new(shape: [usize; 2]) -> Self {
        let mut planner = FftPlanner::<f32>::new();
        let forward = [planner.plan_fft_forward(shape[1]), planner.plan_fft_forward(shape[0])];
        let inverse = [planner.plan_fft_inverse(shape[1]), planner.plan_fft_inverse(shape[0])];
        Fft2 { shape, forward, inverse }
    }

    pub fn scratch(&self) -> Fft2Scratch {
        let work = self.forward.iter().chain(&self.inverse).map(|f| f.get_inplace_scratch_len()).max().unwrap_or(0);
        Fft2Scratch {
            transposed: vec![Complex32::default(); self.shape[0] * self.shape[1]],
            work: vec![Complex32::default(); work],
        }
    }

    /// Forward 2-D FFT in place: `X(k) = Σ x(n) exp(−i k·n)`.
    pub fn forward(&self, plane: &mut [Complex32], s: &mut Fft2Scratch) {
        self.run(&self.forward, plane, s);
    }

    /// Inverse 2-D FFT in place, unnormalised: `x(n) = Σ X(k) exp(+i k·n)`.
    pub fn inverse(&self, plane: &mut [Complex32], s: &mut Fft2Scratch) {
        self.run(&self.inverse, plane, s);
    }

    fn run(&self, ffts: &[Arc<dyn Fft<f32>>; 2], plane: &mut [Complex32], s: &mut Fft2Scratch) {
        let [rows, cols] = self.shape;
        ffts[0].process_with_scratch(plane, &mut s.work[..ffts[0].get_inplace_scratch_len()]);
        if rows > 1 {
            // The crate takes the input's width (its row length) before its height.
            transpose::transpose(plane, &mut s.transposed, cols, rows);
            ffts[1].process_with_scratch(&mut s.transposed, &mut s.work[..ffts[1].get_inplace_scratch_len()]);
            transpose::transpose(&s.transposed, plane, rows, cols);
        }
    }
}

/// 2-D FFTs of every plane of a band's spectrum, finishing its forward transform.
pub(crate) fn forward_planes(spectrum: &mut Spectrum, fft2: &Fft2, ctx: &mut RunContext) {
    let t = Instant::now();
    spectrum.planes_mut().for_each_init(|| fft2.scratch(), |s, plane| fft2.forward(plane, s));
    ctx.stats.add("spatial-fft", t.elapsed(), 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naive::{dft2, random};
    use num_complex::Complex64;

    fn close(a: &[Complex32], b: &[Complex64], tol: f64) {
        let scale = b.iter().map(|x| x.norm()).fold(0.0, f64::max);
        for (x, y) in a.iter().zip(b) {
            let d = (Complex64::new(x.re as f64, x.im as f64) - y).norm();
            assert!(d <= tol * scale, "{x} vs {y}");
        }
    }

    #[test]
    fn fft2_matches_the_naive_dft_both_ways() {
        for [rows, cols] in [[6, 10], [1, 9], [5, 1], [12, 15]] {
            let re = random(rows * cols, 3);
            let im = random(rows * cols, 4);
            let x: Vec<Complex64> = re.iter().zip(&im).map(|(a, b)| Complex64::new(*a, *b)).collect();
            let fft2 = Fft2::new([rows, cols]);
            let mut s = fft2.scratch();
            let mut plane: Vec<Complex32> = x.iter().map(|v| Complex32::new(v.re as f32, v.im as f32)).collect();
            fft2.forward(&mut plane, &mut s);
            close(&plane, &dft2(&x, rows, cols, -1.0), 1e-5);
            let mut back: Vec<Complex32> = x.iter().map(|v| Complex32::new(v.re as f32, v.im as f32)).collect();
            fft2.inverse(&mut back, &mut s);
            close(&back, &dft2(&x, rows, cols, 1.0), 1e-5);
        }
    }

    /// The argument order `Fft2` relies on: a 35 × 70 matrix is 70 wide and 35 high.
    #[test]
    fn transpose_round_trip() {
        let a: Vec<u32> = (0..35 * 70).collect();
        let mut t = vec![0; a.len()];
        transpose::transpose(&a, &mut t, 70, 35);
        assert_eq!(t[3 * 35 + 2], a[2 * 70 + 3]);
        let mut back = vec![0; a.len()];
        transpose::transpose(&t, &mut back, 35, 70);
        assert_eq!(back, a);
    }
}
