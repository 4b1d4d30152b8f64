//! The run manifest: what a finished run records, written into the output folder after its last product.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::imaging::BackendChoice;
use crate::products::{self, ProductRecord};
use crate::stats::{RunStats, Stages};
use crate::volume::{CoordTransform, LineAxis, SampleAxis};

use super::Prepared;

/// Name of the run manifest in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// Version of the manifest's layout; raised when a field changes meaning or goes away.
pub const MANIFEST_SCHEMA: &str = "seisimage-manifest/1";

/// When a job started: the time of day for the manifest, and the instant its wall time is measured from.
#[derive(Clone, Copy, Debug)]
pub struct Started {
    pub at: SystemTime,
    pub clock: Instant,
}

impl Started {
    pub fn now() -> Self {
        Started { at: SystemTime::now(), clock: Instant::now() }
    }
}

/// Everything a finished run records; written as the output folder's manifest.json, last.
#[derive(Serialize)]
pub struct Manifest {
    pub schema: &'static str,
    pub versions: Versions,
    pub started_utc: String,
    pub finished_utc: String,
    pub wall_seconds: f64,
    pub job_file: PathBuf,
    /// The job as run: every default filled in, paths absolute, overrides applied.
    pub config: crate::job::JobConfig,
    pub input: InputRecord,
    pub backend: BackendChoice,
    pub plan: Vec<String>,
    /// Wall time and bytes per stage, bytes across the PCIe bus, non-finite input samples zeroed.
    pub stages: RunStats,
    /// Bytes of every product file written.
    pub product_bytes: u64,
    pub products: Vec<ProductRecord>,
    /// When the manifest was on disk: the run complete. The engine's release of the device, which overlaps
    /// writing the products, may still be waited for after it (logged, not in the file).
    #[serde(skip)]
    pub completed: Option<Instant>,
}

#[derive(Serialize)]
pub struct Versions {
    pub seisimage: &'static str,
    /// The HDF5 library built in.
    pub hdf5: String,
}

#[derive(Serialize)]
pub struct InputRecord {
    pub path: PathBuf,
    /// The reader's description of the source.
    pub source: String,
    pub axes: InputAxes,
    pub coordinates: Option<CoordTransform>,
    pub traces: usize,
    pub missing_traces: usize,
    pub bin_size_m: [f64; 2],
    pub bin_size_source: &'static str,
}

#[derive(Serialize)]
pub struct InputAxes {
    pub iline: LineAxis,
    pub xline: LineAxis,
    pub samples: SampleAxis,
}

impl InputRecord {
    fn of(p: &Prepared) -> Self {
        let g = p.reader.geometry();
        InputRecord {
            path: p.job.config.input.path.clone(),
            source: p.reader.describe(),
            axes: InputAxes { iline: g.ilines, xline: g.xlines, samples: g.samples },
            coordinates: g.coords,
            traces: g.n_traces(),
            missing_traces: g.n_missing(),
            bin_size_m: p.bin_size,
            bin_size_source: p.bin_size_source,
        }
    }
}

impl Manifest {
    /// The record of job `p`, run on `backend` from `started` until now, with its stages and the products
    /// in place.
    pub fn new(
        p: &Prepared,
        backend: BackendChoice,
        started: Started,
        stages: RunStats,
        products: Vec<ProductRecord>,
    ) -> Self {
        let (h5_major, h5_minor, h5_release) = hdf5::library_version();
        Manifest {
            schema: MANIFEST_SCHEMA,
            versions: Versions {
                seisimage: env!("CARGO_PKG_VERSION"),
                hdf5: format!("{h5_major}.{h5_minor}.{h5_release}"),
            },
            started_utc: utc(started.at),
            finished_utc: utc(SystemTime::now()),
            wall_seconds: started.clock.elapsed().as_secs_f64(),
            job_file: std::path::absolute(&p.job.source).unwrap_or_else(|_| p.job.source.clone()),
            config: p.job.config.clone(),
            input: InputRecord::of(p),
            backend,
            plan: p.plan.describe(),
            stages,
            product_bytes: products::bytes_of(&products),
            products,
            completed: None,
        }
    }

    /// Write the manifest into the job's output folder, where the products it vouches for are in place.
    pub fn write(self) -> Result<Manifest> {
        let mut steps = Stages::default();
        let json = serde_json::to_vec_pretty(&self)
            .map_err(|e| Error::Internal(format!("cannot encode the manifest: {e}")))?;
        steps.lap("encode");
        crate::io::output::write_atomic(self.config.output.dir.join(MANIFEST), &json)?;
        steps.lap("write, flush and rename");
        steps.log_trace("writing the manifest");
        Ok(Manifest { completed: Some(Instant::now()), ..self })
    }
}

/// `SystemTime` as an RFC 3339 UTC timestamp (seconds), by humantime. A clock outside the years 1970 to
/// 9999, which RFC 3339 and humantime cannot write, gives the nearest time they can.
pub fn utc(t: SystemTime) -> String {
    const LAST_SECOND_OF_9999: u64 = 253_402_300_799;
    let t = t.clamp(UNIX_EPOCH, UNIX_EPOCH + Duration::from_secs(LAST_SECOND_OF_9999));
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696 s
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(951_827_696)), "2000-02-29T12:34:56Z");
        // 2026-11-21 00:00:00 UTC = 1795219200 s
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(1_795_219_200)), "2026-11-21T00:00:00Z");
        // Clocks that RFC 3339 cannot write give the nearest time it can, not a panic.
        assert_eq!(utc(UNIX_EPOCH - Duration::from_secs(1)), "1970-01-01T00:00:00Z");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(300_000_000_000)), "9999-12-31T23:59:59Z");
    }
}
