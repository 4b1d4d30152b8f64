//! Complex-trace attributes of an image: envelope, instantaneous phase, instantaneous frequency and cosine
//! of phase, from the analytic signal along depth (or time) of every trace of a box.
//!
//! The analytic signal `z = x + i·H[x]` of a trace `x` of `n` samples is taken by FFT: the trace is padded
//! with zeros to [`fft_len`]`(n)` (at least twice its length, so that its two ends do not wrap onto each
//! other), transformed, its negative frequencies dropped and its positive ones doubled, and transformed
//! back. Then, sample by sample:
//!
//! - envelope `|z|`;
//! - phase `arg z`, in degrees, in (−180°, 180°];
//! - cosine of phase `Re z / |z|` (0 where the envelope is 0);
//! - frequency, the rate of change of the phase, from the phase turned between the two neighbours of a
//!   sample, `arg(z[k+1] · conj(z[k−1])) / (2π · 2Δ)` (one neighbour at the ends of the trace). That form
//!   needs no phase unwrapping and is exact for a linear phase; it is given per 1000 units of the axis:
//!   cycles per km along depth in metres, Hz along time in ms.
//!
//! The CPU engine computes them here, with rustfft; the GPU engine computes them on the device, with the
//! same formulas (`crates/seis-cuda/kernels/attributes.cu`, cuFFT), where the box is gathered, so that only the attribute's
//! samples cross the bus. Either way a box with an attribute hands over the attribute of the levels it
//! keeps ([`AttributeOutput::keep`]): an attribute of a depth slice is computed over a window of levels
//! around it and only the slice is kept.

use std::ops::Range;

use num_complex::Complex32;
use rustfft::FftPlanner;
use serde::{Deserialize, Serialize};

use seis_core::choice::Choice;

/// A complex-trace attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribute {
    /// Envelope (reflection strength): the magnitude of the analytic signal.
    Envelope,
    /// Instantaneous phase, degrees.
    Phase,
    /// Instantaneous frequency: cycles per km along depth, Hz along time.
    Frequency,
    /// Cosine of the instantaneous phase: continuity of events whatever their strength.
    CosPhase,
}

impl Choice for Attribute {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Attribute::Envelope, "envelope", "Envelope (reflection strength): the magnitude of the analytic signal."),
        (Attribute::Phase, "phase", "Instantaneous phase, degrees."),
        (Attribute::Frequency, "frequency", "Instantaneous frequency: cycles per km along depth, Hz along time."),
        (
            Attribute::CosPhase,
            "cos_phase",
            "Cosine of the instantaneous phase: continuity of events whatever their strength.",
        ),
    ];
}

impl Attribute {
    pub const ALL: [Attribute; 4] = [Attribute::Envelope, Attribute::Phase, Attribute::Frequency, Attribute::CosPhase];

    /// The name in job files and file names.
    pub fn name(self) -> &'static str {
        match self {
            Attribute::Envelope => "envelope",
            Attribute::Phase => "phase",
            Attribute::Frequency => "frequency",
            Attribute::CosPhase => "cos_phase",
        }
    }

    /// The name in words, on pictures.
    pub fn title(self) -> &'static str {
        match self {
            Attribute::Envelope => "envelope",
            Attribute::Phase => "instantaneous phase",
            Attribute::Frequency => "instantaneous frequency",
            Attribute::CosPhase => "cosine of phase",
        }
    }

    /// The code the GPU kernel takes (`ATTR_*` of the kernels' prelude).
    pub fn code(self) -> i64 {
        match self {
            Attribute::Envelope => 0,
            Attribute::Phase => 1,
            Attribute::Frequency => 2,
            Attribute::CosPhase => 3,
        }
    }
}

/// The factor that turns cycles per unit of an axis in `unit` into the frequency's unit, and that unit.
pub fn frequency_unit(unit: &str) -> (f64, &'static str) {
    match unit {
        "m" => (1000.0, "1/km"),
        "ms" => (1000.0, "Hz"),
        "s" => (1.0, "Hz"),
        _ => (1.0, "cycles per sample"),
    }
}

/// What an engine hands over for a box with an attribute: the attribute of levels `keep` (counted from the
/// box's first level), computed along the box's whole depth.
#[derive(Clone, Debug, PartialEq)]
pub struct AttributeOutput {
    pub attribute: Attribute,
    pub keep: Range<usize>,
    /// Frequency per cycle-per-sample: 1000 / dz for depth in metres (cycles per km).
    pub frequency_scale: f64,
}

impl AttributeOutput {
    /// Values handed over for a box of `traces` traces.
    pub fn len(&self, traces: usize) -> usize {
        traces * self.keep.len()
    }
}

/// The samples an attribute of horizontal slice `k` is computed over, `window` (in the axis's unit) above and
/// below it on an axis of `len` samples `step` apart, and where the slice lies among them. A window longer
/// than the axis takes the whole trace.
pub fn window_around(k: usize, window: f64, step: f64, len: usize) -> (Range<usize>, Range<usize>) {
    // `as` saturates a huge or infinite ratio (and makes NaN 0); the axis bounds it from there.
    let half = ((window / step.abs()).round() as usize).min(len);
    let samples = k.saturating_sub(half)..k.saturating_add(half).saturating_add(1).min(len);
    let keep = k - samples.start..k - samples.start + 1;
    (samples, keep)
}

/// Length of the FFT of the analytic signal of a trace of `n` samples: a power of two, at least `2n`.
pub fn fft_len(n: usize) -> usize {
    (2 * n.max(1)).next_power_of_two()
}

/// The analytic-signal weight of FFT bin `k` of `nfft`: 1 at zero and Nyquist, 2 for positive frequencies,
/// 0 for negative ones.
pub(crate) fn analytic_weight(k: usize, nfft: usize) -> f32 {
    if k == 0 || 2 * k == nfft {
        1.0
    } else if 2 * k < nfft {
        2.0
    } else {
        0.0
    }
}

/// The attribute at sample `k` of the analytic trace `z`, `scale` as in [`AttributeOutput`].
pub(crate) fn attribute_at(attribute: Attribute, z: &[Complex32], k: usize, scale: f64) -> f32 {
    let v = z[k];
    match attribute {
        Attribute::Envelope => v.re.hypot(v.im),
        Attribute::Phase => v.im.atan2(v.re).to_degrees(),
        Attribute::CosPhase => {
            let e = v.re.hypot(v.im);
            if e > 0.0 {
                v.re / e
            } else {
                0.0
            }
        }
        Attribute::Frequency => {
            let n = z.len();
            if n < 2 {
                return 0.0;
            }
            let (a, b, span) = match k {
                0 => (z[1], z[0], 1.0),
                k if k + 1 == n => (z[k], z[k - 1], 1.0),
                k => (z[k + 1], z[k - 1], 2.0),
            };
            let turn = (a.im * b.re - a.re * b.im).atan2(a.re * b.re + a.im * b.im);
            (f64::from(turn) / (std::f64::consts::TAU * span) * scale) as f32
        }
    }
}

/// The attribute of the boxes' traces: `values` holds traces of `nz` samples one after another; the result
/// holds, per trace, the attribute of the levels `out.keep`.
pub fn compute(values: &[f32], nz: usize, out: &AttributeOutput) -> Vec<f32> {
    use rayon::prelude::*;
    let traces = values.len() / nz.max(1);
    let nfft = fft_len(nz);
    let mut planner = FftPlanner::<f32>::new();
    let forward = planner.plan_fft_forward(nfft);
    let inverse = planner.plan_fft_inverse(nfft);
    let keep = out.keep.clone();
    let mut result = vec![0.0f32; traces * keep.len()];
    result.par_chunks_mut(keep.len().max(1)).zip(values.par_chunks(nz.max(1))).for_each_init(
        || (vec![Complex32::default(); nfft], vec![Complex32::default(); forward.get_inplace_scratch_len()]),
        |(z, scratch), (dst, trace)| {
            for (k, v) in z.iter_mut().enumerate() {
                *v = Complex32::new(trace.get(k).copied().unwrap_or(0.0), 0.0);
            }
            forward.process_with_scratch(z, scratch);
            for (k, v) in z.iter_mut().enumerate() {
                *v *= analytic_weight(k, nfft) / nfft as f32;
            }
            inverse.process_with_scratch(z, scratch);
            let z = &z[..nz];
            for (d, k) in dst.iter_mut().zip(keep.clone()) {
                *d = attribute_at(out.attribute, z, k, out.frequency_scale);
            }
        },
    );
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Gaussian-windowed cosine: `exp(−(k − k0)² / 2σ²) cos(2π f (k − k0) + φ)`, σ large enough that
    /// its analytic signal is `exp(…) exp(i(2π f (k − k0) + φ))` to within rounding.
    fn wavelet(n: usize, k0: f64, sigma: f64, f: f64, phi: f64) -> Vec<f32> {
        (0..n)
            .map(|k| {
                let t = k as f64 - k0;
                ((-t * t / (2.0 * sigma * sigma)).exp() * (std::f64::consts::TAU * f * t + phi).cos()) as f32
            })
            .collect()
    }

    #[test]
    fn a_gaussian_windowed_cosine_has_its_closed_form_attributes() {
        let (n, k0, sigma, f, phi) = (300, 140.0, 18.0, 0.07, 0.6);
        let x = wavelet(n, k0, sigma, f, phi);
        let run = |a: Attribute| compute(&x, n, &AttributeOutput { attribute: a, keep: 0..n, frequency_scale: 1.0 });
        let (env, phase, freq, cos) =
            (run(Attribute::Envelope), run(Attribute::Phase), run(Attribute::Frequency), run(Attribute::CosPhase));
        for k in 90..190 {
            let t = k as f64 - k0;
            let e = (-t * t / (2.0 * sigma * sigma)).exp();
            assert!((env[k] as f64 - e).abs() < 1e-4, "envelope at {k}: {} vs {e}", env[k]);
            let p = (std::f64::consts::TAU * f * t + phi).rem_euclid(std::f64::consts::TAU);
            let p = if p > std::f64::consts::PI { p - std::f64::consts::TAU } else { p }.to_degrees();
            let dp = ((phase[k] as f64 - p + 540.0).rem_euclid(360.0) - 180.0).abs();
            assert!(dp < 0.05, "phase at {k}: {} vs {p}", phase[k]);
            assert!((freq[k] as f64 - f).abs() < 1e-4, "frequency at {k}: {}", freq[k]);
            assert!((cos[k] as f64 - p.to_radians().cos()).abs() < 1e-3, "cos phase at {k}");
        }
    }

    #[test]
    fn kept_levels_and_frequency_units() {
        // Two traces of a 50 Hz-per-km wave sampled every 5 m: 0.25 cycles per sample... in depth.
        let n = 200;
        let dz = 5.0;
        let f_per_km = 40.0;
        let cycles_per_sample = f_per_km * dz / 1000.0;
        let mut x = wavelet(n, 100.0, 30.0, cycles_per_sample, 0.0);
        x.extend(wavelet(n, 90.0, 30.0, cycles_per_sample, 1.0));
        let out = AttributeOutput { attribute: Attribute::Frequency, keep: 95..98, frequency_scale: 1000.0 / dz };
        let f = compute(&x, n, &out);
        assert_eq!(f.len(), out.len(2));
        assert!(f.iter().all(|v| (v - f_per_km as f32).abs() < 0.01), "{f:?}");
        assert_eq!(frequency_unit("m"), (1000.0, "1/km"));
    }

    #[test]
    fn silence_has_no_phase() {
        let out = AttributeOutput { attribute: Attribute::CosPhase, keep: 0..8, frequency_scale: 1.0 };
        assert_eq!(compute(&[0.0; 8], 8, &out), vec![0.0; 8]);
        assert_eq!(fft_len(300), 1024);
        assert_eq!(fft_len(1), 2);
    }
}
