//! `seisimage run`, `validate` and `print-config`: a job file from first check to manifest.

use seisimage::cancel::CancelToken;
use seisimage::distributed::{launcher, ranks, start_up};
use seisimage::job::{Backend, Job};
use seisimage::progress::Progress;
use seisimage::run::shard;
use seisimage::run::{self, check_files, memory_report, prepare, run_jobs, Manifest, RunMode, MANIFEST};
use seisimage::Error;

use super::Reporting;
use crate::cli::{JobArgs, RunArgs};

pub fn run(args: &RunArgs, reporting: Reporting) -> anyhow::Result<()> {
    // Every job file is read and checked before the first job starts: a mistake in the fifth file of a
    // batch is reported at once, not after four migrations.
    let jobs = args.jobs.iter().map(|path| Job::load(path, &args.overrides)).collect::<Result<Vec<_>, _>>()?;
    let cancel = CancelToken::process();
    if let Some(gpus) = args.gpus {
        return launch_ranks(args, &jobs, gpus, cancel);
    }
    let mode = RunMode::of_run(args.shard)?;
    // Before the progress display, whose thread may read the environment.
    match mode {
        RunMode::Alone | RunMode::Shard(_) => see_only_the_jobs_gpu(&jobs, args.backend),
        RunMode::Rank(_) => super::nccl_through_cuda_ipc(),
        RunMode::Reduce => {}
    }
    let progress = reporting.progress();
    match &mode {
        RunMode::Rank(env) => {
            run::leave_engine_to_exit();
            return run_rank(args, &jobs, env, progress.as_ref(), cancel);
        }
        RunMode::Shard(share) => {
            for (i, job) in jobs.iter().enumerate() {
                if i + 1 == jobs.len() {
                    run::leave_engine_to_exit();
                }
                let backend = args.backend.unwrap_or(job.config.compute.backend);
                shard::run_shard(job, backend, *share, args.partials.as_deref(), progress.as_ref(), cancel)?;
            }
            return Ok(());
        }
        RunMode::Alone | RunMode::Reduce => {}
    }
    let count = jobs.len();
    let done = |manifest: &Manifest| {
        let out = &manifest.config.output.dir;
        tracing::info!(
            "done in {:.2} s on {}: {}, {:.1} MB, in {} (see {})",
            manifest.wall_seconds,
            manifest.backend.kind,
            run::count(manifest.requested_products(), "product"),
            manifest.product_bytes as f64 / 1e6,
            out.display(),
            out.join(MANIFEST).display()
        );
    };
    // Only the last job's engine is released: the others are kept for the next job, or dropped for one of
    // another kind.
    run::leave_engine_to_exit();
    let mut failed =
        run_jobs(&jobs, args.backend, &mode, progress.as_ref(), seisimage::cancel::CancelToken::process(), &done)?;
    if failed.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = failed.iter().map(|(p, _)| p.display().to_string()).collect();
    let (_, first) = failed.swap_remove(0);
    if count == 1 {
        return Err(first.into());
    }
    // The exit code is the first failure's.
    Err(anyhow::Error::from(first).context(format!(
        "{} of {count} jobs failed ({}); the first",
        names.len(),
        names.join(", ")
    )))
}

/// A run of jobs that may use a GPU, all the same one, lets CUDA see that GPU alone (see
/// [`super::see_only_gpu`]). Ranks see every GPU of their host: NCCL connects them through it.
fn see_only_the_jobs_gpu(jobs: &[Job], backend: Option<Backend>) {
    let mut devices = jobs
        .iter()
        .filter(|j| backend.unwrap_or(j.config.compute.backend) != Backend::Cpu)
        .map(|j| j.config.compute.device);
    if let Some(device) = devices.next() {
        if devices.all(|d| d == device) {
            super::see_only_gpu(device);
        }
    }
}

/// `--gpus`: start one rank per GPU of this machine, each running this command without `--gpus`.
fn launch_ranks(args: &RunArgs, jobs: &[Job], gpus: launcher::Gpus, cancel: &CancelToken) -> anyhow::Result<()> {
    refuse_for_ranks(args, jobs)?;
    let visible = match seisimage::gpu::runtime::listed_device_count() {
        Some(listed) => listed,
        None => seisimage::gpu::runtime::device_count().map_err(|e| Error::Backend(format!("--gpus: {e}")))?,
    };
    let ranks = launcher::rank_count(gpus, visible)?;
    let mut rest = Vec::new();
    let mut given = std::env::args_os().skip(1);
    while let Some(a) = given.next() {
        match a.to_str() {
            Some("--gpus") => {
                given.next();
            }
            Some(s) if s.starts_with("--gpus=") => {}
            _ => rest.push(a),
        }
    }
    Ok(launcher::launch(ranks, &rest, &jobs[0].config.output.dir, cancel)?)
}

/// What a run over several GPUs cannot do.
fn refuse_for_ranks(args: &RunArgs, jobs: &[Job]) -> Result<(), Error> {
    if jobs.len() != 1 {
        return Err(Error::Request("a run over several GPUs takes one job file".into()));
    }
    if args.shard.is_some() {
        return Err(Error::Request("--shard splits a job between separate runs: not with ranks or --gpus".into()));
    }
    if args.backend.unwrap_or(jobs[0].config.compute.backend) == Backend::Cpu {
        return Err(Error::Request(
            "a run over several ranks needs GPUs (and NCCL); on CPUs split the job with --shard I/N and reduce".into(),
        ));
    }
    Ok(())
}

/// This process is one rank of a run over several GPUs (a launcher said so): rank 0 runs the job and
/// writes its products, the others migrate their shares with it. A rank that fails tells the others.
fn run_rank(
    args: &RunArgs,
    jobs: &[Job],
    env: &ranks::RankEnv,
    progress: &dyn Progress,
    cancel: &CancelToken,
) -> anyhow::Result<()> {
    refuse_for_ranks(args, jobs)?;
    let job = &jobs[0];
    let result = if env.rank == 0 {
        run_jobs(jobs, Some(Backend::Cuda), &RunMode::Rank(env.clone()), progress, cancel, &|m: &Manifest| {
            tracing::info!(
                "done in {:.2} s over {} ranks (see {})",
                m.wall_seconds,
                env.world,
                m.config.output.dir.join(MANIFEST).display()
            );
            if let Some(note) = start_up::start_up_note(&m.stages) {
                tracing::info!("{note}");
            }
        })
        .and_then(|mut failed| failed.pop().map_or(Ok(()), |(_, e)| Err(e)))
    } else {
        seisimage::run::follow(job, env, progress, cancel)
    };
    if let Err(e) = &result {
        if !matches!(e, Error::Peer { .. }) {
            if let Ok(dir) = env.rendezvous_dir(&job.config.output.dir) {
                ranks::note_failure(&dir, env.rank, e);
            }
        }
    }
    Ok(result?)
}

/// Check a job as `run` would, without writing anything: the job, the files it names, its plan and
/// products, and the plan's memory against this machine's.
pub fn validate(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    // The memory report asks about compute.device alone, whatever the backend: CUDA need open no other.
    super::see_only_gpu(job.config.compute.device);
    check_files(&job)?;
    let prepared = prepare(job)?;
    // A signal that came while the job was prepared stops it here even if nothing polled it since: a
    // `validate` told to stop does not report success.
    CancelToken::process().check()?;
    super::println(&format!("{}: valid", args.job.display()))?;
    for line in prepared.describe() {
        super::println(&format!("  {line}"))?;
    }
    for line in existing_report(&prepared) {
        super::println(&format!("  {line}"))?;
    }
    for line in memory_report(&prepared) {
        super::println(&format!("  machine   {line}"))?;
    }
    let backend = format!("{:?}", prepared.job.config.compute.backend).to_lowercase();
    super::println(&format!("  backend   {backend}"))?;
    Ok(())
}

/// What `output.existing` would take out of the output folder if the job ran now, and what it would leave.
fn existing_report(prepared: &run::Prepared) -> Vec<String> {
    let existing = prepared.job.config.output.existing;
    let clearing = prepared.clearing();
    let mut lines = vec![format!("existing  {}", clearing.summary(existing))];
    lines.extend(clearing.warnings(existing).into_iter().map(|w| format!("warning   {w}")));
    lines
}

pub fn print_config(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    super::print(&job.to_toml())?;
    Ok(())
}
