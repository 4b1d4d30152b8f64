//! The run manifest: what a finished run records, written into the output folder after its last product.

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::imaging::BackendChoice;
use crate::products::{self, ProductRecord};
use crate::stats::{RunStats, Stages};
use crate::volume::{CoordTransform, LineAxis, SampleAxis};

use super::record::{utc, FileRecord, FileStamp, MANIFEST};
use super::Prepared;

pub use crate::distributed::slurm::Slurm;

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
    /// The arguments of the process that ran the job, the program first.
    pub command_line: Vec<String>,
    /// The `--set KEY=VALUE` overrides applied to the job file, in order (their values are in `config`).
    pub overrides: Vec<String>,
    /// The machine the job ran on.
    pub host: String,
    /// The Slurm job and array task the process ran in, when it ran under Slurm.
    pub slurm: Option<Slurm>,
    /// The job as run: every default filled in, paths absolute, overrides applied.
    pub config: crate::job::JobConfig,
    pub input: InputRecord,
    /// The velocity model's file, when the velocity comes from one.
    pub velocity_file: Option<FileRecord>,
    pub backend: BackendChoice,
    pub plan: Vec<String>,
    /// What the run changed or doubts in the job, or found in the data, as its log said them.
    pub warnings: Vec<String>,
    /// Wall time and bytes per stage, bytes across the PCIe bus, non-finite input samples zeroed.
    pub stages: RunStats,
    /// Bytes of every product file written.
    pub product_bytes: u64,
    pub products: Vec<ProductRecord>,
    /// How sharply each member of a velocity scan focused, the best marked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan_focus: Option<crate::scan_focus::ScanFocus>,
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
    /// The file's size and modification time when it was opened.
    pub file: Option<FileStamp>,
    /// The reader's description of the source.
    pub source: String,
    pub axes: InputAxes,
    pub coordinates: Option<CoordTransform>,
    pub traces: usize,
    pub missing_traces: usize,
    pub bin_size_m: [f64; 2],
    pub bin_size_source: &'static str,
    /// The CRS of the coordinates, as `input.crs` names it (its WKT read when it names a file).
    pub crs: Option<crate::io::crs::Crs>,
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
            file: p.input_file.clone(),
            source: p.reader.describe(),
            axes: InputAxes { iline: g.ilines, xline: g.xlines, samples: g.samples },
            coordinates: g.coords,
            traces: g.n_traces(),
            missing_traces: g.n_missing(),
            bin_size_m: p.bin_size,
            bin_size_source: p.bin_size_source,
            crs: p.crs.clone(),
        }
    }
}

impl Manifest {
    /// The products the job asked for, without the page that shows them (`index.html`).
    pub fn requested_products(&self) -> usize {
        self.products.iter().filter(|p| p.kind != crate::products::ProductKind::Index).count()
    }

    /// The record of job `p`, run on `backend` from `started` until now, with its stages, the products in
    /// place and the warnings of the run.
    pub fn new(
        p: &Prepared,
        backend: BackendChoice,
        started: Started,
        stages: RunStats,
        products: Vec<ProductRecord>,
        warnings: Vec<String>,
    ) -> Self {
        let (h5_major, h5_minor, h5_release) = crate::io::hdf5::library_version();
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
            command_line: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            overrides: p.job.overrides(),
            host: super::lock::host_name(),
            slurm: Slurm::of_process(),
            config: p.job.config.clone(),
            input: InputRecord::of(p),
            velocity_file: p.velocity_file.clone(),
            backend,
            plan: p.plan.describe(),
            warnings,
            stages,
            product_bytes: products::bytes_of(&products),
            products,
            scan_focus: None,
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
