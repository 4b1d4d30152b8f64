//! The CUDA backend: cudarc with dynamic loading, so the binary builds and runs where no CUDA exists and
//! only this module ever touches the driver, NVRTC or cuFFT — always after [`probe`] said they are there.

pub mod device;
pub mod fft;
pub mod kernels;
pub mod runtime;

pub use runtime::{probe, DeviceInfo, GpuRuntime, Unavailable};
