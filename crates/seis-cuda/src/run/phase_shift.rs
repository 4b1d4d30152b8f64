//! Gazdag phase shift for v(z) on the device: the plan's blocks of depth cut into launches of the
//! register-resident kernel (kernels/phase_shift.cu), each imaging up to [`PS_MAX_SLOTS`] levels (fewer when
//! device memory is short) into k-domain images in shared memory, which are imaged and gathered into the
//! products at once. In frequency bands each band does the same, and its values add into the products.

use std::ops::Range;

use cudarc::driver::LaunchConfig;

use super::state::{dip_args, level_table, Run};
use crate::device::DeviceBuffer;
use crate::launch::Arg;
use crate::prelude::{Segment, PS_LANES, PS_WARPS, SEG_EXACT, SEG_MOVES, SEG_NEW_FACTORS};
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_imaging::{plan, Plan};

/// Levels imaged per launch of the phase-shift kernel: its k-domain sums live in shared memory
/// (levels × 32 lanes × 8 bytes = 32 KiB), under the 48 KiB a kernel gets without opting in.
const PS_MAX_SLOTS: usize = 128;

/// With `compute.deterministic`, each warp adds into sums of its own, added warp after warp at the end
/// instead of by shared-memory atomics in the order the warps arrive: as many levels as fit the same
/// shared memory then, eight times fewer.
const PS_MAX_SLOTS_ORDERED: usize = PS_MAX_SLOTS / PS_WARPS as usize;

/// The most levels a launch images, with the sums in a fixed order or not.
pub(super) fn most_slots(ordered: bool) -> usize {
    if ordered {
        PS_MAX_SLOTS_ORDERED
    } else {
        PS_MAX_SLOTS
    }
}

impl Run<'_> {
    /// Phase shift of one band with `plan` (the member's): each launch's k-domain images are imaged and
    /// gathered into the products.
    pub(super) fn phase_shift(&self, band: &Range<usize>, plan: &Plan, ctx: &RunContext) -> Result<()> {
        let dev = self.dev;
        let (max, rolloff) = dip_args(plan);
        // The imaging weights (1 or 2: exact) go into the field once, so the kernel's imaging is a plain sum.
        self.timed("migrate", || self.scale_spectrum(self.weight_cpx.ptr_at(band.start), band.len()))?;
        ctx.progress.begin("phase shift", plan.levels.len() as u64);
        let ordered = self.buffers.shape().settings.deterministic;
        let copies = if ordered { PS_WARPS as usize } else { 1 };
        for launch in launches(plan, self.buffers.slots.min(most_slots(ordered))) {
            ctx.check()?;
            let segs = DeviceBuffer::from_slice(&dev.gpu, &launch.segments)?;
            let slot_velocity = DeviceBuffer::from_slice(&dev.gpu, &launch.slot_velocity)?;
            let n_slots = launch.slot_levels.len();
            let kimg = self.buffers.planes.ptr();
            let cfg = LaunchConfig {
                grid_dim: ((self.nk as u32).div_ceil(PS_LANES), 1, 1),
                block_dim: (PS_LANES, PS_WARPS, 1),
                shared_mem_bytes: (copies * n_slots * PS_LANES as usize * 8) as u32,
            };
            self.timed("migrate", || {
                dev.launch(
                    &dev.compute,
                    "phase_shift_block",
                    cfg,
                    &[
                        Arg::Ptr(self.buffers.spectrum.ptr()),
                        Arg::Ptr(kimg),
                        Arg::Ptr(self.k2.ptr()),
                        Arg::Ptr(self.omega.ptr_at(band.start)),
                        Arg::I32(band.len() as i32),
                        Arg::I32(self.nk as i32),
                        Arg::Ptr(segs.ptr()),
                        Arg::I32(launch.segments.len() as i32),
                        Arg::Ptr(slot_velocity.ptr()),
                        Arg::I32(n_slots as i32),
                        Arg::F32(max),
                        Arg::F32(rolloff),
                        Arg::I32(ordered as i32),
                    ],
                )
            })?;
            let ids = level_table(dev, &launch.slot_levels)?;
            self.timed("inverse-fft", || self.fft_planes(kimg, n_slots, false))?;
            self.timed("gather", || self.gather(kimg, &ids, &launch.slot_levels, plan.image_scale()))?;
            // While the device runs this launch, the products the last one finished go.
            self.handover.hand_over_copied(&self.buffers, false)?;
            // The small tables of this launch must outlive the kernels that read them.
            dev.sync(&dev.compute)?;
            ctx.progress.advance(n_slots as u64);
        }
        ctx.progress.finish();
        Ok(())
    }
}

/// A launch of the phase-shift kernel: the segments from the previous launch's last level down to this
/// one's, with slots renumbered from 0.
pub(super) struct PsBlock {
    segments: Vec<Segment>,
    pub(super) slot_levels: Vec<usize>,
    slot_velocity: Vec<f32>,
}

/// Stretches thicker than this (m) take the kernel's double-precision path: their phase (kz × thickness)
/// is too large for float to carry with 1e-5 rad accuracy.
const FLOAT_MAX_THICKNESS: f64 = 40.0;

impl PsBlock {
    fn new() -> Self {
        PsBlock { segments: Vec::new(), slot_levels: Vec::new(), slot_velocity: Vec::new() }
    }
}

/// The plan's blocks cut so that no launch images more than `max_slots` levels (and never more than
/// [`PS_MAX_SLOTS`]).
pub(super) fn launches(plan: &Plan, max_slots: usize) -> Vec<PsBlock> {
    let max_slots = max_slots.clamp(1, PS_MAX_SLOTS);
    let mut out = Vec::new();
    for (b, block) in plan.blocks.iter().enumerate() {
        let levels = &plan.levels[block.clone()];
        let mut cur = PsBlock::new();
        // The factors a launch last computed: a stretch with the same ones reuses them.
        let mut last: Option<(f64, f64)> = None;
        for s in plan.segments(b) {
            let slot = s.slot.map(|i| {
                cur.slot_levels.push(levels[i].index);
                cur.slot_velocity.push(levels[i].velocity as f32);
                (cur.slot_levels.len() - 1) as i32
            });
            let mut flags = if s.thickness > 0.0 { SEG_MOVES } else { 0 };
            if s.thickness > 0.0 && last != Some((s.velocity, s.thickness)) {
                flags |= SEG_NEW_FACTORS;
                last = Some((s.velocity, s.thickness));
            }
            if s.thickness > FLOAT_MAX_THICKNESS {
                flags |= SEG_EXACT;
            }
            cur.segments.push(encode(&s, slot.unwrap_or(-1), flags));
            if cur.slot_levels.len() == max_slots {
                out.push(std::mem::replace(&mut cur, PsBlock::new()));
                last = None;
            }
        }
        if !cur.slot_levels.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// The kernel's record of stretch `s`.
fn encode(s: &plan::Segment, slot: i32, flags: i32) -> Segment {
    Segment {
        velocity: s.velocity,
        thickness: s.thickness,
        slowness2: (2.0 / s.velocity) as f32,
        phase_scale: (s.thickness / std::f64::consts::PI) as f32,
        slot,
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis};
    use seis_imaging::window::WindowParams;
    use seis_imaging::{image_geometry, ImageRequest, ImagingParams};
    use seis_velocity::{Interpolation, VelocityModel, VelocityTable};

    /// The launches of a plan carry every segment and image every planned level once, in order, with no
    /// launch over the shared-memory limit.
    #[test]
    fn phase_shift_launches_cover_the_plan() {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 8),
            LineAxis::new(1, 1, 8),
            SampleAxis { origin: 0.0, step: 4.0, len: 200, domain: Domain::Time },
        );
        let velocity = VelocityModel::Table(
            VelocityTable::new(vec![0.0, 300.0, 900.0], vec![1500.0, 2000.0, 2600.0], Interpolation::Linear).unwrap(),
        );
        let params = ImagingParams { dz: 5.0, zmax: Some(1500.0), levels_per_block: Some(200), ..Default::default() };
        let image = image_geometry(&g, &params, &velocity).unwrap();
        let plan =
            Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &velocity, &ImageRequest::whole(&image))
                .unwrap();
        let launches = launches(&plan, PS_MAX_SLOTS);
        let levels: Vec<usize> = launches.iter().flat_map(|b| b.slot_levels.iter().copied()).collect();
        assert_eq!(levels, plan.levels.iter().map(|l| l.index).collect::<Vec<_>>());
        assert!(launches.iter().all(|b| b.slot_levels.len() <= PS_MAX_SLOTS));
        assert!(launches.len() > plan.blocks.len(), "blocks of 200 levels must be cut");
        let thickness: f64 = launches.iter().flat_map(|b| &b.segments).map(|s| s.thickness).sum();
        assert!((thickness - plan.last_level() as f64 * 5.0).abs() < 1e-3, "{thickness}");
        for b in &launches {
            let slots: Vec<i32> = b.segments.iter().map(|s| s.slot).filter(|&s| s >= 0).collect();
            // the first stretch of every launch computes its factors (they start as 1)
            let first = b.segments.iter().find(|s| s.thickness > 0.0).expect("a stretch");
            assert_eq!(first.flags & SEG_NEW_FACTORS, SEG_NEW_FACTORS);
            assert_eq!(slots, (0..b.slot_levels.len() as i32).collect::<Vec<_>>());
        }
        // With fewer slots a launch, the launches are the same ones cut smaller, as the memory plan expects.
        let sizes = |l: &[PsBlock]| l.iter().map(|b| b.slot_levels.len()).collect::<Vec<_>>();
        assert_eq!(sizes(&launches), super::super::buffers::capped_launches(&plan, PS_MAX_SLOTS));
        for cap in [64, 32, 5, 1] {
            let cut = super::launches(&plan, cap);
            assert_eq!(sizes(&cut), super::super::buffers::capped_launches(&plan, cap), "{cap}");
            let levels_cut: Vec<usize> = cut.iter().flat_map(|b| b.slot_levels.iter().copied()).collect();
            assert_eq!(levels_cut, levels, "{cap}");
        }
        // Sums in a fixed order take eight times the shared memory a level: a run's shape (whose launches size
        // its FFT plans) has the launches the kernel is given, none over the shared memory.
        use crate::run::buffers::{RunSettings, RunShape};
        let request = ImageRequest::whole(&image);
        for ordered in [false, true] {
            let settings = RunSettings { deterministic: ordered, ..Default::default() };
            let shape = RunShape::of(&plan, &request, 1, settings);
            let cut = super::launches(&plan, most_slots(ordered));
            assert_eq!(shape, RunShape::new(&plan, &request, 1, settings, sizes(&cut)), "ordered: {ordered}");
            assert!(cut.iter().all(|b| b.slot_levels.len() * if ordered { 8 } else { 1 } <= PS_MAX_SLOTS));
        }
    }
}
