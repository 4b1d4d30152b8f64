//! Executing one prepared job on a ready engine, from the output folder's checks to the manifest.
//!
//! The run opens a rayon scope around the migration and the writing: the engine hands each product to a
//! [`ProductWriter`] as soon as it is finished, and the writer draws and writes it on the pool while the
//! engine goes on with the deeper levels. Once the migration is over the run releases the engine (unless
//! it is kept for another job) on a thread of its own, so that the last products are written while a GPU
//! engine is torn down.

use std::path::Path;

use crate::context::RunContext;
use crate::error::{Error, Result};
use crate::imaging::{BackendChoice, ProductSink};
use crate::job::Job;
use crate::products::{self, ProductWriter, Written};
use crate::scan::Panels;

use super::engine::{EngineStart, ReadyEngine};
use super::manifest::{Manifest, Started, MANIFEST};
use super::Prepared;

/// What becomes of the engine once the job has migrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterMigration {
    /// Kept for another job: only what it holds for this run is freed.
    Keep,
    /// Released on a thread of its own while the products are written.
    Release,
}

/// Run a prepared job to its manifest on the engine being set up, which is released as the products are
/// written. See [`execute_on`].
pub fn execute(p: &Prepared, mut engine: EngineStart, ctx: &mut RunContext) -> Result<Manifest> {
    let started = Started::now();
    engine.plan_ready(p);
    let engine = engine.ready()?;
    execute_on(p, engine, AfterMigration::Release, started, ctx).map(|(manifest, _)| manifest)
}

/// Run a prepared job to its manifest on `engine`, which is handed back after the job when `after` keeps
/// it. `started` is when the job started.
///
/// Everything that can fail without the data fails first: the output folder must take the products; a
/// manifest from an earlier run goes before the migration starts, and the new one is written after the
/// last product, so a folder with a manifest holds every product it lists.
pub fn execute_on(
    p: &Prepared,
    mut engine: ReadyEngine,
    after: AfterMigration,
    started: Started,
    ctx: &mut RunContext,
) -> Result<(Manifest, Option<ReadyEngine>)> {
    let out_dir = &p.job.config.output.dir;
    check_output_dir(&p.job, products::estimated_bytes(&p.products, &p.job.config.output.render))?;
    // A manifest left from an earlier run would vouch for products this run is about to replace.
    match std::fs::remove_file(out_dir.join(MANIFEST)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(out_dir.join(MANIFEST), e)),
        _ => {}
    }

    let choice = engine.choice.clone();
    tracing::info!("migrating with {} on {}: {}", p.plan.method.name(), choice.kind, choice.detail);
    engine.record_setup(&mut ctx.stats);
    let target = p.product_target(ctx.cancel.clone());
    let migrations = p.migrations();
    let (written, mut kept, release) = rayon::in_place_scope(|scope| {
        let writer = ProductWriter::start(scope, &target, &p.products);
        // One sink per migration (a velocity scan has several), keeping what the scan's panels need.
        let panels = Panels::new(&p.products, migrations.len());
        let sinks = panels.sinks(&writer);
        let sinks: Vec<&dyn ProductSink> = sinks.iter().map(|s| s as &dyn ProductSink).collect();
        let migrated = engine.migrate_scan(&migrations, ctx, &sinks);
        let (kept, release) = match after {
            AfterMigration::Keep => (Some(engine), None),
            AfterMigration::Release => (None, Some(engine.release())),
        };
        // A product that is not handed over (the migration failed, or was stopped) is given up, its files
        // removed, as the scope ends.
        let written =
            migrated.and_then(|()| writer.finish(ctx.progress)).and_then(|written| panels.finish(written, &target));
        (written, kept, release)
    });
    let finished = written.and_then(|written| complete(p, written, choice, started, ctx));
    // Wait for the engine's release, error or not, so that a process never exits while the driver is
    // tearing a context down on another thread.
    if let Some(release) = release {
        release.wait()?;
    }
    if let Some(engine) = kept.as_mut() {
        engine.release_last_run();
    }
    Ok((finished?, kept))
}

/// Put the written products in place, and write the manifest that vouches for them.
fn complete(
    p: &Prepared,
    written: Written,
    choice: BackendChoice,
    started: Started,
    ctx: &mut RunContext,
) -> Result<Manifest> {
    if ctx.stats.nonfinite_samples > 0 {
        tracing::warn!(
            "{} NaN or infinite input samples were set to zero (input.nonfinite = \"refuse\" stops at the first)",
            ctx.stats.nonfinite_samples
        );
    }
    ctx.check()?;
    let (records, replaced) = products::commit_products(written.products)?;
    ctx.stats.add("write", written.after_migration, products::bytes_of(&records));
    ctx.check()?;
    let manifest = Manifest::new(p, choice, started, std::mem::take(&mut ctx.stats), records).write();
    // An earlier run's files that the products replaced go only now, once the run is complete.
    drop(replaced);
    manifest
}

/// Fail now, not after the migration, when the output folder cannot take the products: it must be (or
/// become) a folder this process can write in, on a file system with room for `needed_bytes` of products
/// and `output.keep_free_gb` besides.
pub fn check_output_dir(job: &Job, needed_bytes: u64) -> Result<()> {
    let dir = &job.config.output.dir;
    writable_dir(dir).map_err(|e| job.error_at("output.dir", format!("cannot write in {}: {e}", dir.display())))?;
    let keep = (job.config.output.keep_free_gb * 1e9) as u64;
    match free_bytes(dir) {
        Some(free) => check_free_space(dir, free, needed_bytes, keep),
        None => Ok(()),
    }
}

/// Create `dir` if it is missing, and prove that a file can be created in it.
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "it is a file, not a folder"));
    }
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".seisimage-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Refuse when `free_bytes` on the output file system cannot hold `needed_bytes` of products and still keep
/// `keep_bytes` free. An environment problem, not a job error: exit code 1.
pub fn check_free_space(dir: &Path, free_bytes: u64, needed_bytes: u64, keep_bytes: u64) -> Result<()> {
    if free_bytes >= needed_bytes.saturating_add(keep_bytes) {
        return Ok(());
    }
    let keep = match keep_bytes {
        0 => String::new(),
        k => format!(", and output.keep_free_gb asks to keep {} free", human_bytes(k)),
    };
    let message = format!(
        "the file system has {} free, the products need about {}{keep}",
        human_bytes(free_bytes),
        human_bytes(needed_bytes)
    );
    Err(Error::io(dir, std::io::Error::new(std::io::ErrorKind::StorageFull, message)))
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.2} MB", b as f64 / 1e6),
        b => format!("{b} bytes"),
    }
}

/// Free bytes for an unprivileged writer on the file system of `dir`, if the system says: `statvfs`
/// through rustix, which the build already holds (clap's terminal support uses it) and which wraps the
/// call safely.
fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}
