//! `seisimage run`, `validate` and `print-config`: a job file from first check to manifest.

use seisimage::job::Job;
use seisimage::run::{execute_on, prepare, start_engine, EngineKey, Prepared, ReadyEngine};

use super::Reporting;
use crate::cli::{JobArgs, RunArgs};

pub fn run(args: &RunArgs, reporting: Reporting) -> anyhow::Result<()> {
    // Every job file is read and checked before the first job starts: a mistake in the fifth file of a
    // batch is reported at once, not after four migrations.
    let jobs = args.jobs.iter().map(|path| Job::load(path, &args.overrides)).collect::<Result<Vec<_>, _>>()?;
    for (i, a) in jobs.iter().enumerate() {
        if let Some(b) = jobs[..i].iter().find(|b| b.config.output.dir == a.config.output.dir) {
            return Err(seisimage::Error::Config {
                source_name: a.source.display().to_string(),
                location: seisimage::error::Location::File,
                message: format!(
                    "output.dir {} is also the output folder of {}: each job needs its own",
                    a.config.output.dir.display(),
                    b.source.display()
                ),
            }
            .into());
        }
    }
    let count = jobs.len();
    let progress = reporting.progress();
    let mut engine: Option<(EngineKey, ReadyEngine)> = None;
    let mut failed: Vec<(std::path::PathBuf, anyhow::Error)> = Vec::new();
    // Each job after the first is opened and planned on a thread of its own while the one before it
    // migrates: its file is mapped (and read from disk, if it is not cached) while the device works.
    let mut ahead: Option<std::thread::JoinHandle<seisimage::Result<Prepared>>> = None;
    for (i, job) in jobs.iter().enumerate() {
        let path = job.source.clone();
        if count > 1 {
            tracing::info!("job {} of {count}: {}", i + 1, path.display());
        }
        let backend = args.backend.unwrap_or(job.config.compute.backend);
        let key = EngineKey::of(&job, backend);
        // A job that needs other compute settings than the last one gets an engine of its own.
        let mut slot = match engine.take() {
            Some((k, ready)) if k == key => Some(ready),
            _ => None,
        };
        // The engine (CUDA start-up included) gets ready while the input is opened and the job planned.
        let starting = slot.is_none().then(|| start_engine(job, backend));
        let last = i + 1 == count;
        let prepared = match ahead.take() {
            Some(preparing) => preparing.join().unwrap_or_else(|_| {
                Err(seisimage::Error::Backend("preparing the job failed unexpectedly (a thread panicked)".into()))
            }),
            None => prepare(job.clone()),
        };
        let clock = (std::time::SystemTime::now(), std::time::Instant::now());
        let mut migrated = false;
        let outcome = (|| -> anyhow::Result<_> {
            let prepared = match prepared {
                Ok(p) => p,
                Err(e) => {
                    // An engine being set up for this job can still serve the next one.
                    if let (Some(s), false) = (starting, last) {
                        slot = s.ready().ok();
                    }
                    return Err(e.into());
                }
            };
            if let Some(s) = starting {
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
            let manifest = execute_on(&prepared, &mut slot, !last, clock, progress.as_ref())?;
            Ok((prepared, manifest))
        })();
        match outcome {
            Ok((prepared, manifest)) => {
                let out = &prepared.job.config.output.dir;
                tracing::info!(
                    "done in {:.2} s on {}: {} products, {:.1} MB, in {} (see {})",
                    manifest.wall_seconds,
                    manifest.backend.kind,
                    manifest.products.len(),
                    manifest.product_bytes as f64 / 1e6,
                    out.display(),
                    out.join(seisimage::run::MANIFEST).display()
                );
                engine = slot.map(|ready| (key, ready));
            }
            // A stop request ends the batch; any other failure ends only its job, and the engine too if
            // the job failed while migrating (which may have left it unusable).
            Err(e) if count == 1 || is_interrupted(&e) => return Err(e),
            Err(e) => {
                tracing::error!("{}: {}", path.display(), crate::message(&e));
                failed.push((path, e));
                if !migrated {
                    engine = slot.map(|ready| (key, ready));
                }
            }
        }
    }
    match failed.len() {
        0 => Ok(()),
        n => {
            let names: Vec<String> = failed.iter().map(|(p, _)| p.display().to_string()).collect();
            let (_, first) = failed.swap_remove(0);
            // The exit code is the first failure's.
            Err(first.context(format!("{n} of {count} jobs failed ({}); the first", names.join(", "))))
        }
    }
}

fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| matches!(c.downcast_ref::<seisimage::Error>(), Some(seisimage::Error::Interrupted(_))))
}

pub fn validate(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    let prepared = prepare(job)?;
    println!("{}: valid", args.job.display());
    for line in prepared.describe() {
        println!("  {line}");
    }
    match seisimage::gpu::probe() {
        Ok(rt) => println!("  backend   {:?}: GPU {} usable", prepared.job.config.compute.backend, rt.devices[0].name),
        Err(why) => {
            println!("  backend   {:?}: no GPU ({why}); auto runs on the CPU", prepared.job.config.compute.backend)
        }
    }
    Ok(())
}

pub fn print_config(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    print!("{}", job.to_toml());
    Ok(())
}
