//! The CUDA engine: the CPU engine's steps (src/imaging) on the device, on the same plan and layout.
//!
//! This file holds the engine itself — the device, its streams, the compiled kernels and how they are
//! launched; [`super::migrate`] is one migration on it, and [`super::memory`] decides up front how the run
//! uses device memory.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaStream, LaunchConfig, PushKernelArg};

use super::device::{check, Gpu, PinnedBuffer};
use super::fft::{self, Layout};
use super::kernel_cache::{self, KernelCache};
use super::kernels::{self, Kernels, ParamKind};
use super::migrate::{Run, RunBuffers, RunShape, RING};
use super::runtime::DeviceInfo;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::{Engine, ImageRequest, Migration, Plan, ProductSink};
use crate::stats::Stages;

/// A run may plan to use this fraction of the free device memory, less [`MEMORY_RESERVE`]: cuFFT's plans and
/// the driver allocate beyond what the plan counts, and every allocation is rounded up to whole pages.
pub const MEMORY_HEADROOM: f64 = 0.92;
/// Device memory left out of every plan whatever the job's size: on a nearly full device 8 % of what is
/// free does not cover the plans and page rounding of a small job (measured: a 24 MiB plan failed to
/// allocate with 28 MiB free).
pub const MEMORY_RESERVE: u64 = 64 << 20;

/// A kernel argument; every one is passed to the driver as a pointer to an 8-byte cell.
pub(super) enum Arg {
    Ptr(u64),
    I32(i32),
    F32(f32),
    F64(f64),
}

pub struct GpuEngine {
    pub(super) gpu: Gpu,
    kernels: Kernels,
    pub(super) compute: Arc<CudaStream>,
    pub(super) copy_in: Arc<CudaStream>,
    pub(super) copy_out: Arc<CudaStream>,
    /// Seconds it took to have the kernels loaded: compiled by NVRTC, or read from the kernel cache.
    pub kernel_seconds: f64,
    /// Whether the kernels came from the kernel cache (see [`super::kernel_cache`]).
    pub kernels_cached: bool,
    /// Run the way a straightforward GPU script does (see [`GpuEngine::set_naive`]).
    pub(super) naive: bool,
    /// At most this many bytes of device memory (`compute.device_memory_gb`); `None`: what is free.
    pub(super) memory_limit: Option<u64>,
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
        let staging = Staging::start(&gpu, crate::imaging::plan::INGEST_CHUNK_BYTES / 4);
        // cuFFT loads its kernels on first use: do that now too, with a throw-away plan.
        let t = Instant::now();
        drop(fft::Plan::new(fft::Kind::C2C, &Layout::contiguous(&[64, 64], 4096, 4096, 1))?);
        tracing::debug!("cuFFT loaded in {:.3} s", t.elapsed().as_secs_f64());
        Ok(GpuEngine {
            compute: gpu.stream()?,
            copy_in: gpu.stream()?,
            copy_out: gpu.stream()?,
            gpu,
            kernels,
            kernel_seconds,
            kernels_cached,
            naive: false,
            memory_limit: None,
            staging,
            spare: None,
        })
    }

    /// Use at most `bytes` of device memory (on a shared GPU, or to leave room for other work); a job that
    /// needs more runs in frequency bands, or is refused.
    pub fn set_memory_limit(&mut self, bytes: Option<u64>) {
        self.memory_limit = bytes;
    }

    /// Bytes of device memory a run may plan to use now.
    pub(super) fn available_memory(&self) -> Result<u64> {
        let (free, _) = self.gpu.memory()?;
        let free = ((MEMORY_HEADROOM * free as f64) as u64).saturating_sub(MEMORY_RESERVE);
        Ok(self.memory_limit.map_or(free, |l| l.min(free)))
    }

    /// The reference the benchmark compares with: the whole volume read into ordinary (pageable) memory and
    /// uploaded in one synchronous copy before any device work, the same device compute, and every product
    /// pulled back into pageable memory. Only for measurements.
    pub fn set_naive(&mut self, naive: bool) {
        self.naive = naive;
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.gpu.info
    }

    pub(super) fn launch(&self, stream: &CudaStream, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let expected = self.kernels.signature(name);
        let given: Vec<ParamKind> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(_) => ParamKind::U64,
                Arg::I32(_) => ParamKind::U32,
                Arg::F32(_) => ParamKind::F32,
                Arg::F64(_) => ParamKind::F64,
            })
            .collect();
        if given != expected {
            return Err(Error::Gpu(format!(
                "launch of {name} with arguments {given:?}, but the kernel takes {expected:?} (a programming error)"
            )));
        }
        // Little-endian cells: an int or float parameter reads the low bytes of its cell.
        let cells: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Ptr(p) => p,
                Arg::I32(v) => v as u32 as u64,
                Arg::F32(v) => v.to_bits() as u64,
                Arg::F64(v) => v.to_bits(),
            })
            .collect();
        let mut b = stream.launch_builder(self.kernels.get(name));
        for c in &cells {
            b.arg(c);
        }
        // SAFETY: the argument list matches the kernel's signature in kernels/ (kept together by review and
        // by the GPU tests), and every pointer is a live allocation of the size the kernel indexes.
        check(&format!("launching {name}"), unsafe { b.launch(cfg) }).map(|_| ())
    }

    pub(super) fn record(&self, e: &CudaEvent, stream: &CudaStream) -> Result<()> {
        check("recording an event", e.record(stream))
    }

    pub(super) fn wait(&self, stream: &CudaStream, e: &CudaEvent) -> Result<()> {
        check("ordering streams", stream.wait(e))
    }

    pub(super) fn sync(&self, stream: &CudaStream) -> Result<()> {
        check("waiting for the device", stream.synchronize())
    }
}

/// The kernels for `gpu`, from `cache` when it holds them for this source, architecture and NVRTC, else
/// compiled (and stored). Returns whether they came from the cache. An entry the driver refuses is replaced.
fn load_kernels(gpu: &Gpu, fast_math: bool, cache: &KernelCache) -> Result<(Kernels, bool)> {
    let arch = kernels::arch_name(gpu.info.compute_capability);
    let source = kernels::program_source();
    let key = kernel_cache::key(&source, arch, fast_math, kernels::nvrtc_version()?);
    if let Some(program) = cache.load(&key) {
        match Kernels::load(&gpu.ctx, &program) {
            Ok(k) => {
                tracing::debug!("kernels loaded from the cache entry {key} in {}", show_dir(cache));
                return Ok((k, true));
            }
            Err(e) => tracing::warn!("the cached kernels could not be loaded ({e}); compiling them again"),
        }
    }
    let t = Instant::now();
    let program = kernels::compile_source(&source, arch, fast_math)?;
    tracing::debug!("kernels compiled by NVRTC for {arch} in {:.3} s", t.elapsed().as_secs_f64());
    let loaded = Kernels::load(&gpu.ctx, &program)?;
    // A cache that cannot be written costs the next run a compilation, nothing more.
    match cache.store(&key, &program) {
        Ok(()) if cache.dir().is_some() => tracing::debug!("kernels kept in {} for later runs", show_dir(cache)),
        Ok(()) => {}
        Err(e) => tracing::warn!(
            "could not keep the compiled kernels for later runs ({e}); set {} to a writable folder, or to \"off\"",
            kernel_cache::CACHE_ENV
        ),
    }
    Ok((loaded, false))
}

fn show_dir(cache: &KernelCache) -> String {
    cache.dir().map_or_else(|| "-".into(), |d| d.display().to_string())
}

pub(super) fn grid_1d(n: usize, block: u32) -> LaunchConfig {
    let blocks = n.div_ceil(block as usize).clamp(1, 1 << 20) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

impl Engine for GpuEngine {
    fn name(&self) -> &str {
        "cuda"
    }

    fn prepare(&mut self, plan: &Plan, request: &ImageRequest) -> Result<()> {
        plan.check(&plan.input, request)?;
        check("binding the CUDA context", self.gpu.ctx.bind_to_thread())?;
        let shape = RunShape::of(self, plan, request);
        if !self.spare.as_ref().is_some_and(|b| *b.shape() == shape) {
            self.spare = None;
            self.spare = Some(RunBuffers::new(self, plan, shape)?);
        }
        // And the staging ring, pinned meanwhile on its own thread: the engine is ready once both are.
        let ring = self.staging.take()?;
        self.staging.put(ring);
        Ok(())
    }

    fn release_last_run(&mut self) {
        if self.spare.is_some() {
            let _ = self.gpu.ctx.bind_to_thread();
            self.spare = None;
        }
    }

    fn migrate_into(&mut self, m: &Migration, ctx: &mut RunContext, sink: &dyn ProductSink) -> Result<()> {
        let Migration { input, plan, velocity, request } = *m;
        plan.check(input.geometry(), request)?;
        // The engine may have been made on another thread: make its context current on this one.
        check("binding the CUDA context", self.gpu.ctx.bind_to_thread())?;
        let t = Instant::now();
        let shape = RunShape::of(self, plan, request);
        let buffers = match self.spare.take() {
            Some(b) if *b.shape() == shape => b,
            other => {
                drop(other);
                RunBuffers::new(self, plan, shape)?
            }
        };
        let mut staging = self.staging.take()?;
        let chunk = plan.ingest_inlines * plan.input.shape()[1] * plan.input.shape()[2];
        if staging.iter().any(|b| b.len() < chunk) || staging.len() < RING {
            staging = (0..RING).map(|_| self.gpu.alloc_pinned::<f32>(chunk)).collect::<Result<_>>()?;
        }
        let run = Run::new(self, plan, request, buffers, sink)?;
        ctx.stats.add("device-setup", t.elapsed(), 0);
        let result = run.execute(input, velocity, ctx, &mut staging);
        let mut steps = Stages::default();
        // Whatever happened, nothing may still be running when the buffers go.
        let _ = self.compute.synchronize();
        let _ = self.copy_in.synchronize();
        let _ = self.copy_out.synchronize();
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
