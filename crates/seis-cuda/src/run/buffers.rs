//! The device memory of a run, planned before anything is allocated (see [`super::super::memory`]): the
//! spectrum of one frequency band (and, in a velocity scan, its copy that each member starts from), the
//! ingest's landing slots (and, in bands, its staging of the spectrum on its way to the host), the products
//! of every member, the method's planes, and the cuFFT plans with the one work area they share.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::device::{DeviceBuffer, PinnedBuffer};
use crate::fft::{self, Layout};
use crate::launch::Launcher;
use crate::memory::{self, Bands};
use crate::prelude::Cpx;
use seis_core::error::{Error, Result};
use seis_imaging::{ImageRequest, Method, Plan};

/// Pinned staging buffers (and device landing slots) in flight during ingest: while the device transforms
/// one chunk and the bus carries the next, the host fills a third.
pub const RING: usize = 3;
/// How the engine runs a migration, whatever the job.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunSettings {
    /// The products stay on the device until the run ends and come back then, in one copy each (the
    /// benchmark's naive path): no pinned buffers to hand them over as they are finished, and no bands.
    pub products_at_end: bool,
    /// At most this many bytes of device memory (`compute.device_memory_gb`); `None`: what is free.
    pub memory_limit: Option<u64>,
    /// Ranks of a run over several GPUs that trade the input's frequencies (0 or 1: this process alone).
    pub ranks: usize,
    /// Sums in a fixed order, so that runs repeat bit for bit (`compute.deterministic`).
    pub deterministic: bool,
}

/// What decides the device buffers and FFT plans of a run: runs that agree on it can use the same ones.
#[derive(Clone, Debug, PartialEq)]
pub struct RunShape {
    method: Method,
    padded: [usize; 3],
    /// Frequencies of the share (plan indices). The range, not only its length: the frequency bands kept with
    /// the buffers are plan indices, so a share of the same width elsewhere in the band needs its own.
    frequencies: std::ops::Range<usize>,
    chunk_traces: usize,
    /// Levels of each phase-shift launch.
    launch_sizes: Vec<usize>,
    levels: usize,
    last_level: usize,
    stolt_nz: Option<usize>,
    /// Values of each requested box.
    boxes: Vec<usize>,
    /// Migrations of a velocity scan that share the ingest (1: one migration).
    members: usize,
    pub settings: RunSettings,
}

impl RunShape {
    /// The shape of a run of `plan` and `request`, by `members` migrations of a velocity scan, whose
    /// phase-shift launches (if any) image `launch_sizes` levels each.
    pub fn new(
        plan: &Plan,
        request: &ImageRequest,
        members: usize,
        settings: RunSettings,
        launch_sizes: Vec<usize>,
    ) -> Self {
        RunShape {
            method: plan.method.kind(),
            padded: plan.padded,
            frequencies: plan.frequencies.clone(),
            chunk_traces: plan.ingest_inlines * plan.input.shape()[1],
            launch_sizes,
            levels: plan.levels.len(),
            last_level: plan.last_level(),
            stolt_nz: plan.method.stolt().map(|g| g.nz_fft),
            boxes: request.boxes.iter().map(|b| b.len()).collect(),
            members: members.max(1),
            settings,
        }
    }

    /// What a run of this shape holds on the device besides its band (see [`memory::DeviceItems`]).
    pub(crate) fn device_items(&self, plan: &Plan) -> Result<memory::DeviceItems> {
        let products: u64 = self.boxes.iter().map(|&n| n as u64 * 4).sum::<u64>() * self.members as u64;
        let launch_levels = self.launch_sizes.iter().copied().max().unwrap_or(1);
        memory::DeviceItems::new(plan, products, self.members, self.settings.ranks.max(1), RING, launch_levels)
    }
}

/// The device buffers, pinned product buffers and FFT plans of a run. Allocating them takes the device
/// several milliseconds, so the engine makes them ahead of a run when it can, and keeps them after one for
/// the next run of the same shape (see `GpuEngine::prepare`).
pub struct RunBuffers {
    shape: RunShape,
    pub(super) bands: Bands,
    /// Depth levels a phase-shift launch images at most (each holds a k-domain plane).
    pub(super) slots: usize,
    /// The spectrum of one band (the widest).
    pub(super) spectrum: DeviceBuffer<Cpx>,
    /// A velocity scan: the band's spectrum as transformed, which every member starts from (the methods
    /// change the spectrum in place).
    pub(super) kept: Option<DeviceBuffer<Cpx>>,
    /// In bands: a chunk's spectrum, frequency-major (`[ω][trace]`), on its way to the host.
    pub(super) chunk_spectrum: Option<DeviceBuffer<Cpx>>,
    /// Several ranks: what the ranks trade through.
    pub(super) exchange: Option<ExchangeBuffers>,
    pub(super) landing: Vec<DeviceBuffer<f32>>,
    pub(super) half: Vec<DeviceBuffer<Cpx>>,
    /// The boxes of every member of the run, member after member.
    pub(super) products: Vec<DeviceBuffer<f32>>,
    /// Where one member's products land on the host (pinned, so the copies run at full speed,
    /// asynchronously); the members are handed over one after the other.
    pub(super) products_host: RefCell<Vec<PinnedBuffer<f32>>>,
    /// Phase shift: the k-domain images of one launch; Stolt: the kz lines; split-step: the level image.
    pub(super) planes: DeviceBuffer<Cpx>,
    pub(super) ffts: Ffts,
}

/// What a rank trades the input's frequencies through (see `ingest.rs`).
pub(super) struct ExchangeBuffers {
    /// Chunks of this rank's slab with every frequency, each waiting for its round of the exchange: the
    /// rank reads ahead into them while the ranks are still joining, as many as the memory left over by the
    /// run allows (at least one).
    pub(super) sends: Vec<DeviceBuffer<Cpx>>,
    /// The blocks of this rank's share that one round brings, one per rank.
    pub(super) recv: DeviceBuffer<Cpx>,
}

/// The cuFFT plans of a run and the one work area they share.
pub(super) struct Ffts {
    pub(super) r2c: fft::Plan,
    /// 2-D plans over planes of the padded grid, by batch size (forward and inverse use the same plan).
    pub(super) planes: HashMap<usize, fft::Plan>,
    /// Stolt's inverse FFT along kz.
    pub(super) kz: Option<fft::Plan>,
    _work: DeviceBuffer<u8>,
}

impl RunBuffers {
    /// Plan the device memory of a run of `shape` and allocate it (contents undefined).
    pub fn new(dev: &Launcher, plan: &Plan, shape: RunShape) -> Result<Self> {
        // Over 100 lines: the allocations follow the memory plan in its order, each sized by the one plan,
        // and read best as that one list.
        let pt = plan.padded[2];
        let (nk, nw) = (plan.nk(), plan.n_omega());
        let chunk_traces = shape.chunk_traces;
        let bins = pt / 2 + 1;
        let ranks = shape.settings.ranks.max(1);
        let items = shape.device_items(plan)?;
        let available = dev.available_memory(shape.settings.memory_limit)?;
        // cuFFT's work area is known only once the plans exist, and the plans depend on the bands: plan the
        // memory, make the plans, and if their work area does not fit, plan again with that much set aside.
        let mut reserve = 0u64;
        let (layout, r2c, planes_ffts, kz, work_bytes) = loop {
            let layout = items.plan(plan.frequencies.clone(), available.saturating_sub(reserve), &dev.gpu.info.name)?;
            let t = std::time::Instant::now();
            let (r2c, planes_ffts, kz) =
                make_ffts(plan, &layout.bands, &capped_launches(plan, layout.slots), chunk_traces)?;
            tracing::debug!("cuFFT plans made in {:.3} s", t.elapsed().as_secs_f64());
            let work_bytes =
                planes_ffts.values().chain(kz.iter()).chain([&r2c]).map(|p| p.work_bytes).max().unwrap_or(0) as u64;
            if layout.budget.total() + work_bytes <= available {
                break (layout, r2c, planes_ffts, kz, work_bytes);
            }
            if reserve >= work_bytes {
                return Err(Error::Backend(format!(
                    "the job needs {} of device memory ({}, FFT work area {}) but {} can give {}",
                    memory::gib(layout.budget.total() + work_bytes),
                    layout.budget.describe(),
                    memory::gib(work_bytes),
                    dev.gpu.info.name,
                    memory::gib(available)
                )));
            }
            reserve = work_bytes;
        };
        let bands = layout.bands;
        if bands.banded() && shape.settings.products_at_end {
            return Err(Error::Backend("the naive reference path runs only jobs that fit at once".into()));
        }
        if bands.banded() {
            tracing::info!(
                "the spectrum does not fit the device at once: {} frequency bands of up to {} frequencies, the \
                 spectrum waiting on the host ({}, FFT work area {})",
                bands.ranges.len(),
                bands.widest(),
                layout.budget.describe(),
                memory::gib(work_bytes)
            );
        }
        let plane_count = match plan.method.kind() {
            Method::PhaseShift => capped_launches(plan, layout.slots).into_iter().max().unwrap_or(1),
            Method::Stolt => plan.method.stolt().map_or(1, |g| g.nz_fft),
            Method::SplitStep => 1,
        };
        let allocating = std::time::Instant::now();
        let work = dev.gpu.alloc::<u8>(work_bytes.max(1) as usize)?;
        for p in planes_ffts.values().chain(kz.iter()).chain([&r2c]) {
            p.bind(&dev.compute, work.ptr())?;
        }
        let gpu = &dev.gpu;
        let spectrum = gpu.alloc::<Cpx>(bands.widest().max(1) * nk)?;
        let kept = if shape.members > 1 { Some(gpu.alloc::<Cpx>(bands.widest().max(1) * nk)?) } else { None };
        let chunk_spectrum =
            if bands.banded() { Some(gpu.alloc::<Cpx>(chunk_traces * shape.frequencies.len())?) } else { None };
        let exchange = if ranks > 1 {
            let left = available.saturating_sub(layout.budget.total() + work_bytes);
            let sends = read_ahead(plan.input.shape()[0], ranks, plan.ingest_inlines, chunk_traces * nw * 8, left);
            Some(ExchangeBuffers {
                sends: (0..sends).map(|_| gpu.alloc::<Cpx>(chunk_traces * nw)).collect::<Result<_>>()?,
                recv: gpu.alloc::<Cpx>(ranks * chunk_traces * shape.frequencies.len())?,
            })
        } else {
            None
        };
        let landing = (0..RING).map(|_| gpu.alloc::<f32>(chunk_traces * pt)).collect::<Result<Vec<_>>>()?;
        let half = (0..RING).map(|_| gpu.alloc::<Cpx>(chunk_traces * bins)).collect::<Result<Vec<_>>>()?;
        let products = (0..shape.members)
            .flat_map(|_| shape.boxes.iter())
            .map(|&n| gpu.alloc::<f32>(n))
            .collect::<Result<Vec<_>>>()?;
        let planes = gpu.alloc::<Cpx>(plane_count * nk)?;
        let products_host = if shape.settings.products_at_end {
            Vec::new()
        } else {
            shape.boxes.iter().map(|&n| gpu.alloc_pinned::<f32>(n)).collect::<Result<Vec<_>>>()?
        };
        tracing::debug!("device buffers allocated in {:.3} s", allocating.elapsed().as_secs_f64());
        Ok(RunBuffers {
            shape,
            bands,
            slots: layout.slots,
            spectrum,
            kept,
            chunk_spectrum,
            exchange,
            landing,
            half,
            products,
            products_host: RefCell::new(products_host),
            planes,
            ffts: Ffts { r2c, planes: planes_ffts, kz, _work: work },
        })
    }

    pub fn shape(&self) -> &RunShape {
        &self.shape
    }

    /// The boxes of member `member`, in the request's order.
    pub(super) fn member_products(&self, member: usize) -> &[DeviceBuffer<f32>] {
        let n = self.shape.boxes.len();
        &self.products[member * n..(member + 1) * n]
    }
}

/// The levels of the phase-shift launches when a launch may image at most `slots` levels (no more than the
/// shape's largest launch): the plan's blocks of levels cut into pieces of `slots`, as
/// `phase_shift::launches` cuts them.
pub(super) fn capped_launches(plan: &Plan, slots: usize) -> Vec<usize> {
    let slots = slots.max(1);
    plan.blocks.iter().flat_map(|b| (0..b.len()).step_by(slots).map(move |s| (b.len() - s).min(slots))).collect()
}

/// The FFT plans of a run: the R2C along traces, one 2-D plan per batch size it uses (the bands, the
/// phase-shift launches, Stolt's levels), and Stolt's kz plan.
fn make_ffts(
    plan: &Plan,
    bands: &Bands,
    launch_sizes: &[usize],
    chunk_traces: usize,
) -> Result<(fft::Plan, HashMap<usize, fft::Plan>, Option<fft::Plan>)> {
    let [pi, px, pt] = plan.padded;
    let nk = plan.nk();
    let bins = pt / 2 + 1;
    let r2c =
        fft::Plan::new(fft::Kind::R2C, &Layout::contiguous(&[pt as i64], pt as i64, bins as i64, chunk_traces as i64))?;
    let mut batches: Vec<usize> = bands.ranges.iter().map(|r| r.len()).collect();
    match plan.method.kind() {
        Method::PhaseShift => batches.extend(launch_sizes),
        Method::Stolt => batches.push(plan.last_level() + 1),
        Method::SplitStep => {}
    }
    let mut planes = HashMap::new();
    for b in batches.into_iter().flat_map(|n| fft::plane_batches(n, nk).map(|batch| batch.len())) {
        if let std::collections::hash_map::Entry::Vacant(v) = planes.entry(b) {
            v.insert(fft::Plan::new(
                fft::Kind::C2C,
                &Layout::contiguous(&[pi as i64, px as i64], nk as i64, nk as i64, b as i64),
            )?);
        }
    }
    let kz = match plan.method.stolt() {
        Some(grid) => {
            let n = grid.nz_fft as i64;
            let layout = Layout {
                n: vec![n],
                inembed: vec![n],
                istride: nk as i64,
                idist: 1,
                onembed: vec![n],
                ostride: nk as i64,
                odist: 1,
                batch: nk as i64,
            };
            Some(fft::Plan::new(fft::Kind::C2C, &layout)?)
        }
        None => None,
    };
    Ok((r2c, planes, kz))
}

/// How many chunks a rank of `ranks` stages for the exchange, `chunk_bytes` each, with `left` bytes of
/// device memory beyond the run's plan: every round of the rank's slab of `ni` inlines in chunks of
/// `inlines` if half of what is left holds them, else as many as it holds, and at least the one the plan
/// counts. The other half stays free for NCCL, which sets up its buffers meanwhile.
pub(crate) fn read_ahead(ni: usize, ranks: usize, inlines: usize, chunk_bytes: usize, left: u64) -> usize {
    let rounds = ni.div_ceil(ranks.max(1)).div_ceil(inlines.max(1));
    let extra = (left / 2 / chunk_bytes.max(1) as u64).min(rounds as u64) as usize;
    (1 + extra).min(rounds).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::{Domain, Geometry, LineAxis, SampleAxis};
    use seis_imaging::bands::Share;
    use seis_imaging::window::WindowParams;
    use seis_imaging::{image_geometry, ImagingParams};
    use seis_velocity::VelocityModel;

    /// Buffers kept from one share are not taken for another share of the same width: the frequency bands
    /// they carry are plan indices, and reusing them migrated the next share's spectrum at the last
    /// share's frequencies.
    #[test]
    fn shares_of_one_width_elsewhere_in_the_band_have_shapes_of_their_own() {
        let g = Geometry::regular(
            LineAxis::new(1, 1, 8),
            LineAxis::new(1, 1, 8),
            SampleAxis { origin: 0.0, step: 4.0, len: 20, domain: Domain::Time },
        );
        let v = VelocityModel::Constant(2000.0);
        // Split-step: its shares are of near-equal width (phase shift's are cut at equal work).
        let params = ImagingParams { zmax: Some(100.0), fmax: 125.0, method: Method::SplitStep, ..Default::default() };
        let image = image_geometry(&g, &params, &v).unwrap();
        let request = ImageRequest::whole(&image);
        let plan = Plan::new(&g, [10.0, 10.0], &WindowParams::default(), &params, &v, &request).unwrap();
        let share = |index| {
            let mut p = plan.clone();
            p.restrict_to(Share { index, count: 4 });
            p
        };
        let (second, third) = (share(1), share(2));
        assert_eq!(second.frequencies.len(), third.frequencies.len(), "the test needs two shares of one width");
        let shape = |p: &Plan| RunShape::new(p, &request, 1, RunSettings::default(), Vec::new());
        assert_ne!(shape(&second), shape(&third));
        assert_eq!(shape(&third), shape(&share(2)));
        // Nor are one migration's buffers taken for a velocity scan, which keeps every member's products and
        // a copy of the band.
        let scan = RunShape::new(&third, &request, 3, RunSettings::default(), Vec::new());
        assert_ne!(shape(&third), scan);
    }

    /// A rank stages its whole slab when half the memory left holds it, as much as it holds otherwise, and
    /// always the one chunk the memory plan counts.
    #[test]
    fn a_rank_reads_ahead_as_far_as_half_the_memory_left_allows() {
        // 2048 inlines over 4 ranks in chunks of 8: 64 rounds of 100 bytes each.
        assert_eq!(read_ahead(2048, 4, 8, 100, 1 << 30), 64);
        assert_eq!(read_ahead(2048, 4, 8, 100, 2 * 100 * 10), 11, "ten more, and the planned one");
        assert_eq!(read_ahead(2048, 4, 8, 100, 199), 1);
        assert_eq!(read_ahead(2048, 4, 8, 100, 0), 1);
        // an uneven split: the largest slab (3 of 10 inlines) in chunks of 2
        assert_eq!(read_ahead(10, 4, 2, 100, u64::MAX), 2);
        assert_eq!(read_ahead(3, 8, 5, 100, u64::MAX), 1);
    }
}
