//! Per-stage wall times and bytes moved, for the run manifest and the benchmark.

use std::time::{Duration, Instant};

use serde::Serialize;

/// One stage of a run: how long it took and how many bytes it moved or produced.
#[derive(Clone, Debug, Serialize)]
pub struct StageStat {
    pub name: String,
    pub seconds: f64,
    pub bytes: u64,
}

/// What a run did, stage by stage, and the bytes that crossed the PCIe bus each way.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    pub stages: Vec<StageStat>,
    pub host_to_device_bytes: u64,
    pub device_to_host_bytes: u64,
    /// Input samples that were NaN or infinite and were set to zero before the transforms.
    pub nonfinite_samples: u64,
    /// Frequency bands the spectrum went through (1: all at once; more when it did not fit in memory).
    pub frequency_bands: usize,
}

impl RunStats {
    /// Record a stage measured elsewhere (for example with device events). Repeated names accumulate.
    pub fn add(&mut self, name: &str, elapsed: Duration, bytes: u64) {
        if let Some(s) = self.stages.iter_mut().find(|s| s.name == name) {
            s.seconds += elapsed.as_secs_f64();
            s.bytes += bytes;
        } else {
            self.stages.push(StageStat { name: name.to_string(), seconds: elapsed.as_secs_f64(), bytes });
        }
    }

    /// Run `f` as a stage timed by the host clock.
    pub fn time<T>(&mut self, name: &str, bytes: u64, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(name, t.elapsed(), bytes);
        out
    }

    pub fn seconds(&self, name: &str) -> Option<f64> {
        self.stages.iter().find(|s| s.name == name).map(|s| s.seconds)
    }

    pub fn bytes(&self, name: &str) -> Option<u64> {
        self.stages.iter().find(|s| s.name == name).map(|s| s.bytes)
    }
}

/// The steps of one piece of host work, timed one after another and logged together at trace level
/// (`-vv`): where a product's writing time goes, say, without a stage per step in the manifest.
pub struct Laps {
    what: String,
    last: Instant,
    steps: Vec<(&'static str, Duration)>,
}

impl Laps {
    pub fn start(what: impl Into<String>) -> Self {
        Laps { what: what.into(), last: Instant::now(), steps: Vec::new() }
    }

    /// The step that ends now.
    pub fn lap(&mut self, step: &'static str) {
        let now = Instant::now();
        self.steps.push((step, now - self.last));
        self.last = now;
    }
}

impl Drop for Laps {
    fn drop(&mut self) {
        if tracing::enabled!(tracing::Level::TRACE) && !self.steps.is_empty() {
            let steps: Vec<String> =
                self.steps.iter().map(|(s, d)| format!("{s} {:.1} ms", d.as_secs_f64() * 1e3)).collect();
            tracing::trace!("{}: {}", self.what, steps.join(", "));
        }
    }
}
