//! The device as a run drives it: the context, the three streams of the pipeline and the loaded kernels,
//! with launches checked against each kernel's parameters and the event calls that order the streams. The
//! engine owns one and lends it to each run.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaStream, LaunchConfig, PushKernelArg};

use super::device::{check, Gpu};
use super::kernel_cache::{self, KernelCache};
use super::kernels::{self, Kernels, ParamKind};
use super::memory;
use seis_core::error::{Error, Result};

/// A kernel argument; every one is passed to the driver as a pointer to an 8-byte cell.
pub enum Arg {
    Ptr(u64),
    /// A count or an offset beyond 32 bits.
    U64(u64),
    I32(i32),
    F32(f32),
    F64(f64),
}

/// The device, its streams and its kernels.
pub struct Launcher {
    pub gpu: Gpu,
    kernels: Kernels,
    /// The transforms and the migration.
    pub compute: Arc<CudaStream>,
    /// The input's chunks, and split-step's lens tables, to the device.
    pub copy_in: Arc<CudaStream>,
    /// Finished products back to the host.
    pub copy_out: Arc<CudaStream>,
}

impl Launcher {
    /// `kernels` on `gpu`, with the pipeline's streams.
    pub fn new(gpu: Gpu, kernels: Kernels) -> Result<Self> {
        Ok(Launcher { compute: gpu.stream()?, copy_in: gpu.stream()?, copy_out: gpu.stream()?, gpu, kernels })
    }

    /// Bytes of device memory a run may plan to use now, using at most `limit` (see [`memory::usable`]).
    pub fn available_memory(&self, limit: Option<u64>) -> Result<u64> {
        let (free, _) = self.gpu.memory()?;
        Ok(memory::usable(free, limit))
    }

    /// Queue kernel `name` on `stream`; refused unless `args` match the kernel's parameters.
    pub fn launch(&self, stream: &CudaStream, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let expected = self.kernels.signature(name);
        let given: Vec<ParamKind> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(_) | Arg::U64(_) => ParamKind::U64,
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
                Arg::Ptr(p) | Arg::U64(p) => p,
                Arg::I32(v) => v as u32 as u64,
                Arg::F32(v) => v.to_bits() as u64,
                Arg::F64(v) => v.to_bits(),
            })
            .collect();
        let mut b = stream.launch_builder(self.kernels.get(name));
        for c in &cells {
            b.arg(c);
        }
        // SAFETY: the argument list matches the kernel's signature in kernels/ (checked above against the
        // PTX), and every pointer is a live allocation of the size the kernel indexes.
        check(&format!("launching {name}"), unsafe { b.launch(cfg) }).map(|_| ())
    }

    pub fn record(&self, e: &CudaEvent, stream: &CudaStream) -> Result<()> {
        check("recording an event", e.record(stream))
    }

    /// Work queued on `stream` from now on waits for `e`.
    pub fn wait(&self, stream: &CudaStream, e: &CudaEvent) -> Result<()> {
        check("ordering streams", stream.wait(e))
    }

    /// Wait on the host until `stream` is idle.
    pub fn sync(&self, stream: &CudaStream) -> Result<()> {
        check("waiting for the device", stream.synchronize())
    }
}

/// One thread per element, `block` threads a CTA, at most 2²⁰ CTAs (the kernels loop over what is left).
pub fn grid_1d(n: usize, block: u32) -> LaunchConfig {
    let blocks = n.div_ceil(block as usize).clamp(1, 1 << 20) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// The kernels for `gpu`, from `cache` when it holds them for this source, architecture and NVRTC, else
/// compiled (and stored). Returns whether they came from the cache. An entry the driver refuses is replaced.
pub fn load_kernels(gpu: &Gpu, fast_math: bool, cache: &KernelCache) -> Result<(Kernels, bool)> {
    let arch = kernels::arch_name(gpu.info.compute_capability);
    let source = kernels::program_source();
    let recipe =
        kernel_cache::Recipe::new(&source, arch, &kernels::options(arch, fast_math), kernels::nvrtc_version()?);
    if let Some(program) = cache.load(&recipe) {
        match Kernels::load(&gpu.ctx, &program) {
            Ok(k) => {
                tracing::debug!("kernels loaded from the cache entry {} in {}", recipe.key(), show_dir(cache));
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
    match cache.store(&recipe, &program) {
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
