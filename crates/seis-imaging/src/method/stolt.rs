//! Stolt (f-k) migration for a constant velocity.
//!
//! In a constant medium the phase-shift image `Σ_ω w P(ω, k) exp(i kz(ω) z)` is a Fourier sum over kz once
//! the frequency axis is changed to kz: `ω = (v/2) sqrt(kz² + |k|²)`, `dω = (v/2) (kz / sqrt(kz² + |k|²)) dkz`.
//! So for each lateral wavenumber the spectrum is resampled on a regular kz grid (the remap, with the
//! Jacobian), and one inverse FFT over kz gives every depth at once. The spectrum is sampled in ω only, so
//! the remap interpolates between frequency samples: with an 8-point windowed sinc by default, or linearly
//! (see [`crate::StoltInterpolation`]). The interpolated sequence is first shifted in time to centre the
//! record on t = 0 (a phase ramp in ω), which keeps it smooth between samples.
//!
//! The kz sum is discrete with period `nz_fft · dz` in depth; kz values beyond the grid's Nyquist wrap, as
//! depth sampling would alias them in the phase-shift image too.
//!
//! Memory: per wavenumber one column of the spectrum and one kz line; the k-domain images of one block of
//! levels, as for phase shift.

use num_complex::{Complex32, Complex64};
use rayon::prelude::*;
use rustfft::FftPlanner;

use super::MethodRules;
use crate::formulas::{dip_weight, interpolation_taps, stolt_obliquity, stolt_source_frequency, STOLT_REACH};
use crate::image::{image_block, ImageAssembly, KImages};
use crate::planned::StoltGrid;
use crate::spectrum::{Fft2, Spectrum};
use crate::window::fast_len;
use crate::{ImagingParams, Plan};
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::volume::Geometry;
use seis_velocity::VelocityModel;

/// Stolt's kz grid for a time FFT of `nt_pad` samples of `dt` seconds, imaging down to level `last`; the
/// velocity was checked constant ([`velocity_refusal`]).
pub(crate) fn grid(
    params: &ImagingParams,
    velocity: &VelocityModel,
    input: &Geometry,
    dt: f64,
    nt_pad: usize,
    last: usize,
) -> StoltGrid {
    let dz = params.dz;
    let v = velocity.constant_velocity().expect("checked by velocity_refusal");
    let depth_period = 0.5 * v * nt_pad as f64 * dt;
    let nz_fft = fast_len(((depth_period / dz).ceil() as usize).max(last + 1), false);
    StoltGrid {
        velocity: v,
        nz_fft,
        dkz: std::f64::consts::TAU / (nz_fft as f64 * dz),
        interpolation: params.stolt_interpolation,
        time_centre: input.samples.origin / 1000.0 + 0.5 * (input.shape()[2] - 1) as f64 * dt,
    }
}

/// Stolt needs one velocity everywhere.
pub(crate) fn velocity_refusal(velocity: &VelocityModel) -> Option<String> {
    velocity.constant_velocity().is_none().then(|| {
        format!(
            "the stolt method needs a constant velocity, and the model is a {}: use phase-shift for v(z) or \
             split-step for v(x, y, z)",
            velocity.describe()
        )
    })
}

impl MethodRules for StoltGrid {
    fn whole_spectrum(&self) -> Option<&'static str> {
        Some("Stolt needs every frequency of a wavenumber at once")
    }

    /// The remap reads the spectrum only.
    fn changes_spectrum(&self) -> bool {
        false
    }

    fn describe(&self, plan: &Plan) -> Option<String> {
        Some(format!(
            "stolt: {} m/s, {} interpolation, {} kz samples (image period {} m)",
            self.velocity,
            format!("{:?}", self.interpolation).to_lowercase(),
            self.nz_fft,
            self.nz_fft as f64 * plan.depth.step
        ))
    }

    /// One kz line per lateral wavenumber.
    fn device_planes(&self, _plan: &Plan, _launch_levels: usize) -> (&'static str, usize) {
        ("kz lines", self.nz_fft)
    }

    fn migrate(
        &self,
        spectrum: &mut Spectrum,
        plan: &Plan,
        _velocity: &VelocityModel,
        fft2: &Fft2,
        asm: &mut ImageAssembly<'_>,
        ctx: &RunContext,
    ) -> Result<()> {
        migrate(self, spectrum, plan, fft2, asm, ctx)
    }
}

/// What the remap needs to know about the frequency samples of a column.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrequencyGrid {
    /// Angular frequency of the column's first sample and the spacing (rad/s).
    pub first: f64,
    pub step: f64,
}

/// Resample one column (the band's values at one lateral wavenumber, already multiplied by
/// `exp(+iω t_c)`, see [`StoltGrid::time_centre`]) onto the kz grid: for each kz sample, interpolate at the
/// source frequency, undo the centring shift, apply the Jacobian and the one-sided weight 2, and add into
/// `line[m mod nz_fft]`.
pub(crate) fn remap_column(
    column: &[Complex64],
    freq: FrequencyGrid,
    k2: f64,
    grid: &StoltGrid,
    dip_limit: Option<f64>,
    line: &mut [Complex64],
) {
    let v = grid.velocity;
    let s = 2.0 / v; // exploding-reflector slowness
    let lo = freq.first - STOLT_REACH * freq.step;
    let hi = freq.first + (column.len() as f64 - 1.0 + STOLT_REACH) * freq.step;
    let kz_of = |omega: f64| ((omega * s).powi(2) - k2).max(0.0).sqrt();
    if hi * s <= k2.sqrt() {
        return; // the whole band is evanescent at this wavenumber
    }
    let m_first = (kz_of(lo.max(0.0)) / grid.dkz).ceil() as usize;
    let m_last = (kz_of(hi) / grid.dkz).floor() as usize;
    // Jacobian (v/2) cos θ, times dkz/dω to turn the kz sum into the ω sum it stands for.
    let jacobian_scale = 0.5 * v * grid.dkz / freq.step;
    let n = line.len();
    for m in m_first..=m_last {
        let kz = m as f64 * grid.dkz;
        let omega = stolt_source_frequency(kz, k2, v);
        let u = (omega - freq.first) / freq.step;
        let (first, w, taps) = interpolation_taps(u, grid.interpolation);
        let mut value = Complex64::default();
        for (j, wj) in w.iter().enumerate().take(taps) {
            let i = first + j as isize;
            if i >= 0 && (i as usize) < column.len() {
                value += column[i as usize] * wj;
            }
        }
        let dip = dip_limit.map_or(1.0, |max| dip_weight(omega, k2, v, max));
        let factor = 2.0 * jacobian_scale * stolt_obliquity(kz, k2) * dip;
        line[m % n] += value * Complex64::from_polar(factor, -omega * grid.time_centre);
    }
}

pub fn migrate(
    grid: &StoltGrid,
    spectrum: &Spectrum,
    plan: &Plan,
    fft2: &Fft2,
    asm: &mut ImageAssembly<'_>,
    ctx: &RunContext,
) -> Result<()> {
    let (nk, nw) = (plan.nk(), plan.n_omega());
    // Stolt takes the band whole (see Plan::restrict_to).
    assert_eq!((spectrum.first, spectrum.data.len()), (0, nw * nk), "Stolt needs every frequency at once");
    let k2 = plan.k_squared();
    let freq = FrequencyGrid { first: plan.omega(0), step: if nw > 1 { plan.omega(1) - plan.omega(0) } else { 1.0 } };
    let centring: Vec<Complex64> =
        (0..nw).map(|iw| Complex64::from_polar(1.0, plan.omega(iw) * grid.time_centre)).collect();
    let ifft = FftPlanner::<f64>::new().plan_fft_inverse(grid.nz_fft);

    ctx.progress.begin("stolt", plan.levels.len() as u64);
    for block in &plan.blocks {
        ctx.check()?;
        let levels: Vec<usize> = plan.levels[block.clone()].iter().map(|l| l.index).collect();
        let nb = levels.len();
        let mut kimg = KImages::new(nb, nk)?;
        kimg.chunks_mut().try_for_each_init(
            || {
                let line = vec![Complex64::default(); grid.nz_fft];
                let scratch = vec![Complex64::default(); ifft.get_inplace_scratch_len()];
                (vec![Complex64::default(); nw], line, scratch)
            },
            |(column, line, scratch), (k0, acc)| {
                ctx.check()?;
                let len = acc.len() / nb;
                for j in 0..len {
                    let k = k0 + j;
                    for (iw, x) in column.iter_mut().enumerate() {
                        let s = spectrum.data[iw * nk + k];
                        *x = Complex64::new(s.re as f64, s.im as f64) * centring[iw];
                    }
                    line.fill(Complex64::default());
                    remap_column(column, freq, k2[k], grid, plan.dip_limit, line);
                    ifft.process_with_scratch(line, scratch);
                    for (b, &level) in levels.iter().enumerate() {
                        acc[b * len + j] = Complex32::new(line[level].re as f32, line[level].im as f32);
                    }
                }
                Ok::<(), seis_core::Error>(())
            },
        )?;
        image_block(&kimg, &levels, plan, fft2, asm);
        ctx.progress.advance(nb as u64);
    }
    ctx.progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formulas::{kz_squared, phase_factor};
    use crate::StoltInterpolation;

    /// For a column that is a single time spike (so its spectrum is known in closed form at any ω), the
    /// remap followed by a naive inverse DFT over kz equals the phase-shift sum over the same frequencies.
    #[test]
    fn remap_and_kz_sum_reproduce_the_phase_shift_sum() {
        let (v, dz, k2) = (2000.0, 5.0, 0.0001);
        let (nt, dt) = (512usize, 0.004);
        let dw = std::f64::consts::TAU / (nt as f64 * dt);
        let tau = 0.3; // spike time (s); record 0..1.024 s, centre ≈ 0.5 s
        let centre = 0.5;
        let bins: Vec<usize> = (5..150).collect();
        // smooth band taper so the band edges do not ring
        let taper = |b: usize| (std::f64::consts::PI * (b - 5) as f64 / 145.0).sin().powi(2);
        let spec = |b: usize| Complex64::from_polar(taper(b), -(b as f64) * dw * tau);
        let column: Vec<Complex64> =
            bins.iter().map(|&b| spec(b) * Complex64::from_polar(1.0, b as f64 * dw * centre)).collect();
        let nz_fft = 256;
        for interpolation in [StoltInterpolation::Sinc, StoltInterpolation::Linear] {
            let grid = StoltGrid {
                velocity: v,
                nz_fft,
                dkz: std::f64::consts::TAU / (nz_fft as f64 * dz),
                interpolation,
                time_centre: centre,
            };
            let mut line = vec![Complex64::default(); nz_fft];
            remap_column(&column, FrequencyGrid { first: 5.0 * dw, step: dw }, k2, &grid, None, &mut line);
            let mut worst: f64 = 0.0;
            let mut peak: f64 = 0.0;
            for level in 0..120 {
                let z = level as f64 * dz;
                let stolt: Complex64 = line
                    .iter()
                    .enumerate()
                    .map(|(m, x)| {
                        x * Complex64::from_polar(1.0, std::f64::consts::TAU * (m * level) as f64 / nz_fft as f64)
                    })
                    .sum();
                let phase: Complex64 = bins
                    .iter()
                    .filter(|&&b| kz_squared(b as f64 * dw, k2, v) > 0.0)
                    .map(|&b| 2.0 * spec(b) * phase_factor(b as f64 * dw, k2, v, z))
                    .sum();
                worst = worst.max((stolt.re - phase.re).abs());
                peak = peak.max(phase.re.abs());
            }
            let tol = if interpolation == StoltInterpolation::Sinc { 0.01 } else { 0.05 };
            assert!(worst < tol * peak, "{interpolation:?}: {worst} vs peak {peak}");
        }
    }
}
