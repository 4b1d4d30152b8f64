//! Running a job: open and check everything first, then migrate, then write the products, and the manifest
//! last — so that an output folder with a manifest is a complete one.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::{Error, IoContext, Result};
use crate::imaging::{image_geometry, CpuEngine, Engine, ImageRequest, Plan};
use crate::job::{Backend, Job};
use crate::products::{self, ProductRecord, ProductSpec};
use crate::progress::Progress;
use crate::stats::RunStats;
use crate::velocity::VelocityModel;
use crate::volume::{Geometry, VolumeReader};

/// Name of the run manifest in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// A job with its input open, its velocity loaded and its plan made: everything `validate` prints and
/// `run` needs, found before any heavy work.
pub struct Prepared {
    pub job: Job,
    pub reader: Box<dyn VolumeReader>,
    pub bin_size: [f64; 2],
    /// Where the bin size came from ("job file" or "survey coordinates").
    pub bin_size_source: &'static str,
    pub velocity: VelocityModel,
    pub image: Geometry,
    pub products: Vec<ProductSpec>,
    pub request: ImageRequest,
    pub plan: Plan,
}

/// Open the input and plan the job.
pub fn prepare(job: Job) -> Result<Prepared> {
    let c = &job.config;
    let reader = crate::io::open(&c.input.path, &c.input.read)?;
    let input = reader.geometry().clone();
    let (bin_size, bin_size_source) = match (c.input.bin_size, input.coords) {
        (Some(b), _) => (b, "job file"),
        (None, Some(t)) => (t.bin_size(), "survey coordinates"),
        (None, None) => {
            return Err(Error::config(
                job.source.display().to_string(),
                crate::error::Location::File,
                format!(
                    "{} has no trace coordinates, so the distance between traces is unknown: set input.bin_size = \
                     [metres between inlines, metres between crosslines]",
                    c.input.path.display()
                ),
            ))
        }
    };
    if bin_size.iter().any(|b| !(*b > 0.0)) {
        return Err(Error::Request(format!(
            "the trace spacing from the {bin_size_source} is {bin_size:?} m; set input.bin_size in the job file"
        )));
    }
    let velocity = c.velocity.load(&input)?;
    let image = image_geometry(&input, &c.imaging, &velocity)?;
    let products = products::plan_products(&c.output, &image)?;
    let request = products::request(&products);
    let plan = Plan::new(&input, bin_size, &c.window, &c.imaging, &velocity, &request)?;
    c.output.render.validate()?;
    Ok(Prepared { job, reader, bin_size, bin_size_source, velocity, image, products, request, plan })
}

impl Prepared {
    /// What `validate` prints: the input, the plan and the products.
    pub fn describe(&self) -> Vec<String> {
        let g = self.reader.geometry();
        let mut lines = vec![
            format!("input     {}", self.reader.describe()),
            format!(
                "          {} inlines ({}..={}) × {} crosslines ({}..={}) × {} samples of {} ms; {} missing traces",
                g.ilines.len,
                g.ilines.first,
                g.ilines.last(),
                g.xlines.len,
                g.xlines.first,
                g.xlines.last(),
                g.samples.len,
                g.samples.step,
                g.n_missing()
            ),
            format!(
                "          bins {:.2} m between inlines × {:.2} m between crosslines (from the {})",
                self.bin_size[0], self.bin_size[1], self.bin_size_source
            ),
        ];
        lines.extend(self.plan.describe().into_iter().map(|l| format!("plan      {l}")));
        lines.push(format!("output    {}", self.job.config.output.dir.display()));
        for p in &self.products {
            let [a, b, c] = p.region.shape();
            let mut what: Vec<String> = Vec::new();
            if p.png {
                what.push("png".into());
            }
            what.extend(p.formats.iter().map(|f| f.extension().to_string()));
            lines.push(format!("          {:<24} {a} × {b} × {c} values → {}", p.stem, what.join(", ")));
        }
        lines
    }
}

/// Which engine runs, and why.
#[derive(Clone, Debug, Serialize)]
pub struct BackendChoice {
    pub kind: &'static str,
    pub detail: String,
}

/// Pick the engine for `backend` (the job's, unless the command line overrides it).
pub fn select_engine(job: &Job, backend: Backend) -> Result<(Box<dyn Engine>, BackendChoice)> {
    let compute = &job.config.compute;
    let threads = (compute.threads > 0).then_some(compute.threads);
    let cpu = |why: String| -> Result<(Box<dyn Engine>, BackendChoice)> {
        let engine = CpuEngine::new(threads)?;
        let detail = format!("{} threads{why}", engine.threads());
        Ok((Box::new(engine), BackendChoice { kind: "cpu", detail }))
    };
    match backend {
        Backend::Cpu => cpu(String::new()),
        Backend::Cuda => {
            let (engine, choice) = crate::gpu::engine_for(compute)?;
            Ok((engine, choice))
        }
        Backend::Auto => match crate::gpu::engine_for(compute) {
            Ok(e) => Ok(e),
            Err(why) => {
                tracing::info!("running on the CPU: {why}");
                cpu(format!(" (no GPU: {why})"))
            }
        },
    }
}

/// Everything a finished run records; written as the output folder's manifest.json.
#[derive(Serialize)]
pub struct Manifest {
    pub seisimage_version: &'static str,
    pub started_utc: String,
    pub finished_utc: String,
    pub wall_seconds: f64,
    pub job_file: PathBuf,
    pub config: crate::job::JobConfig,
    pub input: InputRecord,
    pub backend: BackendChoice,
    pub plan: Vec<String>,
    pub stages: RunStats,
    /// Bytes of every product file written.
    pub product_bytes: u64,
    pub products: Vec<ProductRecord>,
}

#[derive(Serialize)]
pub struct InputRecord {
    pub path: PathBuf,
    pub geometry: Geometry,
    pub bin_size_m: [f64; 2],
    pub bin_size_source: &'static str,
}

/// Run a prepared job to its manifest.
pub fn execute(p: &Prepared, backend: Backend, progress: &dyn Progress) -> Result<Manifest> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let out_dir = &p.job.config.output.dir;
    check_output_dir(out_dir, products::estimated_bytes(&p.products))?;
    // A manifest left from an earlier run would vouch for products this run is about to replace.
    match std::fs::remove_file(out_dir.join(MANIFEST)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(out_dir.join(MANIFEST), e)),
        _ => {}
    }

    let (mut engine, choice) = select_engine(&p.job, backend)?;
    tracing::info!("migrating with {} on {} ({})", p.plan.method.name(), choice.kind, choice.detail);
    let mut stats = RunStats::default();
    let images = engine.migrate(p.reader.as_ref(), &p.plan, &p.velocity, &p.request, progress, &mut stats)?;
    crate::cancel::check()?;

    let t = Instant::now();
    let records = write_products(p, &images, progress)?;
    let product_bytes: u64 = records.iter().flat_map(|r| r.files.iter()).map(|f| f.bytes).sum();
    stats.add("write", t.elapsed(), product_bytes);

    let manifest = Manifest {
        seisimage_version: env!("CARGO_PKG_VERSION"),
        started_utc: utc(started),
        finished_utc: utc(SystemTime::now()),
        wall_seconds: clock.elapsed().as_secs_f64(),
        job_file: p.job.source.clone(),
        config: p.job.config.clone(),
        input: InputRecord {
            path: p.job.config.input.path.clone(),
            geometry: p.reader.geometry().clone(),
            bin_size_m: p.bin_size,
            bin_size_source: p.bin_size_source,
        },
        backend: choice,
        plan: p.plan.describe(),
        stages: stats,
        product_bytes,
        products: records,
    };
    let json =
        serde_json::to_vec_pretty(&manifest).map_err(|e| Error::Request(format!("cannot encode the manifest: {e}")))?;
    crate::io::output::write_atomic(out_dir.join(MANIFEST), &json)?;
    Ok(manifest)
}

fn write_products(p: &Prepared, images: &[Vec<f32>], progress: &dyn Progress) -> Result<Vec<ProductRecord>> {
    use rayon::prelude::*;
    let out = &p.job.config.output;
    progress.begin("writing", p.products.len() as u64);
    let records = p
        .products
        .par_iter()
        .zip(images.par_iter())
        .map(|(spec, data)| {
            crate::cancel::check()?;
            let r = products::write_product(&out.dir, spec, data, &p.image, p.bin_size, &out.render);
            progress.advance(1);
            r
        })
        .collect::<Result<Vec<_>>>();
    progress.finish();
    records
}

/// Fail now, not after the migration, when the output folder cannot take the products.
pub fn check_output_dir(dir: &Path, needed_bytes: u64) -> Result<()> {
    std::fs::create_dir_all(dir).at(dir)?;
    let probe = dir.join(format!(".seisimage-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| Error::Request(format!("the output folder {} is not writable: {e}", dir.display())))?;
    let _ = std::fs::remove_file(&probe);
    if let Some(free) = free_bytes(dir) {
        if free < needed_bytes {
            return Err(Error::Request(format!(
                "the output folder {} has {:.1} MB free, the products need about {:.1} MB",
                dir.display(),
                free as f64 / 1e6,
                needed_bytes as f64 / 1e6
            )));
        }
    }
    Ok(())
}

/// Free bytes for an unprivileged writer on the file system of `dir`, if the system says.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `s` a valid out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

/// `SystemTime` as an RFC 3339 UTC timestamp (seconds).
pub fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm, written out from its description).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696 s
        assert_eq!(utc(UNIX_EPOCH + std::time::Duration::from_secs(951_827_696)), "2000-02-29T12:34:56Z");
        // 2026-11-21 00:00:00 UTC = 1795219200 s
        assert_eq!(utc(UNIX_EPOCH + std::time::Duration::from_secs(1_795_219_200)), "2026-11-21T00:00:00Z");
    }
}
