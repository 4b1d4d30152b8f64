//! `seisimage reduce`: the products and manifest of a job from the partial products of its shares.

use seisimage::job::Job;
use seisimage::run::MANIFEST;

use super::Reporting;
use crate::cli::ReduceArgs;

pub fn run(args: &ReduceArgs, reporting: Reporting) -> anyhow::Result<()> {
    let job = Job::load(&args.job, &args.overrides)?;
    let progress = reporting.progress();
    let cancel = seisimage::cancel::CancelToken::process();
    seisimage::run::leave_engine_to_exit();
    let manifest =
        seisimage::run::reduce::reduce(&job, args.shards, args.partials.as_deref(), progress.as_ref(), cancel)?;
    let out = &manifest.config.output.dir;
    if args.remove_partials {
        let dir = args.partials.clone().unwrap_or_else(|| out.clone());
        let removed =
            seisimage::run::partial::remove_all(&dir, args.shards).map_err(|e| seisimage::Error::io(&dir, e))?;
        tracing::info!("removed {removed} partial-products file(s) from {}", dir.display());
    }
    tracing::info!(
        "done in {:.2} s: {} shards summed, {}, {:.1} MB, in {} (see {})",
        manifest.wall_seconds,
        args.shards,
        seisimage::run::count(manifest.requested_products(), "product"),
        manifest.product_bytes as f64 / 1e6,
        out.display(),
        out.join(MANIFEST).display()
    );
    Ok(())
}
