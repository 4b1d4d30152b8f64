//! Per-stage wall times and bytes moved, for the run manifest and the benchmark.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// One stage of a run: how long it took and how many bytes it moved or produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageStat {
    pub name: String,
    pub seconds: f64,
    pub bytes: u64,
}

/// Named stages in the order first recorded, each with its time and bytes; a name recorded again adds up.
/// The one record of where time goes: a run's stages for the manifest and the benchmark, and the steps of
/// a piece of host work logged at trace level (`-vv`) with [`Stages::log_trace`].
///
/// The time of a stage is measured wherever its work runs: on the host clock ([`Stages::time`],
/// [`Stages::lap`]) or, for device work, by the engine's own clock and given to [`Stages::add`].
#[derive(Clone, Debug)]
pub struct Stages {
    list: Vec<StageStat>,
    /// The end of the last lap (or the creation).
    last: Instant,
}

impl Default for Stages {
    fn default() -> Self {
        Stages { list: Vec::new(), last: Instant::now() }
    }
}

impl Serialize for Stages {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(s)
    }
}

impl Stages {
    /// Record a stage measured elsewhere. Repeated names accumulate.
    pub fn add(&mut self, name: &str, elapsed: Duration, bytes: u64) {
        if let Some(s) = self.list.iter_mut().find(|s| s.name == name) {
            s.seconds += elapsed.as_secs_f64();
            s.bytes += bytes;
        } else {
            self.list.push(StageStat { name: name.to_string(), seconds: elapsed.as_secs_f64(), bytes });
        }
    }

    /// Run `f` as a stage timed by the host clock.
    pub fn time<T>(&mut self, name: &str, bytes: u64, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(name, t.elapsed(), bytes);
        self.last = Instant::now();
        out
    }

    /// The stage that ends now: it began at the end of the previous lap (or when the record was made).
    pub fn lap(&mut self, name: &str) {
        let now = Instant::now();
        self.add(name, now - self.last, 0);
        self.last = now;
    }

    pub fn iter(&self) -> impl Iterator<Item = &StageStat> {
        self.list.iter()
    }

    pub fn seconds(&self, name: &str) -> Option<f64> {
        self.list.iter().find(|s| s.name == name).map(|s| s.seconds)
    }

    pub fn bytes(&self, name: &str) -> Option<u64> {
        self.list.iter().find(|s| s.name == name).map(|s| s.bytes)
    }

    /// Log the stages on one line at trace level, as the steps of `what`: where a product's writing time
    /// goes, say, without a stage per step in the manifest.
    pub fn log_trace(&self, what: &str) {
        if tracing::enabled!(tracing::Level::TRACE) && !self.list.is_empty() {
            let steps: Vec<String> =
                self.list.iter().map(|s| format!("{} {:.1} ms", s.name, s.seconds * 1e3)).collect();
            tracing::trace!("{what}: {}", steps.join(", "));
        }
    }
}

/// What a run did, stage by stage, and the bytes that crossed the PCIe bus each way.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    pub stages: Stages,
    pub host_to_device_bytes: u64,
    pub device_to_host_bytes: u64,
    /// Input samples that were NaN, infinite or beyond ± the windows' `MAX_AMPLITUDE` and were set to
    /// zero before the transforms.
    pub nonfinite_samples: u64,
    /// Frequency bands the spectrum went through (1: all at once; more when it did not fit in memory).
    pub frequency_bands: usize,
    /// A job split between processes (ranks of a run over several GPUs, or shards summed by `reduce`): each
    /// one's share, bands and stages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distribution>,
}

/// The processes a job was split between, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct Distribution {
    /// `"ranks"` (one run over several GPUs) or `"shards"` (`--shard I/N` runs summed by `reduce`).
    pub kind: &'static str,
    pub parts: Vec<PartRecord>,
    /// The slowest part's migration time over the mean: 1 when the work was evenly spread.
    pub imbalance: f64,
}

impl Distribution {
    pub fn new(kind: &'static str, parts: Vec<PartRecord>) -> Self {
        let seconds: Vec<f64> = parts.iter().map(|p| p.seconds).collect();
        let mean = seconds.iter().sum::<f64>() / seconds.len().max(1) as f64;
        let max = seconds.iter().cloned().fold(0.0, f64::max);
        Distribution { kind, parts, imbalance: if mean > 0.0 { max / mean } else { 1.0 } }
    }
}

/// One process's part of a job split between several.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartRecord {
    /// Its rank, or its shard counted from 1.
    pub index: usize,
    pub host: String,
    /// The engine it ran on.
    pub backend: String,
    /// The frequencies it migrated: indices into the plan's band (first, one past the last), and in Hz.
    pub frequencies: [usize; 2],
    pub frequencies_hz: [f64; 2],
    pub bands: usize,
    /// Its migration, from the engine's start of work to its products: what the imbalance compares.
    pub seconds: f64,
    pub stages: Vec<StageStat>,
    pub nonfinite_samples: u64,
}

impl RunStats {
    /// Record a stage measured elsewhere (see [`Stages::add`]).
    pub fn add(&mut self, name: &str, elapsed: Duration, bytes: u64) {
        self.stages.add(name, elapsed, bytes)
    }

    /// Run `f` as a stage timed by the host clock (see [`Stages::time`]).
    pub fn time<T>(&mut self, name: &str, bytes: u64, f: impl FnOnce() -> T) -> T {
        self.stages.time(name, bytes, f)
    }

    pub fn seconds(&self, name: &str) -> Option<f64> {
        self.stages.seconds(name)
    }

    pub fn bytes(&self, name: &str) -> Option<u64> {
        self.stages.bytes(name)
    }
}
