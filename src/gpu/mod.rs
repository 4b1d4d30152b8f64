//! The CUDA backend: cudarc with dynamic loading, so the binary builds and runs where no CUDA exists and
//! only this module ever touches the driver, NVRTC or cuFFT — always after [`probe`] said they are there.

pub mod device;
pub mod fft;
pub mod kernels;
pub mod runtime;

pub use runtime::{probe, DeviceInfo, GpuRuntime, Unavailable};

use crate::error::{Error, Result};
use crate::imaging::Engine;
use crate::job::ComputeConfig;
use crate::run::BackendChoice;

/// The CUDA engine for `compute`, or why there is none.
pub fn engine_for(compute: &ComputeConfig) -> Result<(Box<dyn Engine>, BackendChoice)> {
    let rt = probe().map_err(|e| Error::Backend(e.0))?;
    let device = rt.devices.get(compute.device).ok_or_else(|| {
        Error::Backend(format!(
            "compute.device = {} but only {} CUDA device(s) exist",
            compute.device,
            rt.devices.len()
        ))
    })?;
    Err(Error::Backend(format!("found {} but the CUDA engine is not built into this version", device.name)))
}
