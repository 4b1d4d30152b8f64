//! Gazdag phase-shift migration for v(z).
//!
//! After the forward transforms every (ω, k) component of the recorded field is a plane wave that travels
//! down independently: across a stretch of constant velocity it only turns by `exp(i kz Δz)`
//! ([`formulas::phase_factor`]). So there is no FFT inside the depth loop: each component is carried down
//! once, and at every imaged level its weighted value is added to that level's k-domain image; one inverse
//! 2-D FFT per imaged level then gives the image ([`image::image_block`]).
//!
//! Work is parallel over chunks of wavenumbers; a component stays in registers (in `f64`) for a whole block
//! of levels and is written back once. The factor of a stretch is computed once and reused while the
//! stretches repeat (constant velocity or a layered model), so the common cost is one complex multiply per
//! (ω, k, level). The dip limit weights each component's contribution to the image by its propagation
//! angle at the imaged level; it does not filter the propagating field.

use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use super::formulas::{dip_weight, phase_factor};
use super::image::{image_block, ImageAssembly};
use super::plan::{Level, Segment};
use super::spectrum::{Fft2, Spectrum};
use super::Plan;
use crate::cancel;
use crate::error::Result;
use crate::progress::Progress;

/// Wavenumbers handled by one parallel task.
const K_CHUNK: usize = 256;

/// Carry one (ω, k) component from the top of a block down through its `segments`, adding
/// `weight · dip · P` to `acc[slot]` at every imaged level, and leave the field at the block's bottom in
/// `field`.
#[allow(clippy::too_many_arguments)]
pub fn continue_component(
    field: &mut Complex32,
    omega: f64,
    k2: f64,
    weight: f64,
    segments: &[Segment],
    levels: &[Level],
    dip_limit: Option<f64>,
    acc: &mut [Complex32],
) {
    let mut p = Complex64::new(field.re as f64, field.im as f64);
    let mut cached: Option<(f64, f64, Complex64)> = None;
    for s in segments {
        if s.thickness > 0.0 {
            let f = match cached {
                Some((v, h, f)) if v == s.velocity && h == s.thickness => f,
                _ => {
                    let f = phase_factor(omega, k2, s.velocity, s.thickness);
                    cached = Some((s.velocity, s.thickness, f));
                    f
                }
            };
            p *= f;
            if p == Complex64::new(0.0, 0.0) {
                break; // evanescent from here down: nothing more to image
            }
        }
        if let Some(slot) = s.slot {
            let w = weight * dip_limit.map_or(1.0, |max| dip_weight(omega, k2, levels[slot].velocity, max));
            let c = p * w;
            acc[slot] += Complex32::new(c.re as f32, c.im as f32);
        }
    }
    *field = Complex32::new(p.re as f32, p.im as f32);
}

/// Migrate the spectrum (which is consumed as the field is carried down) and fill the assembly.
pub fn migrate(
    spectrum: &mut Spectrum,
    plan: &Plan,
    fft2: &Fft2,
    asm: &mut ImageAssembly,
    progress: &dyn Progress,
) -> Result<()> {
    let nk = plan.nk();
    let k2 = plan.k_squared();
    progress.begin("phase shift", plan.levels.len() as u64);
    for (b, block) in plan.blocks.iter().enumerate() {
        cancel::check()?;
        let segments = plan.segments(b);
        let levels = &plan.levels[block.clone()];
        let nb = levels.len();
        let mut kimg = vec![Complex32::default(); nk * nb];

        // The spectrum cut into columns of K_CHUNK wavenumbers across all frequencies: one task per column.
        let mut columns: Vec<Vec<&mut [Complex32]>> = (0..nk.div_ceil(K_CHUNK)).map(|_| Vec::new()).collect();
        for plane in spectrum.data.chunks_mut(nk) {
            for (c, part) in plane.chunks_mut(K_CHUNK).enumerate() {
                columns[c].push(part);
            }
        }
        columns.into_par_iter().zip(kimg.par_chunks_mut(K_CHUNK * nb)).enumerate().for_each(|(c, (planes, acc))| {
            let k0 = c * K_CHUNK;
            for (iw, part) in planes.into_iter().enumerate() {
                let (omega, weight) = (plan.omega(iw), plan.weight(iw));
                for (j, field) in part.iter_mut().enumerate() {
                    let acc = &mut acc[j * nb..(j + 1) * nb];
                    continue_component(field, omega, k2[k0 + j], weight, &segments, levels, plan.dip_limit, acc);
                }
            }
        });

        let indices: Vec<usize> = levels.iter().map(|l| l.index).collect();
        image_block(&kimg, &indices, plan, fft2, asm);
        progress.advance(nb as u64);
    }
    progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imaging::formulas;

    /// A component carried through stretches equals the product of per-step factors, and evanescent
    /// components stop contributing.
    #[test]
    fn continuation_multiplies_the_step_factors() {
        let levels = [Level { index: 2, velocity: 2000.0 }, Level { index: 5, velocity: 3000.0 }];
        let segments = [
            Segment { velocity: 2000.0, thickness: 20.0, slot: Some(0) },
            Segment { velocity: 2000.0, thickness: 10.0, slot: None },
            Segment { velocity: 3000.0, thickness: 20.0, slot: Some(1) },
        ];
        let (omega, k2) = (150.0, 0.002);
        let start = Complex32::new(0.3, -0.7);
        let mut field = start;
        let mut acc = [Complex32::default(); 2];
        continue_component(&mut field, omega, k2, 2.0, &segments, &levels, None, &mut acc);
        let step = |v: f64| formulas::phase_factor(omega, k2, v, 10.0);
        let p0 = Complex64::new(0.3, -0.7);
        let at2 = p0 * step(2000.0).powu(2);
        let at5 = at2 * step(2000.0) * step(3000.0).powu(2);
        let c = |z: Complex64| Complex32::new(z.re as f32, z.im as f32);
        assert!((acc[0] - c(at2 * 2.0)).norm() < 1e-6);
        assert!((acc[1] - c(at5 * 2.0)).norm() < 1e-6);
        assert!((field - c(at5)).norm() < 1e-6);

        // |k| beyond 2ω/v at 3000 m/s (0.1 rad/m) but not at 2000 m/s (0.15 rad/m): evanescent in the second layer
        let mut field = start;
        let mut acc = [Complex32::default(); 2];
        continue_component(&mut field, omega, 0.015, 1.0, &segments, &levels, None, &mut acc);
        assert!(acc[0].norm() > 0.5 && acc[1] == Complex32::default() && field == Complex32::default());
    }
}
