//! `seisimage run`, `validate` and `print-config`: a job file from first check to manifest.

use seisimage::job::Job;
use seisimage::run::{self, check_files, memory_report, prepare, run_jobs, Manifest, MANIFEST};

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
            "done in {:.2} s on {}: {}, {:.1} MB, in {} (see {})",
            manifest.wall_seconds,
            manifest.backend.kind,
            run::count(manifest.products.len(), "product"),
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

/// Check a job as `run` would, without writing anything: the job, the files it names, its plan and
/// products, and the plan's memory against this machine's.
pub fn validate(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    check_files(&job)?;
    let prepared = prepare(job)?;
    println!("{}: valid", args.job.display());
    for line in prepared.describe() {
        println!("  {line}");
    }
    for line in memory_report(&prepared) {
        println!("  machine   {line}");
    }
    let backend = format!("{:?}", prepared.job.config.compute.backend).to_lowercase();
    println!("  backend   {backend}");
    Ok(())
}

pub fn print_config(args: &JobArgs) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    print!("{}", job.to_toml());
    Ok(())
}
