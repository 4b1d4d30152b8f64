//! Split-step Fourier migration for v(x, y, z).
//!
//! Each depth step splits the propagation into a phase shift through the reference velocity of the step,
//! applied in the wavenumber domain, and a thin-lens correction `exp(iω (s(x, y) − s0) Δz)` for the
//! difference between the local and the reference slowness, applied in space. So every frequency plane
//! goes through one forward and one inverse 2-D FFT per step. The field lives in space between steps, which
//! is where the image is taken: after each step the planes add their weighted real parts at the requested
//! pixels of that level, and only there (the imaging condition is linear, so nothing else is needed).
//!
//! Steps are sequential, and the frequency planes of a step run in parallel. Evanescent components are
//! dropped at each step; a dip limit, when given, filters the propagating field at each step with the
//! reference velocity, so its roll-off compounds with depth (see `docs/imaging.md`). In the lateral padding
//! the medium is the reference medium (no lens).

use num_complex::Complex32;
use rayon::prelude::*;

use super::MethodRules;
use crate::formulas::{dip_weight, phase_factor, thin_lens};
use crate::image::ImageAssembly;
use crate::spectrum::{Fft2, Fft2Scratch, Spectrum};
use crate::Plan;
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_velocity::VelocityModel;

/// Split-step migrates through any velocity model and images in space, level by level.
pub struct SplitStep;

impl MethodRules for SplitStep {
    fn k_images(&self) -> bool {
        false
    }

    /// One slowness slice of the input's traces and one lens over the padded plane.
    fn lateral_bytes(&self, plan: &Plan) -> u64 {
        (plan.input.n_traces() * 4 + plan.nk() * 4) as u64
    }

    fn device_planes(&self, _plan: &Plan, _launch_levels: usize) -> (&'static str, usize) {
        ("level image", 1)
    }

    fn migrate(
        &self,
        spectrum: &mut Spectrum,
        plan: &Plan,
        velocity: &VelocityModel,
        fft2: &Fft2,
        asm: &mut ImageAssembly<'_>,
        ctx: &RunContext,
    ) -> Result<()> {
        migrate(spectrum, plan, velocity, fft2, asm, ctx)
    }
}

/// Continue one frequency plane (in space at the top of the step) down one step and return it to space:
/// FFT2, reference phase shift (with the evanescent cut and the dip filter), inverse FFT2 with its
/// normalisation, thin lens. `lens` holds `(s − s0) Δz` per point of the plane (exploding-reflector
/// slowness), or is empty when the medium has no lateral change.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step_plane(
    plane: &mut [Complex32],
    omega: f64,
    k2: &[f64],
    v_ref: f64,
    dz: f64,
    dip_limit: Option<f64>,
    lens: &[f32],
    fft2: &Fft2,
    s: &mut Fft2Scratch,
) {
    fft2.forward(plane, s);
    let norm = 1.0 / plane.len() as f64;
    for (p, &k2) in plane.iter_mut().zip(k2) {
        let dip = dip_limit.map_or(1.0, |max| dip_weight(omega, k2, v_ref, max));
        let f = phase_factor(omega, k2, v_ref, dz) * (dip * norm);
        *p *= Complex32::new(f.re as f32, f.im as f32);
    }
    fft2.inverse(plane, s);
    if !lens.is_empty() {
        for (p, &l) in plane.iter_mut().zip(lens) {
            let f = thin_lens(omega, l as f64);
            *p *= Complex32::new(f.re as f32, f.im as f32);
        }
    }
}

/// The weighted real parts of every plane at `pixels`, summed over frequency and scaled.
fn image_pixels(spectrum: &Spectrum, plan: &Plan, pixels: &[usize]) -> Vec<f32> {
    let sums = spectrum
        .data
        .par_chunks(spectrum.nk)
        .enumerate()
        .fold(
            || vec![0.0f64; pixels.len()],
            |mut acc, (iw, plane)| {
                let w = plan.weight(spectrum.first + iw);
                for (a, &p) in acc.iter_mut().zip(pixels) {
                    *a += w * plane[p].re as f64;
                }
                acc
            },
        )
        .reduce(
            || vec![0.0; pixels.len()],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    // The planes are already normalised laterally: only the time normalisation remains.
    let scale = 1.0 / plan.padded[2] as f64;
    sums.into_iter().map(|x| (x * scale) as f32).collect()
}

pub fn migrate(
    spectrum: &mut Spectrum,
    plan: &Plan,
    velocity: &VelocityModel,
    fft2: &Fft2,
    asm: &mut ImageAssembly<'_>,
    ctx: &RunContext,
) -> Result<()> {
    let nk = plan.nk();
    let k2 = plan.k_squared();
    let dz = plan.depth.step;
    let [ni, nx, _] = plan.input.shape();
    let nx_pad = plan.padded[1];

    // Into space, normalised.
    let norm = 1.0 / nk as f32;
    spectrum.planes_mut().for_each_init(
        || fft2.scratch(),
        |s, plane| {
            fft2.inverse(plane, s);
            plane.iter_mut().for_each(|p| *p *= norm);
        },
    );
    let mut store = |level: usize, spectrum: &Spectrum| {
        let pixels = asm.pixels(level);
        if !pixels.is_empty() {
            let values = image_pixels(spectrum, plan, &pixels);
            asm.add(level, &values);
        }
    };
    store(0, spectrum);

    let mut slowness = vec![0.0f32; if plan.lateral_velocity { ni * nx } else { 0 }];
    let mut lens = vec![0.0f32; if plan.lateral_velocity { nk } else { 0 }];
    ctx.progress.begin("split-step", plan.last_level() as u64);
    for (j, &v_ref) in plan.step_velocity.iter().enumerate() {
        ctx.check()?;
        if plan.lateral_velocity {
            velocity.slowness_slice((j as f64 + 0.5) * dz, &mut slowness);
            let s0 = 2.0 / v_ref;
            for (row, s) in slowness.chunks(nx).enumerate() {
                for (l, &s) in lens[row * nx_pad..row * nx_pad + nx].iter_mut().zip(s) {
                    *l = ((2.0 * s as f64 - s0) * dz) as f32;
                }
            }
        }
        let first = spectrum.first;
        spectrum.planes_mut().enumerate().for_each_init(
            || fft2.scratch(),
            |s, (iw, plane)| {
                let omega = plan.omega(first + iw);
                step_plane(plane, omega, &k2, v_ref, dz, plan.dip_limit, &lens, fft2, s)
            },
        );
        store(j + 1, spectrum);
        ctx.progress.advance(1);
    }
    ctx.progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    /// With no lateral change, a step is the phase shift of each plane wave; with a lens of constant value
    /// it adds a constant phase `ω · lens`.
    #[test]
    fn a_step_shifts_plane_waves_and_the_lens_adds_its_phase() {
        let (rows, cols, d) = (8usize, 16usize, 10.0);
        let fft2 = Fft2::new([rows, cols]);
        let mut s = fft2.scratch();
        let k2: Vec<f64> = (0..rows)
            .flat_map(|i| {
                (0..cols).map(move |j| {
                    crate::formulas::wavenumber(i, rows, d).powi(2) + crate::formulas::wavenumber(j, cols, d).powi(2)
                })
            })
            .collect();
        // a plane wave exp(i kx x) with kx at index 2 of the inline axis
        let kx = crate::formulas::wavenumber(2, rows, d);
        let wave: Vec<Complex32> = (0..rows * cols)
            .map(|p| {
                let c = Complex64::from_polar(1.0, kx * (p / cols) as f64 * d);
                Complex32::new(c.re as f32, c.im as f32)
            })
            .collect();
        let (omega, v, dz) = (200.0, 2500.0, 12.0);
        let shift = phase_factor(omega, kx * kx, v, dz);
        for lens_value in [None, Some(3e-4f32)] {
            let lens = lens_value.map_or(vec![], |l| vec![l; rows * cols]);
            let mut plane = wave.clone();
            step_plane(&mut plane, omega, &k2, v, dz, None, &lens, &fft2, &mut s);
            let extra = Complex64::from_polar(1.0, omega * lens_value.unwrap_or(0.0) as f64);
            for (p, w) in plane.iter().zip(&wave) {
                let expect = Complex64::new(w.re as f64, w.im as f64) * shift * extra;
                assert!((Complex64::new(p.re as f64, p.im as f64) - expect).norm() < 1e-5);
            }
        }
    }
}
