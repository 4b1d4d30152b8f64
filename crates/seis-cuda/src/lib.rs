//! The CUDA backend: cudarc with dynamic loading, so the binary builds and runs where no CUDA exists and
//! only this module ever touches the driver, NVRTC or cuFFT — always after [`probe`] said they are there.

mod attributes;
pub mod device;
pub mod engine;
pub mod fft;
pub mod floors;
pub mod kernel_cache;
pub mod kernels;
mod launch;
pub mod memory;
#[cfg(feature = "bench")]
mod naive;
pub mod nccl;
mod peers;
pub mod prelude;
pub mod ranks;
mod run;
pub mod runtime;
mod timer;

pub use engine::GpuEngine;
#[cfg(feature = "bench")]
pub use naive::NaiveEngine;
pub use run::{device_memory_estimate, RING as STAGING_RING};
pub use runtime::{probe, DeviceInfo, GpuRuntime, Unavailable};

use seis_core::error::{Error, Result};
use seis_imaging::compute::ComputeConfig;
use seis_imaging::{BackendChoice, Engine};

/// The CUDA engine for `compute`, or why there is none.
pub fn engine_for(compute: &ComputeConfig) -> Result<(Box<dyn Engine + Send>, BackendChoice)> {
    engine_on(compute).map(|(engine, choice)| (Box::new(engine) as Box<dyn Engine + Send>, choice))
}

/// [`engine_for`], the engine itself.
pub(crate) fn engine_on(compute: &ComputeConfig) -> Result<(GpuEngine, BackendChoice)> {
    let rt = runtime::probe_device(compute.device).map_err(|e| Error::Backend(e.0))?;
    let device = &rt.devices[0];
    let mut engine = GpuEngine::new(device.clone(), compute.fast_math, &kernel_cache::KernelCache::from_env())?;
    engine.set_memory_limit(compute.device_memory_gb.map(|gb| (gb * 1e9) as u64));
    engine.set_store(compute.store_settings());
    engine.set_deterministic(compute.deterministic);
    let detail = format!(
        "{} (compute capability {}.{}, {:.1} GiB), driver CUDA {}.{}, kernels {} NVRTC {}.{} in {:.2} s{}",
        device.name,
        device.compute_capability.0,
        device.compute_capability.1,
        device.total_memory_bytes as f64 / (1u64 << 30) as f64,
        rt.driver_cuda_version.0,
        rt.driver_cuda_version.1,
        if engine.kernels_cached { "from the cache, compiled earlier by" } else { "compiled by" },
        rt.nvrtc_version.0,
        rt.nvrtc_version.1,
        engine.kernel_seconds,
        if compute.fast_math { ", fast math" } else { "" }
    );
    Ok((engine, BackendChoice { kind: "cuda", detail }))
}
