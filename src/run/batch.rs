//! A batch of jobs, run one after another the way `seisimage run` runs several job files.

use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::job::{Backend, Job};
use crate::progress::Progress;

use super::checks::check_files;
use super::engine::{start_engine, EngineKey, EngineStart, ReadyEngine};
use super::execute::{execute_on, AfterMigration};
use super::manifest::{Manifest, Started};
use super::prepare::{prepare, Prepared};
use super::RunMode;

/// Run `jobs` one after another, the way `seisimage run` does with several job files:
///
/// - the files of every job are checked ([`check_files`]) and two jobs writing into one output folder are
///   refused before anything runs;
/// - an engine is shared by consecutive jobs that need the same one ([`EngineKey`]), so a GPU is set up
///   once; a job that fails once it has started to run takes its engine with it (it may be unusable);
/// - each job after the first is opened and planned on a thread of its own while the one before it
///   migrates;
/// - a job that fails is logged and the others still run; a stop of `cancel` (SIGINT, SIGTERM) ends the
///   batch with its error, after a warning that says how far it got. Each job runs under a child token of
///   `cancel`.
///
/// The log names the version and each job, then what the job reads, how it migrates and what it writes,
/// so that a batch log says what ran. `mode` is how this process takes part: alone, or as rank 0 of a run
/// over several GPUs. `done` is told of each finished job. Returns the jobs that failed,
/// with their errors, in order.
pub fn run_jobs(
    jobs: &[Job],
    backend: Option<Backend>,
    mode: &RunMode,
    progress: &dyn Progress,
    cancel: &CancelToken,
    done: &dyn Fn(&Manifest),
) -> Result<Vec<(PathBuf, Error)>> {
    refuse_shared_output_folders(jobs)?;
    jobs.iter().try_for_each(check_files)?;
    let version = env!("CARGO_PKG_VERSION");
    match jobs {
        [job] => tracing::info!("seisimage {version}: job {}", job.source.display()),
        _ => tracing::info!("seisimage {version}: {} jobs", jobs.len()),
    }
    let mut batch = Batch { jobs, backend, mode, progress, cancel, engine: None, ahead: None };
    let mut failed = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        if jobs.len() > 1 {
            tracing::info!("job {} of {}: {}", i + 1, jobs.len(), job.source.display());
        }
        let started = Instant::now();
        match batch.run(i) {
            Ok(manifest) => done(&manifest),
            Err(Error::Interrupted(stop)) => {
                let at = progress.position().map(|p| format!(" {p}")).unwrap_or_default();
                let finished = match (jobs.len(), i - failed.len()) {
                    (1, _) => String::new(),
                    (n, ok) => format!("; {ok} of {n} jobs had finished"),
                };
                tracing::warn!(
                    "interrupted by {stop}{at}, {:.0} s into the job {}: its files were removed and it has no \
                     manifest{finished}",
                    started.elapsed().as_secs_f64(),
                    job.source.display()
                );
                return Err(Error::Interrupted(stop));
            }
            Err(e) => {
                if jobs.len() > 1 {
                    tracing::error!("{}: {e}", job.source.display());
                }
                failed.push((job.source.clone(), e));
            }
        }
    }
    Ok(failed)
}

/// Each job writes into an output folder of its own.
fn refuse_shared_output_folders(jobs: &[Job]) -> Result<()> {
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
    Ok(())
}

/// A batch under way: the jobs, what they share, and what is carried from one job to the next.
struct Batch<'a> {
    jobs: &'a [Job],
    /// The command line's backend, over each job's own.
    backend: Option<Backend>,
    /// How this process takes part in the run: alone, or rank 0 of a run over several GPUs.
    mode: &'a RunMode,
    progress: &'a dyn Progress,
    cancel: &'a CancelToken,
    /// The engine the last job ran on, for the next job if it needs the same one.
    engine: Option<(EngineKey, ReadyEngine)>,
    /// The next job, being opened and planned while the current one runs.
    ahead: Option<JoinHandle<Result<Prepared>>>,
}

impl Batch<'_> {
    /// Run job `i` on the last job's engine when they need the same one, else on one set up while the job
    /// is prepared.
    fn run(&mut self, i: usize) -> Result<Manifest> {
        let job = &self.jobs[i];
        let last = i + 1 == self.jobs.len();
        let backend = self.backend.unwrap_or(job.config.compute.backend);
        let key = EngineKey::of(job, backend);
        let engine = match self.engine.take() {
            Some((k, engine)) if k == key => JobEngine::Shared(engine),
            // The engine (CUDA start-up included) gets ready while the input is opened and the job planned.
            _ => JobEngine::Starting(start_engine(job, backend, self.mode)),
        };
        let prepared = match self.ahead.take() {
            Some(preparing) => preparing
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("the thread preparing the job panicked".into()))),
            None => prepare(job.clone()),
        };
        let started = Started::now();
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                // The engine was not used: it can serve the next job.
                if !last {
                    self.engine = engine.spare().map(|engine| (key, engine));
                }
                return Err(e);
            }
        };
        for line in prepared.summary() {
            tracing::info!("{line}");
        }
        for line in prepared.describe() {
            tracing::debug!("{line}");
        }
        let engine = engine.ready_for(&prepared)?;
        if let Some(next) = self.jobs.get(i + 1) {
            let next = next.clone();
            self.ahead = Some(std::thread::spawn(move || prepare(next)));
        }
        let after = if last { AfterMigration::Release } else { AfterMigration::Keep };
        let mut ctx = RunContext::new(self.progress, self.cancel.child());
        // A job that fails from here on may have left its engine unusable: it is not kept.
        let (manifest, engine) = execute_on(&prepared, engine, self.mode, after, started, &mut ctx)?;
        self.engine = engine.map(|engine| (key, engine));
        Ok(manifest)
    }
}

/// The engine a job of the batch runs on: the last job's, or one being set up for it.
enum JobEngine {
    Shared(ReadyEngine),
    Starting(EngineStart),
}

impl JobEngine {
    /// The engine, ready for the prepared job `p`.
    fn ready_for(self, p: &Prepared) -> Result<ReadyEngine> {
        match self {
            JobEngine::Shared(engine) => Ok(engine),
            JobEngine::Starting(mut start) => {
                start.plan_ready(p);
                start.ready()
            }
        }
    }

    /// The engine for another job, when this one did not get to run: none if its set-up failed.
    fn spare(self) -> Option<ReadyEngine> {
        match self {
            JobEngine::Shared(engine) => Some(engine),
            JobEngine::Starting(start) => start.ready().ok(),
        }
    }
}
