//! Running a job: open and check everything first, then migrate, then write the products, and the manifest
//! last — so that an output folder with a manifest is a complete one.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::{image_geometry, BackendChoice, CpuEngine, Engine, ImageRequest, Migration, Plan};
use crate::job::{Backend, Job};
use crate::products::{self, ProductRecord, ProductSpec};
use crate::progress::Progress;
use crate::stats::{RunStats, Stages};
use crate::velocity::VelocityModel;
use crate::volume::{CoordTransform, Geometry, LineAxis, SampleAxis, VolumeReader};

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

/// Open the input and plan the job. A wrong setting found on the way names the line of the job file (or
/// the `--set` override) it comes from.
pub fn prepare(job: Job) -> Result<Prepared> {
    let c = &job.config;
    let t = Instant::now();
    let reader = crate::io::open(&c.input.path, &c.input.read).map_err(|e| job.locate(e.within("input")))?;
    tracing::debug!("{} opened in {:.3} s", c.input.path.display(), t.elapsed().as_secs_f64());
    let input = reader.geometry().clone();
    let (bin_size, bin_size_source) = match (c.input.bin_size, input.coords) {
        (Some(b), _) => (b, "job file"),
        (None, Some(t)) => (t.bin_size(), "survey coordinates"),
        (None, None) => {
            return Err(job.error_at(
                "input.bin_size",
                format!(
                    "{} has no trace coordinates, so the distance between traces is unknown: set input.bin_size = \
                     [metres between inlines, metres between crosslines]",
                    c.input.path.display()
                ),
            ))
        }
    };
    if bin_size.iter().any(|b| !b.is_finite() || *b <= 0.0) {
        return Err(job.error_at(
            "input.bin_size",
            format!("the trace spacing from the {bin_size_source} is {bin_size:?} m; set input.bin_size"),
        ));
    }
    let planned = || -> Result<_> {
        let velocity = c.velocity.load(&input)?;
        let image = image_geometry(&input, &c.imaging, &velocity)?;
        let products = products::plan_products(&c.output, &image)?;
        let request = products::request(&products);
        let mut plan = Plan::new(&input, bin_size, &c.window, &c.imaging, &velocity, &request)?;
        plan.nonfinite = c.input.nonfinite;
        Ok((velocity, image, products, request, plan))
    };
    let (velocity, image, products, request, plan) = planned().map_err(|e| job.locate(e))?;
    Ok(Prepared { job, reader, bin_size, bin_size_source, velocity, image, products, request, plan })
}

impl Prepared {
    /// The migration this job asks of an engine.
    pub fn migration(&self) -> Migration<'_> {
        Migration { input: self.reader.as_ref(), plan: &self.plan, velocity: &self.velocity, request: &self.request }
    }

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

/// Pick the engine for `backend` (the job's, unless the command line overrides it).
pub fn select_engine(job: &Job, backend: Backend) -> Result<(Box<dyn Engine + Send>, BackendChoice)> {
    let compute = &job.config.compute;
    let threads = (compute.threads > 0).then_some(compute.threads);
    let cpu = |why: String| -> Result<(Box<dyn Engine + Send>, BackendChoice)> {
        let engine = CpuEngine::new(threads)?;
        let detail = format!("{} threads{why}", engine.threads());
        Ok((Box::new(engine), BackendChoice { kind: "cpu", detail }))
    };
    match backend {
        Backend::Cpu => cpu(String::new()),
        // A scheduler sees exit code 1: the job is right, this machine cannot run it (see docs/cluster.md).
        Backend::Cuda => crate::gpu::engine_for(compute)
            .map_err(|why| Error::Backend(format!("the cuda backend was asked for but cannot run here: {why}"))),
        Backend::Auto => {
            crate::gpu::engine_for(compute).or_else(|why| cpu(format!("; no usable GPU, so the CPU: {why}")))
        }
    }
}

/// What the set-up thread hands back: the engine, the backend it runs on, and how long the set-up took.
type StartedEngine = (Box<dyn Engine + Send>, BackendChoice, std::time::Duration);

/// An engine being set up on a thread of its own: the CUDA start-up (driver, context, kernel compilation, a
/// fraction of a second) then overlaps opening the input and planning the job, and once the job is planned
/// ([`EngineStart::plan_ready`]) the engine makes its buffers for it before it is ready.
pub struct EngineStart {
    handle: std::thread::JoinHandle<Result<StartedEngine>>,
    plans: Option<std::sync::mpsc::SyncSender<(Plan, ImageRequest)>>,
}

/// Begin setting up the engine for `job` (the job's backend unless `backend` overrides it).
pub fn start_engine(job: &Job, backend: Backend) -> EngineStart {
    let job = job.clone();
    let (plans, planned) = std::sync::mpsc::sync_channel::<(Plan, ImageRequest)>(1);
    let handle = std::thread::spawn(move || {
        let t = Instant::now();
        let (mut engine, choice) = select_engine(&job, backend)?;
        // The job's plan arrives when it is made, or never (the job failed, or is run elsewhere).
        if let Ok((plan, request)) = planned.recv() {
            if let Err(e) = engine.prepare(&plan, &request) {
                tracing::debug!("the engine could not prepare for the job ahead ({e}); it will when it runs it");
            }
        }
        Ok((engine, choice, t.elapsed()))
    });
    EngineStart { handle, plans: Some(plans) }
}

impl EngineStart {
    /// The job this engine is for is planned: the engine may make ready what its run needs.
    pub fn plan_ready(&mut self, p: &Prepared) {
        if let Some(plans) = self.plans.take() {
            let _ = plans.send((p.plan.clone(), p.request.clone()));
        }
    }

    /// The engine once it is set up (waiting for it if need be).
    pub fn ready(mut self) -> Result<ReadyEngine> {
        let t = Instant::now();
        self.plans = None;
        let (engine, choice, setup) = self
            .handle
            .join()
            .map_err(|_| Error::Internal("the thread setting up the compute engine panicked".into()))??;
        Ok(ReadyEngine { engine, choice, setup: Some((setup, t.elapsed())) })
    }
}

/// A set-up engine, which runs one job after another.
pub struct ReadyEngine {
    engine: Box<dyn Engine + Send>,
    pub choice: BackendChoice,
    /// How long the set-up took and how long the first job waited for it; recorded by that job only.
    setup: Option<(std::time::Duration, std::time::Duration)>,
}

/// What decides the engine a job needs: jobs that agree on it can share one (see `seisimage run`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineKey {
    backend: Backend,
    threads: usize,
    device: usize,
    fast_math: bool,
    device_memory_gb: Option<f64>,
}

impl EngineKey {
    pub fn of(job: &Job, backend: Backend) -> Self {
        let c = &job.config.compute;
        EngineKey {
            backend,
            threads: c.threads,
            device: c.device,
            fast_math: c.fast_math,
            device_memory_gb: c.device_memory_gb,
        }
    }
}

/// Run `jobs` one after another, the way `seisimage run` does with several job files:
///
/// - two jobs writing into one output folder are refused before anything runs;
/// - an engine is shared by consecutive jobs that need the same one ([`EngineKey`]), so a GPU is set up
///   once; a job that fails while migrating takes its engine with it (it may be unusable);
/// - each job after the first is opened and planned on a thread of its own while the one before it
///   migrates;
/// - a job that fails is logged and the others still run; a stop of `cancel` (SIGINT, SIGTERM) ends the
///   batch with its error. Each job runs under a child token of `cancel`.
///
/// `done` is told of each finished job. Returns the jobs that failed, with their errors, in order.
pub fn run_jobs(
    jobs: &[Job],
    backend: Option<Backend>,
    progress: &dyn Progress,
    cancel: &CancelToken,
    done: &dyn Fn(&Manifest),
) -> Result<Vec<(PathBuf, Error)>> {
    for (i, a) in jobs.iter().enumerate() {
        if let Some(b) = jobs[..i].iter().find(|b| b.config.output.dir == a.config.output.dir) {
            return Err(a.error_at(
                "output.dir",
                format!(
                    "{} is also the output folder of {}: each job needs its own",
                    a.config.output.dir.display(),
                    b.source.display()
                ),
            ));
        }
    }
    let count = jobs.len();
    let mut engine: Option<(EngineKey, ReadyEngine)> = None;
    let mut failed = Vec::new();
    let mut ahead: Option<std::thread::JoinHandle<Result<Prepared>>> = None;
    for (i, job) in jobs.iter().enumerate() {
        if count > 1 {
            tracing::info!("job {} of {count}: {}", i + 1, job.source.display());
        }
        let backend = backend.unwrap_or(job.config.compute.backend);
        let key = EngineKey::of(job, backend);
        // A job that needs other compute settings than the last one gets an engine of its own.
        let mut slot = match engine.take() {
            Some((k, ready)) if k == key => Some(ready),
            _ => None,
        };
        // The engine (CUDA start-up included) gets ready while the input is opened and the job planned.
        let starting = slot.is_none().then(|| start_engine(job, backend));
        let last = i + 1 == count;
        let prepared = match ahead.take() {
            Some(preparing) => preparing
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("the thread preparing the job panicked".into()))),
            None => prepare(job.clone()),
        };
        let clock = (SystemTime::now(), Instant::now());
        let mut migrated = false;
        let outcome = (|| -> Result<Manifest> {
            let prepared = match prepared {
                Ok(p) => p,
                Err(e) => {
                    // An engine being set up for this job can still serve the next one.
                    if let (Some(s), false) = (starting, last) {
                        slot = s.ready().ok();
                    }
                    return Err(e);
                }
            };
            if let Some(mut s) = starting {
                s.plan_ready(&prepared);
                slot = Some(s.ready()?);
            }
            for line in prepared.describe() {
                tracing::debug!("{line}");
            }
            if let Some(next) = jobs.get(i + 1) {
                let next = next.clone();
                ahead = Some(std::thread::spawn(move || prepare(next)));
            }
            migrated = true;
            let mut ctx = RunContext::new(progress, cancel.child());
            execute_on(&prepared, &mut slot, !last, clock, &mut ctx)
        })();
        match outcome {
            Ok(manifest) => {
                done(&manifest);
                engine = slot.map(|ready| (key, ready));
            }
            Err(e @ Error::Interrupted(_)) => return Err(e),
            Err(e) => {
                if count > 1 {
                    tracing::error!("{}: {e}", job.source.display());
                }
                failed.push((job.source.clone(), e));
                // A job that failed while migrating may have left its engine unusable.
                if !migrated {
                    engine = slot.map(|ready| (key, ready));
                }
            }
        }
    }
    Ok(failed)
}

/// Version of the manifest's layout; raised when a field changes meaning or goes away.
pub const MANIFEST_SCHEMA: &str = "seisimage-manifest/1";

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

/// Run a prepared job to its manifest, on the engine being set up, which is released as the products are
/// written. See [`execute_on`].
pub fn execute(p: &Prepared, mut engine: EngineStart, ctx: &mut RunContext) -> Result<Manifest> {
    let clock = (SystemTime::now(), Instant::now());
    engine.plan_ready(p);
    let mut slot = Some(engine.ready()?);
    execute_on(p, &mut slot, false, clock, ctx)
}

/// Run a prepared job to its manifest on the engine in `slot`: kept there for another job when `keep`,
/// else released on a thread of its own while the products are written. `clock` is when the job started.
///
/// Everything that can fail without the data fails first: the engine, then the output folder; a manifest
/// from an earlier run goes before the migration starts, and the new one is written after the last
/// product, so a folder with a manifest holds every product it lists.
pub fn execute_on(
    p: &Prepared,
    slot: &mut Option<ReadyEngine>,
    keep: bool,
    (started, clock): (SystemTime, Instant),
    ctx: &mut RunContext,
) -> Result<Manifest> {
    let ready = slot.as_mut().ok_or_else(|| Error::Internal("no compute engine to run the job on".into()))?;
    let out_dir = &p.job.config.output.dir;
    check_output_dir(&p.job, products::estimated_bytes(&p.products, &p.job.config.output.render))?;
    // A manifest left from an earlier run would vouch for products this run is about to replace.
    match std::fs::remove_file(out_dir.join(MANIFEST)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(out_dir.join(MANIFEST), e)),
        _ => {}
    }

    let choice = ready.choice.clone();
    tracing::info!("migrating with {} on {}: {}", p.plan.method.name(), choice.kind, choice.detail);
    if let Some((setup, wait)) = ready.setup.take() {
        ctx.stats.add("engine-setup", setup, 0);
        ctx.stats.add("engine-wait", wait, 0);
    }
    // The products are written as the engine hands them over; the engine is released (unless kept) as soon
    // as the migration is over: tearing down a GPU engine (its context, streams, modules and pinned
    // buffers) takes a noticeable fraction of a second, which the last products need not wait for.
    let out = &p.job.config.output;
    let writer =
        products::ProductWriter::new(&out.dir, &p.products, &p.image, p.bin_size, &out.render, ctx.cancel.clone());
    let migration = p.migration();
    let progress = ctx.progress;
    let written = writer.run(progress, |sink| {
        let migrated = match slot.as_mut() {
            Some(r) => r.engine.migrate_into(&migration, ctx, sink),
            None => Err(Error::Internal("no compute engine to run the job on".into())),
        };
        let release = (!keep).then(|| slot.take().map(|r| r.engine)).map(|engine| {
            std::thread::spawn(move || {
                let t = Instant::now();
                drop(engine);
                t.elapsed()
            })
        });
        let all_handed_over = migrated.is_ok();
        ((migrated, release), all_handed_over)
    });
    let (migrated, release) = written.migrated;
    let finished = migrated.and_then(|()| {
        if ctx.stats.nonfinite_samples > 0 {
            tracing::warn!(
                "{} NaN or infinite input samples were set to zero (input.nonfinite = \"refuse\" stops at the first)",
                ctx.stats.nonfinite_samples
            );
        }
        ctx.check()?;
        let (records, replaced) = products::commit_products(written.products?)?;
        let product_bytes: u64 = records.iter().flat_map(|r| r.files.iter()).map(|f| f.bytes).sum();
        ctx.stats.add("write", written.after_migration, product_bytes);
        ctx.check()?;
        let manifest = finish(p, records, product_bytes, std::mem::take(&mut ctx.stats), choice, started, clock);
        // An earlier run's files that the products replaced go only now, once the run is complete.
        drop(replaced);
        manifest
    });
    match release {
        // Only now wait for the engine's release, error or not, so that a process never exits while the
        // driver is tearing a context down on another thread.
        Some(release) => {
            let released = release
                .join()
                .map_err(|_| Error::Internal("the thread releasing the compute engine panicked".into()))?;
            tracing::debug!("compute engine released in {:.3} s", released.as_secs_f64());
        }
        None => {
            if let Some(r) = slot.as_mut() {
                r.engine.release_last_run();
            }
        }
    }
    finished
}

/// Write the manifest that vouches for the products, which are in place.
fn finish(
    p: &Prepared,
    records: Vec<ProductRecord>,
    product_bytes: u64,
    stats: RunStats,
    choice: BackendChoice,
    started: SystemTime,
    clock: Instant,
) -> Result<Manifest> {
    let (h5_major, h5_minor, h5_release) = hdf5::library_version();
    let manifest = Manifest {
        schema: MANIFEST_SCHEMA,
        versions: Versions {
            seisimage: env!("CARGO_PKG_VERSION"),
            hdf5: format!("{h5_major}.{h5_minor}.{h5_release}"),
        },
        started_utc: utc(started),
        finished_utc: utc(SystemTime::now()),
        wall_seconds: clock.elapsed().as_secs_f64(),
        job_file: std::path::absolute(&p.job.source).unwrap_or_else(|_| p.job.source.clone()),
        config: p.job.config.clone(),
        input: InputRecord::of(p),
        backend: choice,
        plan: p.plan.describe(),
        stages: stats,
        product_bytes,
        products: records,
        completed: None,
    };
    let mut steps = Stages::default();
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| Error::Internal(format!("cannot encode the manifest: {e}")))?;
    steps.lap("encode");
    crate::io::output::write_atomic(p.job.config.output.dir.join(MANIFEST), &json)?;
    steps.lap("write, flush and rename");
    steps.log_trace("writing the manifest");
    Ok(Manifest { completed: Some(Instant::now()), ..manifest })
}

/// Fail now, not after the migration, when the output folder cannot take the products: it must be (or
/// become) a folder this process can write in, on a file system with room for `needed_bytes` of products
/// and `output.keep_free_gb` besides.
pub fn check_output_dir(job: &Job, needed_bytes: u64) -> Result<()> {
    let dir = &job.config.output.dir;
    writable_dir(dir).map_err(|e| job.error_at("output.dir", format!("cannot write in {}: {e}", dir.display())))?;
    let keep = (job.config.output.keep_free_gb * 1e9) as u64;
    match free_bytes(dir) {
        Some(free) => check_free_space(dir, free, needed_bytes, keep),
        None => Ok(()),
    }
}

/// Create `dir` if it is missing, and prove that a file can be created in it.
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "it is a file, not a folder"));
    }
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".seisimage-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Refuse when `free_bytes` on the output file system cannot hold `needed_bytes` of products and still keep
/// `keep_bytes` free. An environment problem, not a job error: exit code 1.
pub fn check_free_space(dir: &Path, free_bytes: u64, needed_bytes: u64, keep_bytes: u64) -> Result<()> {
    if free_bytes >= needed_bytes.saturating_add(keep_bytes) {
        return Ok(());
    }
    let keep = match keep_bytes {
        0 => String::new(),
        k => format!(", and output.keep_free_gb asks to keep {} free", human_bytes(k)),
    };
    let message = format!(
        "the file system has {} free, the products need about {}{keep}",
        human_bytes(free_bytes),
        human_bytes(needed_bytes)
    );
    Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::StorageFull, message)))
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b => format!("{b} bytes"),
    }
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
