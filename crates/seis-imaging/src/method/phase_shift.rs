//! Gazdag phase-shift migration for v(z).
//!
//! After the forward transforms every (ω, k) component of the recorded field is a plane wave that travels
//! down independently: across a stretch of constant velocity it only turns by `exp(i kz Δz)`
//! ([`crate::formulas::phase_factor`]). So there is no FFT inside the depth loop: each component is carried
//! down once, and at every imaged level its weighted value is added to that level's k-domain image; one
//! inverse 2-D FFT per imaged level then gives the image ([`crate::image::image_block`]).
//!
//! Work is parallel over chunks of wavenumbers. A task holds one frequency's chunk of components (in `f64`)
//! for a whole block of levels and writes it back once. The factors of a stretch are computed once and
//! reused while the stretches repeat (constant velocity or a layered model), so the common cost is one
//! complex multiply per (ω, k, level), in loops along k that the compiler vectorises. The dip limit weights
//! each component's contribution to the image by its propagation angle at the imaged level; it does not
//! filter the propagating field.

use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use super::MethodRules;
use crate::formulas::{dip_weight, phase_factor};
use crate::image::{image_block, ImageAssembly, KImages, K_CHUNK};
use crate::plan::{Level, Segment};
use crate::spectrum::{Fft2, Spectrum};
use crate::Plan;
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_velocity::VelocityModel;

/// Phase shift plans nothing of its own: the plan's blocks and segments are all it follows.
pub struct PhaseShift;

impl MethodRules for PhaseShift {
    /// A frequency's work grows with the wavenumbers that propagate at it, as its square (the evanescent
    /// ones are skipped), over a fixed part per frequency. Four GPU ranks sharing 481 frequencies of a
    /// 2048 × 2048-trace job equally migrated them in 0.05, 0.17, 0.38 and 0.59 s (H100), which this
    /// model, fitted to the first and the last, puts at 0.05, 0.14, 0.32 and 0.59 s.
    fn frequency_cost(&self, f: f64, f_max: f64) -> f64 {
        0.06 + (f / f_max.max(f64::MIN_POSITIVE)).powi(2)
    }

    fn device_planes(&self, _plan: &Plan, launch_levels: usize) -> (&'static str, usize) {
        ("k-domain images", launch_levels)
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
        migrate(spectrum, plan, fft2, asm, ctx)
    }
}

/// Phase shift continues with one velocity per depth step: it refuses a model that varies laterally.
pub(crate) fn velocity_refusal(velocity: &VelocityModel) -> Option<String> {
    velocity.varies_laterally().then(|| {
        format!(
            "the phase-shift method needs a velocity that depends on depth only, and the model ({}) varies \
             laterally: use split-step",
            velocity.describe()
        )
    })
}

/// Per-task buffers: the field and the current stretch's factors of one chunk, in `f64`.
#[derive(Default)]
pub(crate) struct ChunkWork {
    field: Vec<Complex64>,
    factor: Vec<Complex64>,
}

/// Carry one frequency's components over a chunk of wavenumbers (`k2` holds their `|k|²`) from the top of a
/// block down through its `segments`, adding `weight · dip · P` into `acc` (`[slot][k]`, one run of
/// `fields.len()` values per imaged level of the block) at every imaged level, and leave the field at the
/// block's bottom in `fields`. A stretch's factors are computed only when its velocity or thickness
/// differs from the previous stretch's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn continue_chunk(
    fields: &mut [Complex32],
    omega: f64,
    k2: &[f64],
    weight: f64,
    segments: &[Segment],
    levels: &[Level],
    dip_limit: Option<f64>,
    acc: &mut [Complex32],
    work: &mut ChunkWork,
) {
    let n = fields.len();
    work.field.clear();
    work.field.extend(fields.iter().map(|x| Complex64::new(x.re as f64, x.im as f64)));
    work.factor.resize(n, Complex64::default());
    let (p, f) = (&mut work.field, &mut work.factor);
    let mut current = None;
    for s in segments {
        if s.thickness > 0.0 {
            if current != Some((s.velocity, s.thickness)) {
                for (f, &k2) in f.iter_mut().zip(k2) {
                    *f = phase_factor(omega, k2, s.velocity, s.thickness);
                }
                current = Some((s.velocity, s.thickness));
            }
            for (p, f) in p.iter_mut().zip(f.iter()) {
                *p *= f;
            }
        }
        if let Some(slot) = s.slot {
            let acc = &mut acc[slot * n..(slot + 1) * n];
            match dip_limit {
                None => {
                    for (a, p) in acc.iter_mut().zip(p.iter()) {
                        *a += Complex32::new((p.re * weight) as f32, (p.im * weight) as f32);
                    }
                }
                Some(max) => {
                    for ((a, p), &k2) in acc.iter_mut().zip(p.iter()).zip(k2) {
                        let w = weight * dip_weight(omega, k2, levels[slot].velocity, max);
                        *a += Complex32::new((p.re * w) as f32, (p.im * w) as f32);
                    }
                }
            }
        }
    }
    for (x, p) in fields.iter_mut().zip(p.iter()) {
        *x = Complex32::new(p.re as f32, p.im as f32);
    }
}

/// Migrate the spectrum (which is consumed as the field is carried down) and fill the assembly.
pub fn migrate(
    spectrum: &mut Spectrum,
    plan: &Plan,
    fft2: &Fft2,
    asm: &mut ImageAssembly<'_>,
    ctx: &RunContext,
) -> Result<()> {
    let (nk, first) = (plan.nk(), spectrum.first);
    let k2 = plan.k_squared();
    ctx.progress.begin("phase shift", plan.levels.len() as u64);
    for (b, block) in plan.blocks.iter().enumerate() {
        ctx.check()?;
        let segments = plan.segments(b);
        let levels = &plan.levels[block.clone()];
        let mut kimg = KImages::new(levels.len(), nk)?;

        // The spectrum cut into columns of K_CHUNK wavenumbers across all frequencies: one task per column.
        let mut columns: Vec<Vec<&mut [Complex32]>> = (0..nk.div_ceil(K_CHUNK)).map(|_| Vec::new()).collect();
        for plane in spectrum.data.chunks_mut(nk) {
            for (c, part) in plane.chunks_mut(K_CHUNK).enumerate() {
                columns[c].push(part);
            }
        }
        columns.into_par_iter().zip(kimg.chunks_mut()).try_for_each_init(
            ChunkWork::default,
            |work, (planes, (k0, acc))| {
                ctx.check()?;
                for (iw, part) in planes.into_iter().enumerate() {
                    let k2 = &k2[k0..k0 + part.len()];
                    let (omega, weight) = (plan.omega(first + iw), plan.weight(first + iw));
                    continue_chunk(part, omega, k2, weight, &segments, levels, plan.dip_limit, acc, work);
                }
                Ok::<(), seis_core::Error>(())
            },
        )?;

        let indices: Vec<usize> = levels.iter().map(|l| l.index).collect();
        image_block(&kimg, &indices, plan, fft2, asm);
        ctx.progress.advance(levels.len() as u64);
    }
    ctx.progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formulas;

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
        let mut work = ChunkWork::default();
        // The chunk holds the component of interest and one that is evanescent in the second layer: |k|
        // beyond 2ω/v at 3000 m/s (0.1 rad/m) but not at 2000 m/s (0.15 rad/m).
        let mut field = [start, start];
        let mut acc = [Complex32::default(); 4]; // [slot][k]
        continue_chunk(&mut field, omega, &[k2, 0.015], 2.0, &segments, &levels, None, &mut acc, &mut work);
        let step = |v: f64| formulas::phase_factor(omega, k2, v, 10.0);
        let p0 = Complex64::new(0.3, -0.7);
        let at2 = p0 * step(2000.0).powu(2);
        let at5 = at2 * step(2000.0) * step(3000.0).powu(2);
        let c = |z: Complex64| Complex32::new(z.re as f32, z.im as f32);
        assert!((acc[0] - c(at2 * 2.0)).norm() < 1e-6);
        assert!((acc[2] - c(at5 * 2.0)).norm() < 1e-6);
        assert!((field[0] - c(at5)).norm() < 1e-6);
        assert!(acc[1].norm() > 1.0 && acc[3] == Complex32::default() && field[1] == Complex32::default());
    }
}
