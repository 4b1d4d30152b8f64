//! The compute engine's life cycle in a run: chosen for the job's backend, set up on a thread of its own
//! while the job is prepared, ready for one job after another, and released on a thread of its own while
//! the last products are written, or, in a process that ends after its runs, left for the process's exit
//! to free.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::context::RunContext;
use crate::distributed::ranks::Rendezvous;
use crate::error::{Error, Result};
use crate::imaging::{BackendChoice, CpuEngine, Engine, ImageRequest, Migration, Plan, ProductSink};
use crate::job::{Backend, Job};
use crate::stats::RunStats;

use super::{Prepared, RunMode};

/// An engine picked for a job.
pub struct Selected {
    pub engine: Box<dyn Engine + Send>,
    /// The backend, and in full why (for the manifest).
    pub choice: BackendChoice,
    /// The engine in a few words, for the log line that starts a migration.
    pub summary: String,
}

/// Whether this process has said why it runs on the CPU under `backend = "auto"`: a batch of jobs says it
/// once.
static FALLBACK_EXPLAINED: AtomicBool = AtomicBool::new(false);

/// Pick the engine for `backend` (the job's, unless the command line overrides it) in a run of `mode`.
pub fn select_engine(job: &Job, backend: Backend, mode: &RunMode) -> Result<Selected> {
    let compute = &job.config.compute;
    let threads = (compute.threads > 0).then_some(compute.threads);
    let cpu = |why: String| -> Result<Selected> {
        let mut engine = CpuEngine::new(threads)?;
        engine.set_store(compute.store_settings());
        let summary = format!("{} threads", engine.threads());
        let choice = BackendChoice { kind: "cpu", detail: format!("{summary}{why}") };
        Ok(Selected { engine: Box::new(engine), choice, summary })
    };
    let gpu =
        || gpu_engine(job, mode).map(|(engine, choice)| Selected { summary: choice.detail.clone(), engine, choice });
    match backend {
        Backend::Cpu => cpu(String::new()),
        // A scheduler sees exit code 1: the job is right, this machine cannot run it (see docs/cluster.md).
        Backend::Cuda => gpu().map_err(|why| match why {
            // A stop, or another rank's failure, keeps its own exit code.
            e @ (Error::Interrupted(_) | Error::Peer { .. }) => e,
            why => Error::Backend(format!("the cuda backend was asked for but cannot run here: {why}")),
        }),
        Backend::Auto => gpu().or_else(|why| {
            let why = why.to_string();
            if !FALLBACK_EXPLAINED.swap(true, Ordering::Relaxed) {
                tracing::info!(
                    "no usable GPU ({}): running on the CPU; `seisimage devices` says why",
                    short_reason(&why)
                );
            }
            tracing::debug!("no usable GPU: {why}");
            cpu(format!("; no usable GPU, so the CPU: {why}"))
        }),
    }
}

/// The CUDA engine for `job`, or why there is none: the engine of this process's GPU, or, when this process
/// is a rank of a run over several GPUs, the engine of its rank.
fn gpu_engine(job: &Job, mode: &RunMode) -> Result<(Box<dyn Engine + Send>, BackendChoice)> {
    let compute = &job.config.compute;
    match mode.rank() {
        Some(env) => {
            let peers = Rendezvous::new(env.clone(), &job.config.output.dir)?;
            crate::gpu::ranks::RankEngine::start(compute, std::sync::Arc::new(peers))
        }
        None => crate::gpu::engine_for(compute),
    }
}

/// The gist of why no GPU can be used, for a log line: a reason of a few words as it is, else its first
/// clause (`no usable CUDA installation` of `no usable CUDA installation: cannot load libcuda, ...`).
pub(super) fn short_reason(why: &str) -> &str {
    match why.split_once(": ") {
        Some((gist, _)) if why.len() > 100 && gist.len() >= 12 => gist,
        _ => why,
    }
}

/// Whether the engine this process releases next is left for its exit to free ([`leave_engine_to_exit`]).
static LEFT_TO_EXIT: AtomicBool = AtomicBool::new(false);

/// The engine this process releases next is its last, and the process ends without its libraries' exit
/// handlers once the run is over (as the command line's runs do): [`ReadyEngine::release`] leaves that engine
/// as it is, and the exit frees the device. The run no longer waits for a teardown (its contexts, NCCL's
/// communicator, its pinned buffers) that the exit repeats: `run --gpus 4` of a 16 GB phase-shift job on four
/// H100s took 2.97-3.17 s instead of 3.32-3.47 s, its rank 0 having waited 0.3 s for its engine's teardown.
///
/// A process that goes on after its runs (the Python package, the benchmark) never calls this.
pub fn leave_engine_to_exit() {
    LEFT_TO_EXIT.store(true, Ordering::Relaxed);
}

/// What the set-up thread hands back: the engine, and how long the set-up took.
type StartedEngine = (Selected, Duration);

/// An engine being set up on a thread of its own: the CUDA start-up (driver, context, kernel compilation, a
/// fraction of a second) then overlaps opening the input and planning the job, and once the job is planned
/// ([`EngineStart::plan_ready`]) the engine makes its buffers for it before it is ready.
pub struct EngineStart {
    handle: JoinHandle<Result<StartedEngine>>,
    plans: Option<SyncSender<(Plan, ImageRequest, usize)>>,
}

/// Begin setting up the engine for `job` (the job's backend unless `backend` overrides it) in a run of `mode`.
pub fn start_engine(job: &Job, backend: Backend, mode: &RunMode) -> EngineStart {
    let job = job.clone();
    let mode = mode.clone();
    let (plans, planned) = std::sync::mpsc::sync_channel::<(Plan, ImageRequest, usize)>(1);
    let handle = std::thread::spawn(move || {
        let t = Instant::now();
        let mut selected = select_engine(&job, backend, &mode)?;
        // The job's plan arrives when it is made, or never (the job failed, or is run elsewhere).
        if let Ok((plan, request, members)) = planned.recv() {
            if let Err(e) = selected.engine.prepare(&plan, &request, members) {
                tracing::debug!("the engine could not prepare for the job ahead ({e}); it will when it runs it");
            }
        }
        Ok((selected, t.elapsed()))
    });
    EngineStart { handle, plans: Some(plans) }
}

impl EngineStart {
    /// The job this engine is for is planned: the engine may make ready what its run needs.
    pub fn plan_ready(&mut self, p: &Prepared) {
        if let Some(plans) = self.plans.take() {
            let _ = plans.send((p.plan.clone(), p.request.clone(), p.scan.len().max(1)));
        }
    }

    /// The engine once it is set up (waiting for it if need be).
    pub fn ready(mut self) -> Result<ReadyEngine> {
        let t = Instant::now();
        self.plans = None;
        let (Selected { engine, choice, summary }, setup) = self
            .handle
            .join()
            .map_err(|_| Error::Internal("the thread setting up the compute engine panicked".into()))??;
        Ok(ReadyEngine { engine, choice, summary, setup: Some((setup, t.elapsed())) })
    }
}

/// A set-up engine, which runs one job after another.
pub struct ReadyEngine {
    engine: Box<dyn Engine + Send>,
    pub choice: BackendChoice,
    /// The engine in a few words, for the log.
    pub summary: String,
    /// How long the set-up took and how long the first job waited for it; recorded by that job only.
    setup: Option<(Duration, Duration)>,
}

impl ReadyEngine {
    /// An engine made elsewhere (the sum of a job's shards, see `seisimage reduce`).
    pub fn new(engine: Box<dyn Engine + Send>, choice: BackendChoice) -> Self {
        ReadyEngine { summary: choice.detail.clone(), engine, choice, setup: None }
    }

    /// Migrate `m`, handing each product to `sink` as it is finished (see [`Engine::migrate_into`]).
    pub fn migrate_into(&mut self, m: &Migration, ctx: &mut RunContext, sink: &dyn ProductSink) -> Result<()> {
        self.engine.migrate_into(m, ctx, sink)
    }

    /// Run the migrations of a velocity scan from one ingest, each handing its products to its own sink (see
    /// [`Engine::migrate_scan`]).
    pub fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        self.engine.migrate_scan(scan, ctx, sinks)
    }

    /// Record in `stats` how long the set-up took and how long the job waited for it, if this is the first
    /// job the engine runs.
    pub fn record_setup(&mut self, stats: &mut RunStats) {
        if let Some((setup, wait)) = self.setup.take() {
            stats.add("engine-setup", setup, 0);
            stats.add("engine-wait", wait, 0);
        }
    }

    /// Free what the engine holds for the run it finished, keeping the engine for the next job.
    pub fn release_last_run(&mut self) {
        self.engine.release_last_run();
    }

    /// Release the engine on a thread of its own: tearing down a GPU engine (its context, streams, modules
    /// and pinned buffers) takes a noticeable fraction of a second, which the products need not wait for.
    /// The process's last engine is left for its exit instead, where the process said so
    /// ([`leave_engine_to_exit`]).
    pub fn release(self) -> Release {
        let engine = self.engine;
        if LEFT_TO_EXIT.swap(false, Ordering::Relaxed) {
            return Release::LeftToExit(engine);
        }
        Release::TearingDown(std::thread::spawn(move || {
            let t = Instant::now();
            drop(engine);
            t.elapsed()
        }))
    }
}

/// An engine being released ([`ReadyEngine::release`]).
#[must_use = "a process must not exit while the driver tears a context down: wait for the release"]
pub enum Release {
    TearingDown(JoinHandle<Duration>),
    /// Kept whole until the process ends.
    LeftToExit(Box<dyn Engine + Send>),
}

impl Release {
    /// Wait until the engine is released (at once for one left for the process's exit).
    pub fn wait(self) -> Result<()> {
        match self {
            Release::TearingDown(thread) => {
                let took = thread
                    .join()
                    .map_err(|_| Error::Internal("the thread releasing the compute engine panicked".into()))?;
                tracing::debug!("compute engine released in {:.3} s", took.as_secs_f64());
            }
            Release::LeftToExit(engine) => {
                std::mem::forget(engine);
                tracing::debug!("compute engine left for the process's exit to free");
            }
        }
        Ok(())
    }
}

/// What decides the engine a job needs: jobs that agree on it can share one (see `seisimage run`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineKey {
    backend: Backend,
    threads: usize,
    device: usize,
    fast_math: bool,
    deterministic: bool,
    device_memory_gb: Option<f64>,
    host_memory_gb: Option<f64>,
    scratch_dir: Option<std::path::PathBuf>,
}

impl EngineKey {
    pub fn of(job: &Job, backend: Backend) -> Self {
        let c = &job.config.compute;
        EngineKey {
            backend,
            threads: c.threads,
            device: c.device,
            fast_math: c.fast_math,
            deterministic: c.deterministic,
            device_memory_gb: c.device_memory_gb,
            host_memory_gb: c.host_memory_gb,
            scratch_dir: c.scratch_dir.clone(),
        }
    }
}
