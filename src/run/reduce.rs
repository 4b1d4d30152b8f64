//! `seisimage reduce JOB --shards N`: sum the partial products of a job's N shares (written by
//! `seisimage run JOB --shard I/N`, [`super::shard`]) in share order, and write the products and the
//! manifest as `seisimage run JOB` would have.
//!
//! Every share must be there and belong to the job (see [`super::partial`]); the sum is then handed to the
//! job's product writer as an engine would hand its products, so the files and the manifest are those of
//! any run, the manifest recording the shares besides (where each ran, its frequencies, bands and stages,
//! and the imbalance between them).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::partial::{self, Expect};
use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::bands::{Share, MAX_SHARES};
use crate::imaging::parts::sum_in_order;
use crate::imaging::{BackendChoice, Engine, Migration, ProductSink};
use crate::job::Job;
use crate::products::ProductSpec;
use crate::progress::Progress;
use crate::run::{execute_on, prepare, AfterMigration, Manifest, ReadyEngine, RunMode, Started};
use crate::stats::{Distribution, PartRecord};

/// Sum the `shards` shares of `job` found in `dir` (the job's output folder when `None`) and write the
/// products and the manifest.
pub fn reduce(
    job: &Job,
    shards: usize,
    dir: Option<&Path>,
    progress: &dyn Progress,
    cancel: &CancelToken,
) -> Result<Manifest> {
    let started = Started::now();
    if shards == 0 || shards > MAX_SHARES {
        return Err(Error::Request(format!("--shards must be 1 to {MAX_SHARES}, not {shards}")));
    }
    let dir: PathBuf = dir.map_or_else(|| job.config.output.dir.clone(), Path::to_path_buf);
    let share = |i| Share { index: i, count: shards };
    // Before the job is prepared, which for a 3-D velocity model takes a while.
    let missing: Vec<String> =
        (0..shards).map(share).filter(|s| !dir.join(partial::file_name(*s)).is_file()).map(|s| s.to_string()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(8).map(String::as_str).collect();
        return Err(Error::Request(format!(
            "{} of the {shards} shares have no partial products in {} ({}{}): run each with `seisimage run {} \
             --shard I/{shards}` first",
            missing.len(),
            dir.display(),
            shown.join(", "),
            if missing.len() > shown.len() { ", …" } else { "" },
            job.source.display()
        )));
    }
    let mut prepared = prepare(job.clone())?;
    prepared.also_reads = (0..shards).map(|i| dir.join(partial::file_name(share(i)))).collect();
    let job_id = partial::fingerprint(&prepared)?;
    // Every member of a velocity scan has its boxes, member after member.
    let members = prepared.migrations().len();
    let boxes: Vec<usize> = (0..members).flat_map(|_| prepared.request.boxes.iter().map(|b| b.len())).collect();
    let t = Instant::now();
    let mut sum: Option<Vec<Vec<f32>>> = None;
    let mut parts: Vec<PartRecord> = Vec::with_capacity(shards);
    progress.begin("summing the shares", shards as u64);
    let read = |i: usize| {
        let s = share(i);
        let f = prepared.plan.share_frequencies(s);
        let expect = Expect { job: &job_id, share: s, frequencies: [f.start, f.end], boxes: &boxes };
        partial::read(&dir.join(partial::file_name(s)), &expect)
    };
    // Reading a share (its checksum above all) is the work: several are read at once, as memory allows,
    // and added in share order, so the sum is the same however many are read together.
    let share_bytes = boxes.iter().sum::<usize>() as u64 * 4;
    let together = shares_read_together(share_bytes, crate::imaging::store::available_host_memory());
    for group in (0..shards).collect::<Vec<_>>().chunks(together) {
        cancel.check()?;
        let read: Vec<Result<_>> = group.par_iter().map(|&i| read(i)).collect();
        // The first failure in share order is the one reported.
        for share in read {
            let (header, values) = share?;
            sum = Some(match sum {
                None => values,
                Some(so_far) => sum_in_order(vec![so_far, values]),
            });
            parts.push(header.record);
            progress.advance(1);
        }
    }
    progress.finish();
    refuse_nonfinite(sum.as_deref().unwrap_or_default(), &prepared.products, &dir, shards)?;
    let read_seconds = t.elapsed();
    tracing::info!("{shards} shares read and summed in {:.2} s", read_seconds.as_secs_f64());
    let engine = Summed { products: sum, parts, read_seconds };
    let choice = BackendChoice { kind: "reduce", detail: format!("the sum of {shards} shards from {}", dir.display()) };
    let mut ctx = RunContext::new(progress, cancel.child());
    let ready = ReadyEngine::new(Box::new(engine), choice);
    let (manifest, _) = execute_on(&prepared, ready, &RunMode::Reduce, AfterMigration::Release, started, &mut ctx)?;
    Ok(manifest)
}

/// How many shares of `share_bytes` each to read at once: as many as a core each can read, up to 8, while
/// they take at most a quarter of the `available` memory.
fn shares_read_together(share_bytes: u64, available: Option<u64>) -> usize {
    let room = available.map_or(1, |a| a / 4 / share_bytes.max(1));
    (room.min(8) as usize).min(rayon::current_num_threads()).max(1)
}

/// Refuse sums that hold NaN or infinite values, naming the first product that does: a migration of
/// finite samples gives finite values, so a share was damaged or forged (its checksum is no key: whoever
/// can write the file can recompute it), and no product or manifest may vouch for such values. `sums[k]`
/// is the values of `products[k]`.
fn refuse_nonfinite(sums: &[Vec<f32>], products: &[ProductSpec], dir: &Path, shards: usize) -> Result<()> {
    let Some((k, values)) = sums.iter().enumerate().find(|(_, v)| v.iter().any(|x| !x.is_finite())) else {
        return Ok(());
    };
    let bad = values.iter().filter(|x| !x.is_finite()).count();
    let name = products.get(k).map_or_else(|| format!("box {}", k + 1), |p| p.stem.clone());
    let message = format!(
        "the sum of the {shards} shares holds {bad} NaN or infinite values in product {name}: a migration gives \
         finite values, so a share's partial products were damaged or forged; run the shares again"
    );
    Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::InvalidData, message)))
}

/// The summed shares, handed over as an engine hands its products.
struct Summed {
    products: Option<Vec<Vec<f32>>>,
    parts: Vec<PartRecord>,
    read_seconds: std::time::Duration,
}

impl Engine for Summed {
    fn name(&self) -> &str {
        "reduce"
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        let products = self.products.take().ok_or_else(|| Error::Internal("the shares were summed once".into()))?;
        let boxes = scan.first().map_or(0, |m| m.request.boxes.len());
        if products.len() != boxes * scan.len() || sinks.len() != scan.len() {
            return Err(Error::Internal("the shares' boxes are not the job's".into()));
        }
        let bytes = products.iter().map(|p| p.len() as u64 * 4).sum::<u64>() * self.parts.len() as u64;
        ctx.stats.add("read-shares", self.read_seconds, bytes);
        // Every share read the whole input: each counted the same non-finite samples.
        ctx.stats.nonfinite_samples = self.parts.iter().map(|p| p.nonfinite_samples).max().unwrap_or(0);
        ctx.stats.frequency_bands = self.parts.iter().map(|p| p.bands).sum();
        ctx.stats.distributed = Some(Distribution::new("shards", std::mem::take(&mut self.parts)));
        // The shares hold the migrated boxes: the attributes are those of the sum.
        let request = scan[0].request;
        for (k, values) in products.into_iter().enumerate() {
            sinks[k / boxes].complete(k % boxes, request.handed_over(k % boxes, values));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::shares_read_together;

    #[test]
    fn shares_are_read_together_as_memory_and_cores_allow() {
        let cores = rayon::current_num_threads();
        let gb = 1u64 << 30;
        assert_eq!(shares_read_together(gb / 8, Some(64 * gb)), cores.min(8));
        // A quarter of 8 GiB holds two shares of 1 GiB, and a share bigger than that is read alone.
        assert_eq!(shares_read_together(gb, Some(8 * gb)), cores.min(2));
        assert_eq!(shares_read_together(4 * gb, Some(8 * gb)), 1);
        assert_eq!(shares_read_together(gb, None), 1);
        assert_eq!(shares_read_together(0, Some(gb)), cores.min(8));
    }
}
