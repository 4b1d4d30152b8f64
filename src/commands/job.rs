//! `seisimage run`, `validate` and `print-config`: a job file from first check to manifest.

use seisimage::job::Job;
use seisimage::run::{prepare, run_jobs, Manifest, MANIFEST};

use super::Reporting;
use crate::cli::{JobArgs, RunArgs};

pub fn run(args: &RunArgs, reporting: Reporting) -> anyhow::Result<()> {
    // Every job file is read and checked before the first job starts: a mistake in the fifth file of a
    // batch is reported at once, not after four migrations.
    let jobs = args.jobs.iter().map(|path| Job::load(path, &args.overrides)).collect::<Result<Vec<_>, _>>()?;
    let progress = reporting.progress();
    let count = jobs.len();
    let done = |manifest: &Manifest| {
        let out = &manifest.config.output.dir;
        tracing::info!(
            "done in {:.2} s on {}: {} products, {:.1} MB, in {} (see {})",
            manifest.wall_seconds,
            manifest.backend.kind,
            manifest.products.len(),
            manifest.product_bytes as f64 / 1e6,
            out.display(),
            out.join(MANIFEST).display()
        );
    };
    let mut failed =
        run_jobs(&jobs, args.backend, progress.as_ref(), seisimage::cancel::CancelToken::process(), &done)?;
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

pub fn validate(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    let prepared = prepare(job)?;
    super::println(&format!("{}: valid", args.job.display()))?;
    for line in prepared.describe() {
        super::println(&format!("  {line}"))?;
    }
    let backend = prepared.job.config.compute.backend;
    match seisimage::gpu::probe() {
        Ok(rt) => super::println(&format!("  backend   {backend:?}: GPU {} usable", rt.devices[0].name))?,
        Err(why) => super::println(&format!("  backend   {backend:?}: no GPU ({why}); auto runs on the CPU"))?,
    }
    Ok(())
}

pub fn print_config(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    super::print(&job.to_toml())?;
    Ok(())
}
