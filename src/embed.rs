//! What a program that embeds seisimage (the Python package) calls: a job given as a structured value, a
//! run or a check of a job returning what the command line writes or prints, a volume read whole, and the
//! migration of a volume held in memory by the engine and plan of `run`.
//!
//! Values cross as JSON (`serde_json::Value`), which any binding turns into its own dictionaries.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Mutex;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, Location, Result};
use crate::imaging::Collected;
use crate::io::segy::SegyReader;
use crate::io::{detect_format, FileFormat, InputOptions};
use crate::job::{Backend, Job};
use crate::progress::Progress;
use crate::run::{check_files, memory_report, prepare, prepare_with, run_jobs, start_engine, RunMode};
use crate::volume::{Geometry, IndexBox, Volume, VolumeReader};

/// Read a job from a JSON object shaped like a job file (tables as objects), with `--set` overrides. The
/// object is written as TOML and read as a job file named `name`, so that every check and every error of
/// a job file holds for it; relative paths are relative to the folder of `name`.
pub fn job_from_json(json: &str, name: &Path, overrides: &[String]) -> Result<Job> {
    let refused = |why: String| Error::config(name.display().to_string(), Location::File, why);
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| refused(e.to_string()))?;
    let table = toml::Value::try_from(value).map_err(|e| refused(format!("not a job: {e}")))?;
    let text = toml::to_string(&table).map_err(|e| refused(format!("not a job: {e}")))?;
    Job::parse(&text, name, overrides)
}

/// The reading options (the `[input]` reading keys) from a JSON object. An unknown key or a wrong value
/// is a mistake in the request.
pub fn input_options_from_json(json: &str) -> Result<InputOptions> {
    serde_json::from_str(json).map_err(|e| Error::Request(format!("reading options: {e}")))
}

/// Run `job` as `seisimage run` does (on `backend` instead of the job's when given) and return its
/// manifest, as written to `manifest.json`. The calling program runs the job alone: a run over several
/// GPUs is the command line's (`seisimage run` under a launcher).
pub fn run_job(
    job: &Job,
    backend: Option<Backend>,
    progress: &dyn Progress,
    cancel: &CancelToken,
) -> Result<serde_json::Value> {
    let manifest = Mutex::new(None);
    let done = |m: &crate::run::Manifest| {
        *manifest.lock().unwrap_or_else(|p| p.into_inner()) = Some(serde_json::to_value(m));
    };
    let mut failed = run_jobs(std::slice::from_ref(job), backend, &RunMode::Alone, progress, cancel, &done)?;
    if let Some((_, e)) = failed.pop() {
        return Err(e);
    }
    match manifest.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(m) => m.map_err(|e| Error::Internal(format!("the manifest cannot be encoded: {e}"))),
        None => Err(Error::Internal("the run finished without a manifest".into())),
    }
}

/// Check `job` as `seisimage validate` does, without writing anything, and return what it prints: the
/// plan (`plan`, one line each), the warnings, the machine's memory against the plan, what
/// `output.existing` would remove, the backend, and the image's axes.
pub fn validate_job(job: Job, cancel: &CancelToken) -> Result<serde_json::Value> {
    check_files(&job)?;
    let prepared = prepare(job)?;
    cancel.check()?;
    let existing = prepared.job.config.output.existing;
    let clearing = prepared.clearing();
    let image = &prepared.image;
    Ok(serde_json::json!({
        "valid": true,
        "job": prepared.job.source.display().to_string(),
        "summary": prepared.summary(),
        "plan": prepared.describe(),
        "warnings": prepared.warnings,
        "memory": memory_report(&prepared),
        "existing": clearing.summary(existing),
        "existing_warnings": clearing.warnings(existing),
        "backend": format!("{:?}", prepared.job.config.compute.backend).to_lowercase(),
        "method": prepared.plan.method.name(),
        "band_hz": prepared.plan.band_hz(),
        "reach_m": prepared.plan.reach,
        "image": crate::info::GeometryInfo::of(image),
    }))
}

/// A volume read whole, with what describes it.
pub struct Opened {
    pub volume: Volume,
    /// The container ("segy", "hdf5").
    pub container: &'static str,
    /// The reader's description of the file.
    pub source: String,
    /// A SEG-Y file's textual header (empty for HDF5).
    pub text_header: String,
}

/// Read the SEG-Y or HDF5 volume at `path` into memory, with the reading options of a job's `[input]`.
pub fn read_volume(path: &Path, opts: &InputOptions) -> Result<Opened> {
    let format = detect_format(path, opts.format)?;
    let (reader, container, text_header): (Box<dyn VolumeReader>, _, _) = match format {
        FileFormat::Segy => {
            let r = SegyReader::open(path, &opts.segy())?;
            let text = r.summary().text;
            (Box::new(r), "segy", text)
        }
        FileFormat::Mdio => (crate::io::open(path, opts)?, "mdio", String::new()),
        _ => (crate::io::open(path, opts)?, "hdf5", String::new()),
    };
    let volume = Volume::read(reader.as_ref())?;
    Ok(Opened { volume, container, source: reader.describe(), text_header })
}

/// A volume in memory, borrowed: its geometry and its values in `[il][xl][s]` order.
pub struct Borrowed<'a> {
    pub geometry: Geometry,
    pub data: &'a [f32],
}

/// What [`migrate_volume`] hands back: the image with its geometry (depth samples), and what the plan
/// changed or doubts.
pub struct Migrated {
    pub geometry: Geometry,
    pub data: Vec<f32>,
    pub warnings: Vec<String>,
    /// The engine that ran ("cpu", "cuda") and why.
    pub backend: String,
    pub backend_detail: String,
}

/// Migrate `input` as `job` says (its `[input]` table gives the bin size, its input path only names the
/// volume in messages), by the plan and engine `seisimage run` uses. The job's first product must be a
/// region (`[[output.roi]]`) in depth: its values are returned, as `run` would write them into its files.
/// Nothing is written.
pub fn migrate_volume(
    job: Job,
    input: Borrowed<'_>,
    progress: &dyn Progress,
    cancel: &CancelToken,
) -> Result<Migrated> {
    let Borrowed { geometry, data } = input;
    let expected = geometry.n_values();
    if data.len() != expected {
        return Err(Error::Request(format!("the array holds {} values; its axes say {expected}", data.len())));
    }
    // The reader borrows `data` for as long as this call runs: `prepared`, which holds it, and every thread
    // of the engine are gone before it returns.
    let reader = ArrayReader { geometry, data: data.as_ptr(), len: data.len() };
    let backend = job.config.compute.backend;
    let mut engine = start_engine(&job, backend, &RunMode::Alone);
    let prepared = prepare_with(job, Box::new(reader))?;
    let spec = prepared.products.first().ok_or_else(|| Error::Request("the job asks for no product".into()))?;
    if spec.time.is_some() || spec.attribute.is_some() {
        return Err(Error::Request("the first product must be a region of the image in depth".into()));
    }
    engine.plan_ready(&prepared);
    let mut engine = engine.ready()?;
    let collected = Collected::new(&prepared.request);
    let mut ctx = RunContext::new(progress, cancel.child());
    let migrated = engine.migrate_into(&prepared.migration(), &mut ctx, &collected);
    let (backend, backend_detail) = (engine.choice.kind.to_string(), engine.choice.detail.clone());
    // A process must not go on while a GPU context is torn down on another thread.
    engine.release().wait()?;
    migrated?;
    // The request holds one box per product, in order.
    let values = collected.into_images()?.swap_remove(0);
    let geometry = spec.geometry(&prepared.image);
    let data = match spec.values(&prepared.image, &values) {
        Cow::Borrowed(_) => values,
        Cow::Owned(v) => v,
    };
    Ok(Migrated { geometry, data, warnings: prepared.warnings.clone(), backend, backend_detail })
}

/// A volume in memory that someone else owns (an array of the calling program), read in place.
struct ArrayReader {
    geometry: Geometry,
    data: *const f32,
    len: usize,
}

// SAFETY: the values are only read, never written, while the reader exists (see `migrate_volume`).
unsafe impl Send for ArrayReader {}
// SAFETY: as above: shared reads of memory nobody writes.
unsafe impl Sync for ArrayReader {}

impl ArrayReader {
    fn values(&self) -> &[f32] {
        // SAFETY: `data` and `len` come from a slice that outlives the reader (see `migrate_volume`).
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl VolumeReader for ArrayReader {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        "an array in memory".into()
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        crate::volume::check_box_buffer(b, out)?;
        let values = self.values();
        let (nx, ns) = (self.geometry.xlines.len, self.geometry.samples.len);
        let width = b.s.len();
        let mut k = 0;
        for i in b.il.clone() {
            for j in b.xl.clone() {
                let start = (i * nx + j) * ns + b.s.start;
                out[k..k + width].copy_from_slice(&values[start..start + width]);
                k += width;
            }
        }
        Ok(())
    }
}
