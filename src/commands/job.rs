//! `seisimage run`, `validate` and `print-config`: a job file from first check to manifest.

use seisimage::job::Job;
use seisimage::progress;
use seisimage::run::{execute, prepare};

use crate::cli::{JobArgs, RunArgs};

pub fn run(args: &RunArgs, quiet: bool) -> anyhow::Result<()> {
    let job = Job::load(&args.job.job, &args.job.overrides)?;
    let backend = args.backend.unwrap_or(job.config.compute.backend);
    let prepared = prepare(job)?;
    for line in prepared.describe() {
        tracing::debug!("{line}");
    }
    let progress = progress::for_stderr(quiet);
    let manifest = execute(&prepared, backend, progress.as_ref())?;
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
    Ok(())
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
