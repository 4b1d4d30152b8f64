//! The CUDA engine: the CPU engine's steps (crates/seis-imaging) on the device, on the same plan and layout.
//!
//! This file holds the engine itself — the device and its kernels (a `Launcher`, see `launch.rs`), the
//! pinned staging ring and the buffers kept between runs — and the [`Engine`] entry points; `run/` is one
//! migration on it, and [`super::memory`] decides up front how the run uses device memory.

use std::time::Instant;

use super::device::{check, Gpu, PinnedBuffer};
use super::fft::{self, Layout};
use super::kernel_cache::KernelCache;
use super::launch::{load_kernels, Launcher};
use super::run::{Exchange, Finish, Run, RunBuffers, RunSettings, RunShape, RING};
use super::runtime::DeviceInfo;
use seis_core::context::RunContext;
use seis_core::error::{Error, Result};
use seis_core::stats::Stages;
use seis_imaging::store::StoreSettings;
use seis_imaging::{Engine, ImageRequest, Migration, Plan, ProductSink};

pub struct GpuEngine {
    launcher: Launcher,
    /// Seconds it took to have the kernels loaded: compiled by NVRTC, or read from the kernel cache.
    pub kernel_seconds: f64,
    /// Whether the kernels came from the kernel cache (see [`super::kernel_cache`]).
    pub kernels_cached: bool,
    /// How it runs a migration (see [`GpuEngine::set_memory_limit`] and the setters beside it).
    pub(crate) settings: RunSettings,
    /// Where a spectrum that goes through in bands waits on the host.
    store: StoreSettings,
    /// The pinned staging ring, allocated on a thread of its own as the engine starts (pinning memory takes
    /// a while, and meanwhile the engine can make a job's device buffers) and grown if a plan's chunks are
    /// larger.
    staging: Staging,
    /// Device buffers and plans made ahead of a run ([`Engine::prepare`]) or kept from the last one: the
    /// next run of their shape uses them, a run of another shape frees them first.
    spare: Option<RunBuffers>,
}

/// The staging ring: being pinned on its own thread, or ready.
struct Staging {
    pinning: Option<std::thread::JoinHandle<Result<Vec<PinnedBuffer<f32>>>>>,
    ready: Vec<PinnedBuffer<f32>>,
}

impl Staging {
    fn start(gpu: &Gpu, values: usize) -> Self {
        let ctx = gpu.ctx.clone();
        let pinning = std::thread::spawn(move || {
            let t = Instant::now();
            let ring = (0..RING).map(|_| PinnedBuffer::new(&ctx, values)).collect::<Result<Vec<_>>>();
            tracing::debug!("pinned staging ring allocated in {:.3} s", t.elapsed().as_secs_f64());
            ring
        });
        Staging { pinning: Some(pinning), ready: Vec::new() }
    }

    /// The ring (waiting for it to be pinned), to be given back with [`Staging::put`].
    fn take(&mut self) -> Result<Vec<PinnedBuffer<f32>>> {
        if let Some(h) = self.pinning.take() {
            self.ready =
                h.join().map_err(|_| Error::Gpu("pinning the staging ring failed (a thread panicked)".into()))??;
        }
        Ok(std::mem::take(&mut self.ready))
    }

    fn put(&mut self, ring: Vec<PinnedBuffer<f32>>) {
        self.ready = ring;
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Not before the pinning thread is done with the context.
        let _ = self.take();
    }
}

impl GpuEngine {
    /// Open `device` and load the kernels, compiling them unless `cache` has them.
    pub fn new(device: DeviceInfo, fast_math: bool, cache: &KernelCache) -> Result<Self> {
        let t = Instant::now();
        let gpu = Gpu::open(device)?;
        tracing::debug!("CUDA device opened for the engine in {:.3} s", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let (kernels, kernels_cached) = load_kernels(&gpu, fast_math, cache)?;
        let kernel_seconds = t.elapsed().as_secs_f64();
        let staging = Staging::start(&gpu, seis_imaging::plan::INGEST_CHUNK_BYTES / 4);
        // cuFFT loads its kernels on first use: do that now too, with a throw-away plan.
        let t = Instant::now();
        drop(fft::Plan::new(fft::Kind::C2C, &Layout::contiguous(&[64, 64], 4096, 4096, 1))?);
        tracing::debug!("cuFFT loaded in {:.3} s", t.elapsed().as_secs_f64());
        Ok(GpuEngine {
            launcher: Launcher::new(gpu, kernels)?,
            kernel_seconds,
            kernels_cached,
            settings: RunSettings::default(),
            store: StoreSettings::default(),
            staging,
            spare: None,
        })
    }

    /// Use at most `bytes` of device memory (on a shared GPU, or to leave room for other work); a job that
    /// needs more runs in frequency bands, or is refused.
    pub fn set_memory_limit(&mut self, bytes: Option<u64>) {
        self.settings.memory_limit = bytes;
    }

    /// How much host memory a spectrum that goes through in bands may take, and where it waits when it does
    /// not fit.
    pub fn set_store(&mut self, store: StoreSettings) {
        self.store = store;
    }

    /// Ranks of a run over several GPUs that trade the input's frequencies (see `gpu::ranks`).
    pub(crate) fn set_ranks(&mut self, ranks: usize) {
        self.settings.ranks = ranks;
    }

    /// Sum in a fixed order where the kernels would otherwise add in the order their threads arrive, so that
    /// two runs give the same bits (`compute.deterministic`).
    pub fn set_deterministic(&mut self, deterministic: bool) {
        self.settings.deterministic = deterministic;
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.launcher.gpu.info
    }

    pub(crate) fn launcher(&self) -> &Launcher {
        &self.launcher
    }
}

impl Engine for GpuEngine {
    fn name(&self) -> &str {
        "cuda"
    }

    fn prepare(&mut self, plan: &Plan, request: &ImageRequest, members: usize) -> Result<()> {
        plan.check(&plan.input, request)?;
        check("binding the CUDA context", self.launcher.gpu.ctx.bind_to_thread())?;
        let shape = RunShape::of(plan, request, members, self.settings);
        if !self.spare.as_ref().is_some_and(|b| *b.shape() == shape) {
            self.spare = None;
            self.spare = Some(RunBuffers::new(&self.launcher, plan, shape)?);
        }
        // And the staging ring, pinned meanwhile on its own thread: the engine is ready once both are.
        let ring = self.staging.take()?;
        self.staging.put(ring);
        Ok(())
    }

    fn release_last_run(&mut self) {
        if self.spare.is_some() {
            let _ = self.launcher.gpu.ctx.bind_to_thread();
            self.spare = None;
        }
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        self.migrate_share(scan, ctx, sinks, None)
    }
}

/// A rank's part of a run over several GPUs: the exchange of the input, and what becomes of its products,
/// which it is handed on the device (pointer and length of each box, in the request's order, member after
/// member of a velocity scan) once every band is in: summed with the other ranks' into this rank's boxes,
/// which go to the sinks when `combine` says this rank holds the sum (rank 0).
pub(crate) struct RankPart<'a> {
    pub(crate) exchange: Exchange<'a>,
    pub(crate) combine: &'a Combine<'a>,
}

/// Sums a rank's boxes (device address and length of each) with the other ranks': whether this rank holds
/// the sums.
pub(crate) type Combine<'a> = dyn Fn(&Launcher, &[(u64, usize)], &mut RunContext) -> Result<bool> + 'a;

impl GpuEngine {
    /// Migrate the share of `scan` (one migration, or the members of a velocity scan, each handing its
    /// products to its sink of `sinks`), alone or as a rank of a run over several GPUs.
    pub(crate) fn migrate_share(
        &mut self,
        scan: &[Migration],
        ctx: &mut RunContext,
        sinks: &[&dyn ProductSink],
        rank: Option<&RankPart>,
    ) -> Result<()> {
        let input = scan[0].input;
        self.with_run(scan, ctx, sinks, |run, staging, store, ctx| match rank {
            None => run.execute(input, scan, ctx, staging, store, None, Finish::Hand),
            Some(part) => {
                run.execute(input, scan, ctx, staging, store, Some(&part.exchange), Finish::Keep)?;
                // The ranks' boxes are summed as migrated: the attributes are those of the sum.
                match (part.combine)(run.launcher(), &run.products(), ctx)? {
                    true => run.hand_over_kept(ctx),
                    false => Ok(()),
                }
            }
        })
    }

    /// `go` on a run of `scan` (checked against its sinks and its input) on this engine's device, with
    /// its buffers (kept from the last run of the same shape, or made) and the staging ring; whatever `go`
    /// does, the device is idle when it returns, and the buffers are kept for the next run.
    pub(crate) fn with_run<R>(
        &mut self,
        scan: &[Migration],
        ctx: &mut RunContext,
        sinks: &[&dyn ProductSink],
        go: impl FnOnce(&Run, &mut [PinnedBuffer<f32>], &StoreSettings, &mut RunContext) -> Result<R>,
    ) -> Result<R> {
        seis_imaging::scan::check(scan, sinks.len())?;
        for m in scan {
            m.plan.check(m.input.geometry(), m.request)?;
        }
        let Migration { plan, request, .. } = scan[0];
        // The engine may have been made on another thread: make its context current on this one.
        check("binding the CUDA context", self.launcher.gpu.ctx.bind_to_thread())?;
        let t = Instant::now();
        let shape = RunShape::of(plan, request, scan.len(), self.settings);
        let buffers = match self.spare.take() {
            Some(b) if *b.shape() == shape => b,
            other => {
                drop(other);
                RunBuffers::new(&self.launcher, plan, shape)?
            }
        };
        let mut staging = self.staging.take()?;
        let chunk = plan.ingest_inlines * plan.input.shape()[1] * plan.input.shape()[2];
        if staging.iter().any(|b| b.len() < chunk) || staging.len() < RING {
            staging = (0..RING).map(|_| self.launcher.gpu.alloc_pinned::<f32>(chunk)).collect::<Result<_>>()?;
        }
        let run = Run::new(&self.launcher, plan, request, buffers, sinks.to_vec())?;
        ctx.stats.add("device-setup", t.elapsed(), 0);
        let result = go(&run, &mut staging, &self.store, ctx);
        let mut steps = Stages::default();
        // Whatever happened, nothing may still be running when the buffers go.
        let _ = self.launcher.compute.synchronize();
        let _ = self.launcher.copy_in.synchronize();
        let _ = self.launcher.copy_out.synchronize();
        steps.lap("synchronise");
        // Freeing the run's device memory takes a few milliseconds that the products need not wait for: it
        // happens when the engine runs another shape, is released between jobs, or is dropped (on a thread
        // of its own after a job); a next run of this shape uses it.
        self.spare = Some(run.into_buffers());
        self.staging.put(staging);
        steps.lap("keep the buffers");
        steps.log_trace("closing the run");
        result
    }
}
