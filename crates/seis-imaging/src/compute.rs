//! `[compute]`: where a job computes and with what, for every engine.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use seis_core::choice::Choice;

/// Where a job computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The GPU when one is usable, else the CPU (saying why).
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl Choice for Backend {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Backend::Auto, "auto", "The GPU when one is usable, else the CPU (saying why)."),
        (Backend::Cpu, "cpu", ""),
        (Backend::Cuda, "cuda", ""),
    ];
}

/// `[compute]`: where and how.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ComputeConfig {
    pub backend: Backend,
    /// CPU threads; 0 = all cores (the input is decoded on at most 16 of them).
    pub threads: usize,
    /// CUDA device ordinal.
    pub device: usize,
    /// GPU: fast (less accurate) sin/cos/sqrt in the kernels.
    pub fast_math: bool,
    /// GPU: use at most this much device memory (GB), e.g. on a shared card. A job whose spectrum does not
    /// fit runs in frequency bands, the spectrum waiting on the host. Default: what is free.
    pub device_memory_gb: Option<f64>,
    /// Use at most this much host memory (GB) for the spectrum and the work on it; a spectrum that does not
    /// fit waits for its frequency bands in a cache file in `scratch_dir`. Default: 80 % of what the system
    /// reports available.
    pub host_memory_gb: Option<f64>,
    /// Folder of the spectrum's cache file, on a local disk with room for the spectrum. Default: the
    /// system's temporary folder (`TMPDIR`, else `/tmp`).
    pub scratch_dir: Option<PathBuf>,
    /// Several GPU ranks: how long (s) a rank waits for the others to start and meet (NCCL's set-up).
    pub rank_timeout_s: f64,
    /// GPU: sums in a fixed order, so that repeated runs write the same bits (phase shift otherwise adds
    /// its frequencies in the order its threads arrive).
    pub deterministic: bool,
}

impl Default for ComputeConfig {
    fn default() -> Self {
        ComputeConfig {
            backend: Backend::Auto,
            threads: 0,
            device: 0,
            fast_math: false,
            device_memory_gb: None,
            host_memory_gb: None,
            scratch_dir: None,
            rank_timeout_s: 300.0,
            deterministic: false,
        }
    }
}

impl ComputeConfig {
    /// Where the engine may keep a spectrum that waits for its frequency bands.
    pub fn store_settings(&self) -> crate::store::StoreSettings {
        crate::store::StoreSettings {
            host_memory: self.host_memory_gb.map(|gb| (gb * 1e9) as u64),
            scratch_dir: self.scratch_dir.clone(),
        }
    }
}
