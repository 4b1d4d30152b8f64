//! `seisimage run JOB --shard I/N`: migrate share I of N of a job's frequencies and write its partial
//! products ([`super::partial`]) instead of the products; `seisimage reduce` sums the shares.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::partial::{self, Header};
use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::bands::Share;
use crate::imaging::parts::part_record;
use crate::imaging::{Collected, ProductSink};
use crate::job::{Backend, Job};
use crate::progress::Progress;
use crate::run::{prepare, start_engine, RunMode};

/// Run share `share` of `job` on `backend` and write its partial products into `dir` (the job's output
/// folder when `None`). Returns the file written.
pub fn run_shard(
    job: &Job,
    backend: Backend,
    share: Share,
    dir: Option<&Path>,
    progress: &dyn Progress,
    cancel: &CancelToken,
) -> Result<PathBuf> {
    let dir: PathBuf = dir.map_or_else(|| job.config.output.dir.clone(), Path::to_path_buf);
    // Before any work: the folder must take the file.
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    // Other shares may be writing there too: only the temporary files of runs that died go.
    crate::io::output::remove_stale(&dir);
    let mut engine = start_engine(job, backend, &RunMode::Shard(share));
    let mut prepared = prepare(job.clone())?;
    let path = dir.join(partial::file_name(share));
    if let Some((what, input)) = prepared.replaced_input(&path) {
        return Err(Error::Request(format!(
            "{} would replace {what} {} (they are the same file); write the partial products elsewhere (--partials DIR)",
            path.display(),
            input.display()
        )));
    }
    let planned = prepared.plan.warnings.len();
    prepared.plan.restrict_to(share);
    // The members of a velocity scan migrate the same share.
    for member in &mut prepared.scan {
        member.plan.restrict_to(share);
    }
    // What the share changes (Stolt does not split, or no frequency is left to it) is a warning of this run
    // like the plan's own; an ordinary share is said once in the log.
    let added = prepared.plan.warnings[planned..].to_vec();
    for line in prepared.plan.describe().iter().filter(|l| l.starts_with("share ") && !added.contains(l)) {
        tracing::info!("{line}");
    }
    for warning in added {
        tracing::warn!("{warning}");
        prepared.warnings.push(warning);
    }
    let job_id = partial::fingerprint(&prepared)?;
    // A share holds the migrated boxes: `reduce` takes the attributes of their sum.
    prepared.request.attributes.clear();
    engine.plan_ready(&prepared);
    let mut engine = engine.ready()?;
    let mut ctx = RunContext::new(progress, cancel.child());
    engine.record_setup(&mut ctx.stats);
    let t = Instant::now();
    let migrations = prepared.migrations();
    let collected: Vec<Collected> = migrations.iter().map(|_| Collected::new(&prepared.request)).collect();
    let sinks: Vec<&dyn ProductSink> = collected.iter().map(|c| c as &dyn ProductSink).collect();
    let migrated = engine.migrate_scan(&migrations, &mut ctx, &sinks);
    let seconds = t.elapsed().as_secs_f64();
    let used = format!("{}: {}", engine.choice.kind, engine.choice.detail);
    let release = engine.release();
    let images = |()| -> Result<Vec<Vec<f32>>> {
        let mut boxes = Vec::new();
        for c in collected {
            boxes.extend(c.into_images()?);
        }
        Ok(boxes)
    };
    let written = migrated.and_then(images).and_then(|boxes| {
        ctx.check()?;
        let plan = &prepared.plan;
        let record = part_record(share.index + 1, plan, &used, seconds, &ctx.stats);
        let header = Header {
            job: job_id,
            shard: share.index + 1,
            shards: share.count,
            frequencies: [plan.frequencies.start, plan.frequencies.end],
            boxes: Vec::new(),
            values_sha256: String::new(),
            record,
        };
        partial::write(&dir, share, header, &boxes)
    });
    release.wait()?;
    let path = written?;
    tracing::info!("share {share} done in {seconds:.2} s: {}", path.display());
    Ok(path)
}
