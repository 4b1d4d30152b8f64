//! One migration on the device, step for step the CPU engine's (src/imaging), on the same plan and layout.
//!
//! Ingest: each chunk of inlines is read and windowed on the host straight into one of a few pinned staging
//! buffers, copied to the device by a pitched copy that lands every trace in a row padded to the FFT length
//! (copy stream), and transformed there — R2C along the contiguous traces, then the frequency band moved
//! into the ω-major spectrum (compute stream) — while the host reads the next chunk. The 2-D FFTs, the
//! migration and the imaging then run on the device, and only the requested boxes come back.
//!
//! When the spectrum does not fit (see [`super::memory`]), the frequencies are taken in bands: each band is
//! ingested (the input is read and crosses the bus once per band), migrated and imaged on its own, and the
//! image — phase shift's k-domain images of every level, or the requested boxes — stays resident and adds
//! up the bands, since the imaging condition is a sum over frequency.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, LaunchConfig};
use rayon::prelude::*;

use super::device::{self, check, copy_2d, DeviceBuffer, PinnedBuffer, Source};
use super::engine::{grid_1d, Arg, GpuEngine};
use super::fft::{self, Layout};
use super::memory::{self, Bands, Budget};
use super::prelude::{Cpx, Segment, BAND_TILE, PS_LANES, PS_WARPS, SEG_EXACT, SEG_MOVES, SEG_NEW_FACTORS};
use super::timer::DeviceTimer;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::{formulas, plan, Completion, ImageRequest, Method, Plan, ProductSink};
use crate::stats::{RunStats, Stages};
use crate::velocity::VelocityModel;
use crate::volume::{VolumeReader, WriteMode};
use crate::window;

/// Pinned staging buffers (and device landing slots) in flight during ingest: while the device transforms
/// one chunk and the bus carries the next, the host fills a third.
pub const RING: usize = 3;
/// Levels imaged per launch of the phase-shift kernel: its k-domain sums live in shared memory
/// (levels × 32 lanes × 8 bytes = 32 KiB), under the 48 KiB a kernel gets without opting in.
const PS_MAX_SLOTS: usize = 128;

/// One migration on the device: its buffers and plans, and the plan's tables.
pub(super) struct Run<'a> {
    e: &'a GpuEngine,
    plan: &'a Plan,
    request: &'a ImageRequest,
    nk: usize,
    bins: usize,
    buffers: RunBuffers,
    /// Per frequency of the plan: exp(−iω t0), ω, |k|², imaging weights (as complex, for scale_planes).
    delay: DeviceBuffer<Cpx>,
    /// |k|² and ω in double: the kernels form kz² = (2ω/v)² − |k|² from them without cancellation.
    k2: DeviceBuffer<f64>,
    omega: DeviceBuffer<f64>,
    weight: DeviceBuffer<f32>,
    weight_cpx: DeviceBuffer<Cpx>,
    /// The device time of the stages on the compute stream, summed into the stage table at the end.
    timer: DeviceTimer<'a>,
    /// Where the finished products go, and how far they are on their way there.
    handover: Handover<'a>,
}

/// Products leave the run as soon as they are finished (see [`crate::imaging::delivery`]): once the gather
/// that fills a box's last level is queued, the box is copied to its pinned buffer on the copy stream while
/// the device goes on with the deeper levels; the host hands it to the sink when the copy is done.
struct Handover<'a> {
    sink: &'a dyn ProductSink,
    /// Counts the levels gathered into each box during the last band (earlier bands only add to them).
    completion: RefCell<Completion>,
    last_band: Cell<bool>,
    /// Copies queued and not yet handed over.
    copies: RefCell<Vec<ProductCopy>>,
    /// The products' host memory, being made ready on a thread of its own (see `writable_buffers`).
    host: RefCell<HostMemory>,
    /// The device time of the copies (stage "d2h").
    timer: DeviceTimer<'a>,
    /// Bytes of the copies handed over.
    bytes: Cell<u64>,
}

/// A product's copy to its pinned buffer, queued on the copy-out stream.
struct ProductCopy {
    index: usize,
    /// Recorded after the copy.
    copied: CudaEvent,
}

enum HostMemory {
    NotYet,
    Making(std::thread::JoinHandle<Vec<Vec<f32>>>),
    Ready(Vec<Vec<f32>>),
}

/// What decides the device buffers and FFT plans of a run: runs that agree on it can use the same ones.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RunShape {
    method: Method,
    padded: [usize; 3],
    frequencies: usize,
    chunk_traces: usize,
    /// Levels of each phase-shift launch.
    launch_sizes: Vec<usize>,
    levels: usize,
    last_level: usize,
    stolt_nz: Option<usize>,
    /// Values of each requested box.
    boxes: Vec<usize>,
    naive: bool,
    memory_limit: Option<u64>,
}

impl RunShape {
    pub(super) fn of(e: &GpuEngine, plan: &Plan, request: &ImageRequest) -> Self {
        RunShape {
            method: plan.method,
            padded: plan.padded,
            frequencies: plan.n_omega(),
            chunk_traces: plan.ingest_inlines * plan.input.shape()[1],
            launch_sizes: match plan.method {
                Method::PhaseShift => phase_shift_launches(plan).iter().map(|b| b.slot_levels.len()).collect(),
                _ => Vec::new(),
            },
            levels: plan.levels.len(),
            last_level: plan.last_level(),
            stolt_nz: plan.stolt.as_ref().map(|g| g.nz_fft),
            boxes: request.boxes.iter().map(|b| b.len()).collect(),
            naive: e.naive,
            memory_limit: e.memory_limit,
        }
    }
}

/// The device buffers, pinned product buffers and FFT plans of a run. Allocating them takes the device
/// several milliseconds, so the engine makes them ahead of a run when it can, and keeps them after one for
/// the next run of the same shape (see `GpuEngine::prepare`).
pub(super) struct RunBuffers {
    shape: RunShape,
    bands: Bands,
    /// The spectrum of one band (the widest).
    spectrum: DeviceBuffer<Cpx>,
    landing: Vec<DeviceBuffer<f32>>,
    half: Vec<DeviceBuffer<Cpx>>,
    products: Vec<DeviceBuffer<f32>>,
    /// Where the products land on the host (pinned, so the copies run at full speed, asynchronously).
    products_host: RefCell<Vec<PinnedBuffer<f32>>>,
    /// Phase shift: the k-domain images of one launch (or of every level, when banded); Stolt: the kz lines;
    /// split-step: the level image.
    planes: DeviceBuffer<Cpx>,
    ffts: Ffts,
}

/// The cuFFT plans of a run and the one work area they share.
struct Ffts {
    r2c: fft::Plan,
    /// 2-D plans over planes of the padded grid, by batch size (forward and inverse use the same plan).
    planes: HashMap<usize, fft::Plan>,
    /// Stolt's inverse FFT along kz.
    kz: Option<fft::Plan>,
    _work: DeviceBuffer<u8>,
}

impl RunBuffers {
    /// Plan the device memory of a run of `shape` and allocate it (contents undefined).
    pub(super) fn new(e: &GpuEngine, plan: &Plan, shape: RunShape) -> Result<Self> {
        let pt = plan.padded[2];
        let (nk, nw) = (plan.nk(), plan.n_omega());
        let chunk_traces = shape.chunk_traces;
        let bins = pt / 2 + 1;
        let plane = (nk * 8) as u64;

        // What does not depend on the band: ingest buffers, products, tables; and the method's planes.
        let products_bytes: u64 = shape.boxes.iter().map(|&n| n as u64 * 4).sum();
        let common = vec![
            ("ingest ring", (RING * chunk_traces * (pt * 4 + bins * 8)) as u64),
            ("products", products_bytes),
            ("tables", (nk * 8 + nw * 32) as u64),
        ];
        let budget = |planes_name: &'static str, planes: usize| {
            let mut items = common.clone();
            items.push((planes_name, planes as u64 * plane));
            Budget { items }
        };
        let launch_sizes = &shape.launch_sizes;
        let (whole, banded, why_not) = match plan.method {
            Method::PhaseShift => (
                budget("k-domain images", launch_sizes.iter().copied().max().unwrap_or(1)),
                // in bands every imaged level keeps its k-domain image until the last band is in
                Some(budget("k-domain images", plan.levels.len())),
                "",
            ),
            Method::Stolt => {
                let grid = plan.stolt.as_ref().ok_or_else(|| Error::Request("a Stolt plan has no kz grid".into()))?;
                if grid.nz_fft <= plan.last_level() {
                    return Err(Error::Request(format!(
                        "the Stolt kz grid ({} samples) is shorter than the deepest level ({})",
                        grid.nz_fft,
                        plan.last_level()
                    )));
                }
                (budget("kz lines", grid.nz_fft), None, "Stolt needs every frequency of a wavenumber at once")
            }
            Method::SplitStep => (budget("level image", 1), Some(budget("level image", 1)), ""),
        };
        let available = e.available_memory()?;
        // cuFFT's work area is known only once the plans exist, and the plans depend on the bands: plan the
        // memory, make the plans, and if their work area does not fit, plan again with that much set aside.
        let mut reserve = 0u64;
        let (bands, used, r2c, planes_ffts, kz, work_bytes) = loop {
            let (bands, used) = memory::plan(
                nw,
                plane,
                &whole,
                banded.as_ref(),
                available.saturating_sub(reserve),
                &e.gpu.info.name,
                why_not,
            )?;
            let t = std::time::Instant::now();
            let (r2c, planes_ffts, kz) = make_ffts(plan, &bands, launch_sizes, chunk_traces)?;
            tracing::debug!("cuFFT plans made in {:.3} s", t.elapsed().as_secs_f64());
            let work_bytes =
                planes_ffts.values().chain(kz.iter()).chain([&r2c]).map(|p| p.work_bytes).max().unwrap_or(0) as u64;
            if used.total() + work_bytes <= available {
                break (bands, used, r2c, planes_ffts, kz, work_bytes);
            }
            if reserve >= work_bytes {
                return Err(Error::Backend(format!(
                    "the job needs {} of device memory ({}, FFT work area {}) but {} can give {}",
                    memory::gib(used.total() + work_bytes),
                    used.describe(),
                    memory::gib(work_bytes),
                    e.gpu.info.name,
                    memory::gib(available)
                )));
            }
            reserve = work_bytes;
        };
        if bands.banded() && e.naive {
            return Err(Error::Backend("the naive reference path runs only jobs that fit at once".into()));
        }
        if bands.banded() {
            tracing::info!(
                "the spectrum does not fit at once: {} frequency bands of up to {} frequencies ({}, FFT work area {})",
                bands.ranges.len(),
                bands.widest(),
                used.describe(),
                memory::gib(work_bytes)
            );
        }
        let plane_count = match plan.method {
            Method::PhaseShift if bands.banded() => plan.levels.len(),
            Method::PhaseShift => launch_sizes.iter().copied().max().unwrap_or(1),
            Method::Stolt => plan.stolt.as_ref().map_or(1, |g| g.nz_fft),
            Method::SplitStep => 1,
        };
        let allocating = std::time::Instant::now();
        let work = e.gpu.alloc::<u8>(work_bytes.max(1) as usize)?;
        for p in planes_ffts.values().chain(kz.iter()).chain([&r2c]) {
            p.bind(&e.compute, work.ptr())?;
        }
        let gpu = &e.gpu;
        let spectrum = gpu.alloc::<Cpx>(bands.widest() * nk)?;
        let landing = (0..RING).map(|_| gpu.alloc::<f32>(chunk_traces * pt)).collect::<Result<Vec<_>>>()?;
        let half = (0..RING).map(|_| gpu.alloc::<Cpx>(chunk_traces * bins)).collect::<Result<Vec<_>>>()?;
        let products = shape.boxes.iter().map(|&n| gpu.alloc::<f32>(n)).collect::<Result<Vec<_>>>()?;
        let planes = gpu.alloc::<Cpx>(plane_count * nk)?;
        let products_host = if e.naive {
            Vec::new()
        } else {
            shape.boxes.iter().map(|&n| gpu.alloc_pinned::<f32>(n)).collect::<Result<Vec<_>>>()?
        };
        tracing::debug!("device buffers allocated in {:.3} s", allocating.elapsed().as_secs_f64());
        Ok(RunBuffers {
            shape,
            bands,
            spectrum,
            landing,
            half,
            products,
            products_host: RefCell::new(products_host),
            planes,
            ffts: Ffts { r2c, planes: planes_ffts, kz, _work: work },
        })
    }

    pub(super) fn shape(&self) -> &RunShape {
        &self.shape
    }
}

impl<'a> Run<'a> {
    /// A run of `plan` on `buffers` (made for its shape): clears what must start at zero and uploads the
    /// plan's tables.
    pub(super) fn new(
        e: &'a GpuEngine,
        plan: &'a Plan,
        request: &'a ImageRequest,
        buffers: RunBuffers,
        sink: &'a dyn ProductSink,
    ) -> Result<Self> {
        debug_assert!(buffers.shape == RunShape::of(e, plan, request));
        let (nk, nw) = (plan.nk(), plan.n_omega());
        let bins = plan.padded[2] / 2 + 1;
        for l in &buffers.landing {
            // The padding of every row stays zero: copies fill only the first nt samples of a row and the R2C
            // is out of place.
            l.zero_async(&e.compute)?;
        }
        for p in &buffers.products {
            p.zero_async(&e.compute)?;
        }
        if plan.method == Method::PhaseShift && buffers.bands.banded() {
            buffers.planes.zero_async(&e.compute)?;
        }
        let delay: Vec<Cpx> = (0..nw)
            .map(|iw| {
                let phase = -plan.omega(iw) * plan.t0;
                [phase.cos() as f32, phase.sin() as f32]
            })
            .collect();
        let weights: Vec<f32> = (0..nw).map(|iw| plan.weight(iw) as f32).collect();
        let weights_cpx: Vec<Cpx> = weights.iter().map(|&w| [w, 0.0]).collect();
        let omega: Vec<f64> = (0..nw).map(|iw| plan.omega(iw)).collect();
        let gpu = &e.gpu;
        let run = Run {
            e,
            plan,
            request,
            nk,
            bins,
            buffers,
            delay: DeviceBuffer::from_slice(gpu, &delay)?,
            k2: DeviceBuffer::from_slice(gpu, &plan.k_squared())?,
            omega: DeviceBuffer::from_slice(gpu, &omega)?,
            weight: DeviceBuffer::from_slice(gpu, &weights)?,
            weight_cpx: DeviceBuffer::from_slice(gpu, &weights_cpx)?,
            timer: DeviceTimer::new(gpu),
            handover: Handover {
                sink,
                completion: RefCell::new(Completion::new(request)),
                last_band: Cell::new(false),
                copies: Default::default(),
                host: RefCell::new(HostMemory::NotYet),
                timer: DeviceTimer::new(gpu),
                bytes: Cell::new(0),
            },
        };
        // The clears above ran on the compute stream; the copy stream writes the landing slots next.
        e.sync(&e.compute)?;
        Ok(run)
    }

    /// The run's buffers, for the next run of the same shape (the caller has synchronised the streams).
    pub(super) fn into_buffers(self) -> RunBuffers {
        self.buffers
    }

    /// Queue `f`'s work on the compute stream as part of stage `stage` (see [`DeviceTimer`]).
    fn timed<T>(&self, stage: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.timer.time(stage, &self.e.compute, f)
    }

    /// 2-D FFTs of the first `n` planes at `planes`, in place.
    fn fft_planes(&self, planes: u64, n: usize, forward: bool) -> Result<()> {
        let p =
            self.buffers.ffts.planes.get(&n).ok_or_else(|| Error::Gpu(format!("no 2-D FFT plan for {n} planes")))?;
        // SAFETY: `planes` holds at least n planes of nk values.
        unsafe { p.exec(planes, planes, forward) }
    }

    pub(super) fn execute(
        &self,
        src: &dyn VolumeReader,
        velocity: &VelocityModel,
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
    ) -> Result<()> {
        let e = self.e;
        let t = Instant::now();
        let count = self.buffers.bands.ranges.len();
        ctx.stats.frequency_bands = count;
        for (b, band) in self.buffers.bands.ranges.iter().enumerate() {
            if count > 1 {
                tracing::info!("frequency band {} of {count}: {} frequencies", b + 1, band.len());
            }
            self.handover.last_band.set(b + 1 == count);
            // Ingest fills only the data part of each plane; the padding must be zero (for the next band too,
            // after this one's transforms have filled it).
            self.buffers.spectrum.zero_async(&e.compute)?;
            if e.naive {
                self.ingest_naive(src, ctx)?;
            } else {
                self.ingest(src, band, ctx, staging)?;
                let mut host = self.handover.host.borrow_mut();
                if matches!(*host, HostMemory::NotYet) {
                    // The products' host memory is made ready while the device migrates (see
                    // `writable_buffers`); not earlier, where it would take a core from the ingest.
                    let lens: Vec<usize> = self.buffers.products.iter().map(|p| p.len()).collect();
                    *host = HostMemory::Making(std::thread::spawn(move || writable_buffers(&lens)));
                }
            }
            self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), band.len(), true))?;
            match self.plan.method {
                Method::PhaseShift => self.phase_shift(band, ctx)?,
                Method::Stolt => self.stolt(ctx)?,
                Method::SplitStep => self.split_step(band, velocity, ctx)?,
            }
        }
        if self.plan.method == Method::PhaseShift && self.buffers.bands.banded() {
            self.image_all_levels()?;
        }
        e.sync(&e.compute)?;
        ctx.stats.add("ingest+compute", t.elapsed(), 0);
        let mut steps = Stages::default();
        self.timer.collect(&mut ctx.stats)?;
        steps.lap("timers");
        if e.naive {
            for (i, image) in self.download_naive(&mut ctx.stats)?.into_iter().enumerate() {
                self.handover.sink.complete(i, image);
            }
        } else {
            self.hand_over_the_rest(&mut ctx.stats)?;
        }
        steps.lap("download");
        steps.log_trace("after the migration");
        Ok(())
    }

    /// Read, window, upload and transform the input chunk by chunk, overlapping the three, keeping the
    /// frequencies of `band`.
    fn ingest(
        &self,
        src: &dyn VolumeReader,
        band: &Range<usize>,
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
    ) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let copied: Vec<CudaEvent> = (0..RING).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let transformed: Vec<CudaEvent> = (0..RING).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let chunks = plan.ingest_chunks();
        // The copies (copy stream) and the transforms (compute stream), summed into the stages at the end.
        let timer = DeviceTimer::new(&e.gpu);
        let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
        let (mut read_s, mut bytes) = (0.0, 0u64);
        let wall = Instant::now();
        ctx.progress.begin("read and upload", ni as u64);
        for (c, il) in chunks.iter().cloned().enumerate() {
            ctx.check()?;
            let slot = c % RING;
            let il0 = il.start;
            let traces = il.len() * nx;
            if c >= RING {
                // The copy out of this staging buffer (chunk c − RING) must be over before we refill it.
                check("waiting for a staging buffer", copied[slot].synchronize())?;
            }
            let host = &mut staging[slot].as_mut_slice_unsynced()[..traces * nt];
            let t = Instant::now();
            window::read_conditioned(src, il.clone(), host, &conditioner, WriteMode::Streaming)?;
            conditioner.check(src)?;
            read_s += t.elapsed().as_secs_f64();

            if c >= RING {
                e.wait(&e.copy_in, &transformed[slot])?;
            }
            timer.time("h2d", &e.copy_in, || {
                // SAFETY: the staging buffer holds `traces` rows of nt floats and stays untouched until
                // `copied[slot]` completes; the landing slot holds chunk_traces rows of pt floats.
                unsafe {
                    let from = Source::Host(staging[slot].host_ptr());
                    copy_2d(self.buffers.landing[slot].ptr(), pt * 4, from, nt * 4, nt * 4, traces, &e.copy_in)
                }
            })?;
            e.record(&copied[slot], &e.copy_in)?;
            bytes += (traces * nt * 4) as u64;

            e.wait(&e.compute, &copied[slot])?;
            timer.time("time-fft", &e.compute, || {
                // SAFETY: landing and half slots are laid out as the R2C plan says (chunk_traces rows); rows
                // past `traces` in a last, partial chunk are transformed but never read.
                unsafe {
                    self.buffers.ffts.r2c.exec(self.buffers.landing[slot].ptr(), self.buffers.half[slot].ptr(), true)?
                };
                self.band_transpose(slot, traces, il0, band)
            })?;
            e.record(&transformed[slot], &e.compute)?;
            ctx.progress.advance(il.len() as u64);
        }
        e.sync(&e.compute)?;
        ctx.progress.finish();
        ctx.stats.add("read", secs(read_s), bytes);
        ctx.stats.nonfinite_samples += conditioner.check(src)?;
        timer.collect(&mut ctx.stats)?;
        // The timer knows times, not bytes: the copies' bytes join their stage here.
        ctx.stats.add("h2d", Duration::ZERO, bytes);
        ctx.stats.add("ingest", wall.elapsed(), bytes);
        ctx.stats.host_to_device_bytes += bytes;
        Ok(())
    }

    /// The naive ingest: read everything, window everything, one pageable upload, then transform.
    fn ingest_naive(&self, src: &dyn VolumeReader, ctx: &mut RunContext) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let wall = Instant::now();
        let t = Instant::now();
        let mut host = vec![0.0f32; ni * nx * nt];
        let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
        window::read_conditioned(src, 0..ni, &mut host, &conditioner, WriteMode::Cached)?;
        ctx.stats.nonfinite_samples += conditioner.check(src)?;
        ctx.stats.add("read", t.elapsed(), (host.len() * 4) as u64);
        let raw = e.gpu.alloc::<f32>(host.len())?;
        let t = Instant::now();
        device::upload_pageable(&raw, &host)?;
        let bytes = (host.len() * 4) as u64;
        ctx.stats.add("h2d", t.elapsed(), bytes);
        ctx.stats.host_to_device_bytes += bytes;
        drop(host);
        let band = 0..plan.n_omega();
        ctx.progress.begin("transform", ni as u64);
        for il0 in (0..ni).step_by(plan.ingest_inlines) {
            let il = il0..(il0 + plan.ingest_inlines).min(ni);
            let traces = il.len() * nx;
            // SAFETY: `raw` holds the whole volume; the landing slot holds chunk_traces rows of pt floats.
            unsafe {
                let from = Source::Device(raw.ptr_at(il0 * nx * nt));
                copy_2d(self.buffers.landing[0].ptr(), pt * 4, from, nt * 4, nt * 4, traces, &e.compute)?;
            }
            self.timed("time-fft", || {
                // SAFETY: as in `ingest`.
                unsafe { self.buffers.ffts.r2c.exec(self.buffers.landing[0].ptr(), self.buffers.half[0].ptr(), true)? };
                self.band_transpose(0, traces, il0, &band)
            })?;
            ctx.progress.advance(il.len() as u64);
        }
        e.sync(&e.compute)?;
        ctx.progress.finish();
        ctx.stats.add("ingest", wall.elapsed(), bytes);
        Ok(())
    }

    /// Move the frequencies `band` of the R2C output in half-spectrum slot `slot` (`traces` traces from
    /// inline `il0`) into the spectrum.
    fn band_transpose(&self, slot: usize, traces: usize, il0: usize, band: &Range<usize>) -> Result<()> {
        let plan = self.plan;
        let cfg = LaunchConfig {
            grid_dim: ((band.len() as u32).div_ceil(BAND_TILE), (traces as u32).div_ceil(BAND_TILE), 1),
            block_dim: (BAND_TILE, 8, 1),
            shared_mem_bytes: 0,
        };
        self.e.launch(
            &self.e.compute,
            "band_transpose",
            cfg,
            &[
                Arg::Ptr(self.buffers.half[slot].ptr()),
                Arg::Ptr(self.buffers.spectrum.ptr()),
                Arg::Ptr(self.delay.ptr_at(band.start)),
                Arg::I32(traces as i32),
                Arg::I32(self.bins as i32),
                Arg::I32((plan.band.first + band.start) as i32),
                Arg::I32(band.len() as i32),
                Arg::I32(plan.input.shape()[1] as i32),
                Arg::I32(il0 as i32),
                Arg::I32(plan.padded[0] as i32),
                Arg::I32(plan.padded[1] as i32),
            ],
        )
    }

    /// Multiply the first `n` planes of the spectrum by `factor[0..n]`.
    fn scale_spectrum(&self, factor: u64, n: usize) -> Result<()> {
        self.e.launch(
            &self.e.compute,
            "scale_planes",
            grid_1d(n * self.nk, 256),
            &[Arg::Ptr(self.buffers.spectrum.ptr()), Arg::Ptr(factor), Arg::I32(n as i32), Arg::I32(self.nk as i32)],
        )
    }

    /// Add every box's levels held by `planes` (plane `slot` = level `slot_levels[slot]`) into the products.
    fn gather(&self, planes: u64, slot_levels: &DeviceBuffer<i32>, levels: &[usize], scale: f64) -> Result<()> {
        let [pi, px, _] = self.plan.padded;
        for (b, product) in self.request.boxes.iter().zip(&self.buffers.products) {
            if !levels.iter().any(|l| b.s.contains(l)) {
                continue;
            }
            let pixels = b.il.len() * b.xl.len();
            let cfg = LaunchConfig {
                grid_dim: (pixels.div_ceil(256).clamp(1, 4096) as u32, levels.len().clamp(1, 65535) as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            self.e.launch(
                &self.e.compute,
                "gather_box",
                cfg,
                &[
                    Arg::Ptr(planes),
                    Arg::Ptr(slot_levels.ptr()),
                    Arg::I32(levels.len() as i32),
                    Arg::I32(pi as i32),
                    Arg::I32(px as i32),
                    Arg::Ptr(product.ptr()),
                    Arg::I32(b.il.start as i32),
                    Arg::I32(b.il.len() as i32),
                    Arg::I32(b.xl.start as i32),
                    Arg::I32(b.xl.len() as i32),
                    Arg::I32(b.s.start as i32),
                    Arg::I32(b.s.len() as i32),
                    Arg::F32(scale as f32),
                ],
            )?;
        }
        if self.handover.last_band.get() && !self.e.naive {
            let finished = self.handover.completion.borrow_mut().imaged(levels);
            for i in finished {
                self.start_copy(i)?;
            }
        }
        Ok(())
    }

    /// Queue the copy of product `i`, finished by the work queued so far on the compute stream, to its pinned
    /// buffer.
    fn start_copy(&self, i: usize) -> Result<()> {
        let e = self.e;
        let ready = e.gpu.sync_event()?;
        e.record(&ready, &e.compute)?;
        e.wait(&e.copy_out, &ready)?;
        let product = &self.buffers.products[i];
        self.handover.timer.time("d2h", &e.copy_out, || {
            product.download_async(0, &mut self.buffers.products_host.borrow_mut()[i], product.len(), &e.copy_out)
        })?;
        let copied = e.gpu.sync_event()?;
        e.record(&copied, &e.copy_out)?;
        self.handover.copies.borrow_mut().push(ProductCopy { index: i, copied });
        Ok(())
    }

    /// Hand the products whose copies are done to the sink; with `wait`, wait for every copy queued.
    fn hand_over_copied(&self, wait: bool) -> Result<()> {
        loop {
            let next = {
                let mut copies = self.handover.copies.borrow_mut();
                match copies.iter().position(|c| wait || c.copied.is_complete()) {
                    Some(k) => copies.remove(k),
                    None => return Ok(()),
                }
            };
            check("waiting for a product's copy", next.copied.synchronize())?;
            let product = &self.buffers.products[next.index];
            self.handover.bytes.set(self.handover.bytes.get() + (product.len() * 4) as u64);
            let mut host = self.host_buffer(next.index)?;
            // The product leaves the pinned buffer in parallel pieces.
            const PIECE: usize = 1 << 18;
            let pinned = self.buffers.products_host.borrow();
            let from = &pinned[next.index].as_slice_unsynced()[..host.len()];
            host.par_chunks_mut(PIECE).zip(from.par_chunks(PIECE)).for_each(|(t, f)| t.copy_from_slice(f));
            drop(pinned);
            self.handover.sink.complete(next.index, host);
        }
    }

    /// Product `i`'s host buffer, from the ones made ready while the device migrated.
    fn host_buffer(&self, i: usize) -> Result<Vec<f32>> {
        let mut host = self.handover.host.borrow_mut();
        if let HostMemory::Making(_) = &*host {
            let HostMemory::Making(thread) = std::mem::replace(&mut *host, HostMemory::NotYet) else { unreachable!() };
            let buffers = thread.join().map_err(|_| Error::Gpu("a thread preparing host memory panicked".into()))?;
            *host = HostMemory::Ready(buffers);
        }
        let len = self.buffers.products[i].len();
        Ok(match &mut *host {
            HostMemory::Ready(buffers) if buffers[i].len() == len => std::mem::take(&mut buffers[i]),
            _ => vec![0.0; len],
        })
    }

    /// Phase shift of one band. Whole: each launch's k-domain images are imaged right away. Banded: every
    /// level's k-domain image collects the bands; [`Run::image_all_levels`] images them after the last.
    fn phase_shift(&self, band: &Range<usize>, ctx: &RunContext) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let banded = self.buffers.bands.banded();
        let (max, rolloff) = dip_args(plan);
        // The imaging weights (1 or 2: exact) go into the field once, so the kernel's imaging is a plain sum.
        self.timed("migrate", || self.scale_spectrum(self.weight_cpx.ptr_at(band.start), band.len()))?;
        ctx.progress.begin("phase shift", plan.levels.len() as u64);
        let mut first_slot = 0;
        for launch in phase_shift_launches(plan) {
            ctx.check()?;
            let segs = DeviceBuffer::from_slice(&e.gpu, &launch.segments)?;
            let slot_velocity = DeviceBuffer::from_slice(&e.gpu, &launch.slot_velocity)?;
            let n_slots = launch.slot_levels.len();
            let kimg =
                if banded { self.buffers.planes.ptr_at(first_slot * self.nk) } else { self.buffers.planes.ptr() };
            let cfg = LaunchConfig {
                grid_dim: ((self.nk as u32).div_ceil(PS_LANES), 1, 1),
                block_dim: (PS_LANES, PS_WARPS, 1),
                shared_mem_bytes: (n_slots * PS_LANES as usize * 8) as u32,
            };
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
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
                        Arg::I32(banded as i32),
                    ],
                )
            })?;
            if !banded {
                let ids: Vec<i32> = launch.slot_levels.iter().map(|&l| l as i32).collect();
                let ids = DeviceBuffer::from_slice(&e.gpu, &ids)?;
                self.timed("inverse-fft", || self.fft_planes(self.buffers.planes.ptr(), n_slots, false))?;
                self.timed("gather", || {
                    self.gather(self.buffers.planes.ptr(), &ids, &launch.slot_levels, plan.image_scale())
                })?;
                // While the device runs this launch, the products the last one finished go.
                self.hand_over_copied(false)?;
                // The small tables of this launch must outlive the kernels that read them.
                e.sync(&e.compute)?;
            } else {
                e.sync(&e.compute)?;
            }
            first_slot += n_slots;
            ctx.progress.advance(n_slots as u64);
        }
        ctx.progress.finish();
        Ok(())
    }

    /// After the last band of a banded phase shift: image every level from its summed k-domain image.
    fn image_all_levels(&self) -> Result<()> {
        let levels: Vec<usize> = self.plan.levels.iter().map(|l| l.index).collect();
        let ids: Vec<i32> = levels.iter().map(|&l| l as i32).collect();
        let ids = DeviceBuffer::from_slice(&self.e.gpu, &ids)?;
        self.timed("inverse-fft", || self.fft_planes(self.buffers.planes.ptr(), levels.len(), false))?;
        self.timed("gather", || self.gather(self.buffers.planes.ptr(), &ids, &levels, self.plan.image_scale()))?;
        self.e.sync(&self.e.compute)
    }

    fn stolt(&self, ctx: &RunContext) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let nw = plan.n_omega();
        let grid = plan.stolt.as_ref().expect("checked in Run::new");
        let (max, rolloff) = dip_args(plan);
        ctx.progress.begin("stolt", plan.levels.len() as u64);
        // Centre the record on t = 0 (see src/imaging/stolt.rs): every plane times exp(+iω t_c).
        let centring: Vec<Cpx> = (0..nw)
            .map(|iw| {
                let ph = plan.omega(iw) * grid.time_centre;
                [ph.cos() as f32, ph.sin() as f32]
            })
            .collect();
        let centring = DeviceBuffer::from_slice(&e.gpu, &centring)?;
        self.timed("migrate", || self.scale_spectrum(centring.ptr(), nw))?;
        let step = if nw > 1 { plan.omega(1) - plan.omega(0) } else { 1.0 };
        let cfg = LaunchConfig {
            grid_dim: ((self.nk as u32).div_ceil(128), grid.nz_fft.min(65535) as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        self.timed("migrate", || {
            e.launch(
                &e.compute,
                "stolt_remap",
                cfg,
                &[
                    Arg::Ptr(self.buffers.spectrum.ptr()),
                    Arg::Ptr(self.buffers.planes.ptr()),
                    Arg::Ptr(self.k2.ptr()),
                    Arg::I32(nw as i32),
                    Arg::I32(self.nk as i32),
                    Arg::I32(grid.nz_fft as i32),
                    Arg::F64(plan.omega(0)),
                    Arg::F64(step),
                    Arg::F64(grid.velocity),
                    Arg::F64(grid.dkz),
                    Arg::F64(grid.time_centre),
                    Arg::I32(matches!(grid.interpolation, crate::imaging::StoltInterpolation::Sinc) as i32),
                    Arg::F32(max),
                    Arg::F32(rolloff),
                ],
            )
        })?;
        // The inverse FFT over kz turns line m into depth level m, as the CPU's per-column FFT does.
        let kz = self.buffers.ffts.kz.as_ref().expect("a Stolt run has a kz plan");
        // SAFETY: planes holds nz_fft planes of nk values, laid out as the "kz" plan says.
        self.timed("inverse-fft", || unsafe { kz.exec(self.buffers.planes.ptr(), self.buffers.planes.ptr(), false) })?;
        let levels: Vec<usize> = (0..=plan.last_level()).collect();
        self.timed("inverse-fft", || self.fft_planes(self.buffers.planes.ptr(), levels.len(), false))?;
        let ids: Vec<i32> = levels.iter().map(|&l| l as i32).collect();
        let ids = DeviceBuffer::from_slice(&e.gpu, &ids)?;
        self.timed("gather", || self.gather(self.buffers.planes.ptr(), &ids, &levels, plan.image_scale()))?;
        e.sync(&e.compute)?;
        ctx.progress.advance(plan.levels.len() as u64);
        ctx.progress.finish();
        Ok(())
    }

    /// Split-step of one band: every requested pixel adds the band's share of its image.
    fn split_step(&self, band: &Range<usize>, velocity: &VelocityModel, ctx: &mut RunContext) -> Result<()> {
        let e = self.e;
        let plan = self.plan;
        let (nw, nk) = (band.len(), self.nk);
        let [ni, nx, _] = plan.input.shape();
        let [_, px, pt] = plan.padded;
        let dz = plan.depth.step;
        let (max, rolloff) = dip_args(plan);
        let (omega, weight) = (self.omega.ptr_at(band.start), self.weight.ptr_at(band.start));

        // Into space, normalised (as the CPU engine does before its depth loop).
        self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, false))?;
        let norm = DeviceBuffer::from_slice(&e.gpu, &vec![[1.0 / nk as f32, 0.0f32]; nw])?;
        self.scale_spectrum(norm.ptr(), nw)?;

        let lateral = plan.lateral_velocity;
        let mut lens_host: Vec<PinnedBuffer<f32>> =
            if lateral { (0..2).map(|_| e.gpu.alloc_pinned::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_dev: Vec<DeviceBuffer<f32>> =
            if lateral { (0..2).map(|_| e.gpu.alloc::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_ready: Vec<CudaEvent> = (0..2).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let lens_used: Vec<CudaEvent> = (0..2).map(|_| e.gpu.sync_event()).collect::<Result<_>>()?;
        let mut slowness = vec![0.0f32; if lateral { ni * nx } else { 0 }];
        let mut level_ids: HashMap<usize, DeviceBuffer<i32>> = HashMap::new();

        let image_level = |level: usize, lens: u64, level_ids: &mut HashMap<usize, DeviceBuffer<i32>>| -> Result<()> {
            let wanted = self.request.boxes.iter().any(|b| b.s.contains(&level));
            if lens == 0 && !wanted {
                return Ok(());
            }
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
                    "split_step_lens_image",
                    grid_1d(nk, 256),
                    &[
                        Arg::Ptr(self.buffers.spectrum.ptr()),
                        Arg::Ptr(lens),
                        Arg::Ptr(omega),
                        Arg::Ptr(weight),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::Ptr(if wanted { self.buffers.planes.ptr() } else { 0 }),
                    ],
                )
            })?;
            if wanted {
                let ids = match level_ids.entry(level) {
                    std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(DeviceBuffer::from_slice(&e.gpu, &[level as i32])?)
                    }
                };
                // Split-step's planes are normalised laterally already: only the time normalisation remains.
                self.timed("gather", || self.gather(self.buffers.planes.ptr(), ids, &[level], 1.0 / pt as f64))?;
            }
            Ok(())
        };
        image_level(0, 0, &mut level_ids)?;

        ctx.progress.begin("split-step", plan.step_velocity.len() as u64);
        let mut lens_bytes = 0u64;
        for (j, &v_ref) in plan.step_velocity.iter().enumerate() {
            ctx.check()?;
            self.hand_over_copied(false)?;
            let mut lens_ptr = 0;
            if lateral {
                let slot = j % 2;
                if j >= 2 {
                    check("waiting for a lens buffer", lens_used[slot].synchronize())?;
                }
                velocity.slowness_slice((j as f64 + 0.5) * dz, &mut slowness);
                let s0 = 2.0 / v_ref;
                let host = lens_host[slot].as_mut_slice_unsynced();
                host.fill(0.0);
                for (row, s) in slowness.chunks(nx).enumerate() {
                    for (l, &s) in host[row * px..row * px + nx].iter_mut().zip(s) {
                        *l = ((2.0 * s as f64 - s0) * dz) as f32;
                    }
                }
                lens_dev[slot].upload_async(0, &lens_host[slot], nk, &e.copy_in)?;
                e.record(&lens_ready[slot], &e.copy_in)?;
                e.wait(&e.compute, &lens_ready[slot])?;
                lens_bytes += (nk * 4) as u64;
                lens_ptr = lens_dev[slot].ptr();
            }
            self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, true))?;
            self.timed("migrate", || {
                e.launch(
                    &e.compute,
                    "split_step_shift",
                    grid_1d(nw * nk, 256),
                    &[
                        Arg::Ptr(self.buffers.spectrum.ptr()),
                        Arg::Ptr(self.k2.ptr()),
                        Arg::Ptr(omega),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::F64(v_ref),
                        Arg::F64(dz),
                        Arg::F32(1.0 / nk as f32),
                        Arg::F32(max),
                        Arg::F32(rolloff),
                    ],
                )
            })?;
            self.timed("inverse-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, false))?;
            image_level(j + 1, lens_ptr, &mut level_ids)?;
            if lateral {
                e.record(&lens_used[j % 2], &e.compute)?;
            }
            ctx.progress.advance(1);
        }
        e.sync(&e.compute)?;
        ctx.progress.finish();
        ctx.stats.host_to_device_bytes += lens_bytes;
        if lens_bytes > 0 {
            ctx.stats.add("h2d-velocity", Duration::ZERO, lens_bytes);
        }
        Ok(())
    }

    /// After the migration: wait for the copies still under way and hand their products over. Only the
    /// requested boxes cross the bus. Every box was finished by a gather, as in the CPU engine's assembly.
    fn hand_over_the_rest(&self, stats: &mut RunStats) -> Result<()> {
        self.handover.completion.borrow().check_all_finished()?;
        self.hand_over_copied(true)?;
        self.handover.timer.collect(stats)?;
        let bytes = self.handover.bytes.get();
        // The timer knows times, not bytes: the copies' bytes join their stage here.
        stats.add("d2h", Duration::ZERO, bytes);
        stats.device_to_host_bytes += bytes;
        Ok(())
    }

    /// The naive download: every product into pageable memory, one synchronous copy each.
    fn download_naive(&self, stats: &mut RunStats) -> Result<Vec<Vec<f32>>> {
        let t = Instant::now();
        let mut out = Vec::with_capacity(self.buffers.products.len());
        let mut bytes = 0u64;
        for p in &self.buffers.products {
            let mut host = vec![0.0f32; p.len()];
            device::download_pageable(&mut host, p)?;
            bytes += (p.len() * 4) as u64;
            out.push(host);
        }
        stats.add("d2h", t.elapsed(), bytes);
        stats.device_to_host_bytes += bytes;
        Ok(out)
    }
}

/// Zeroed buffers of `lens` values whose memory has been written once, so that copying into them runs at the
/// speed of memory: the first write to a fresh page costs the kernel a page fault (about 1-2 µs per 4 KiB
/// page on a virtual machine: 5.6 ms for 12 MB of products in one measurement), which is better paid while
/// the device migrates than after it.
fn writable_buffers(lens: &[usize]) -> Vec<Vec<f32>> {
    lens.iter()
        .map(|&n| {
            let mut v: Vec<f32> = Vec::with_capacity(n);
            // A plain zero fill of new memory may be turned into a request for zeroed pages, which the kernel
            // maps lazily: touch every page with a volatile write first.
            for x in v.spare_capacity_mut().iter_mut().step_by(1024) {
                // SAFETY: a valid, aligned slot of the vector's capacity.
                unsafe { std::ptr::write_volatile(x.as_mut_ptr(), 0.0) };
            }
            v.resize(n, 0.0);
            v
        })
        .collect()
}

/// The FFT plans of a run: the R2C along traces, one 2-D plan per batch size it uses (the bands, the
/// phase-shift launches or all levels, Stolt's levels), and Stolt's kz plan.
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
    match plan.method {
        Method::PhaseShift if bands.banded() => batches.push(plan.levels.len()),
        Method::PhaseShift => batches.extend(launch_sizes),
        Method::Stolt => batches.push(plan.last_level() + 1),
        Method::SplitStep => {}
    }
    let mut planes = HashMap::new();
    for b in batches {
        if let std::collections::hash_map::Entry::Vacant(v) = planes.entry(b) {
            v.insert(fft::Plan::new(
                fft::Kind::C2C,
                &Layout::contiguous(&[pi as i64, px as i64], nk as i64, nk as i64, b as i64),
            )?);
        }
    }
    let kz = match &plan.stolt {
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

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(v)
}

/// The dip limit as the kernels take it: (max angle, roll-off) in radians, or (−1, 0) for none.
fn dip_args(plan: &Plan) -> (f32, f32) {
    match plan.dip_limit {
        Some(max) => (max as f32, formulas::DIP_ROLLOFF_DEG.to_radians().min(max) as f32),
        None => (-1.0, 0.0),
    }
}

/// A launch of the phase-shift kernel: the segments from the previous launch's last level down to this
/// one's, with slots renumbered from 0.
struct PsBlock {
    segments: Vec<Segment>,
    slot_levels: Vec<usize>,
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

/// The plan's blocks cut so that no launch images more than [`PS_MAX_SLOTS`] levels.
fn phase_shift_launches(plan: &Plan) -> Vec<PsBlock> {
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
            if cur.slot_levels.len() == PS_MAX_SLOTS {
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
    use crate::imaging::{image_geometry, ImagingParams};
    use crate::velocity::{Interpolation, VelocityTable};
    use crate::volume::{Domain, Geometry, LineAxis, SampleAxis};
    use crate::window::WindowParams;

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
        let launches = phase_shift_launches(&plan);
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
    }
}
