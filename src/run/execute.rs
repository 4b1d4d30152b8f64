//! Executing one prepared job on a ready engine, from the output folder's checks to the manifest.
//!
//! The run opens a rayon scope around the migration and the writing: the engine hands each product to a
//! [`ProductWriter`] as soon as it is finished, and the writer draws and writes it on the pool while the
//! engine goes on with the deeper levels. Once the migration is over the run releases the engine (unless
//! it is kept for another job) on a thread of its own, so that the last products are written while a GPU
//! engine is torn down.

use crate::context::RunContext;
use crate::error::Result;
use crate::imaging::{BackendChoice, ProductSink};
use crate::products::{self, ProductWriter, Written};
use crate::scan::Panels;
use crate::scan_focus::ScanFocus;

use super::engine::{EngineStart, ReadyEngine};
use super::folder::OutputFolder;
use super::manifest::{Manifest, Started};
use super::{Prepared, RunMode};

/// What becomes of the engine once the job has migrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterMigration {
    /// Kept for another job: only what it holds for this run is freed.
    Keep,
    /// Released on a thread of its own while the products are written.
    Release,
}

/// Run a prepared job to its manifest on the engine being set up, which is released as the products are
/// written; the process runs in `mode`. See [`execute_on`].
pub fn execute(p: &Prepared, mut engine: EngineStart, mode: &RunMode, ctx: &mut RunContext) -> Result<Manifest> {
    let started = Started::now();
    engine.plan_ready(p);
    let engine = engine.ready()?;
    execute_on(p, engine, mode, AfterMigration::Release, started, ctx).map(|(manifest, _)| manifest)
}

/// Run a prepared job to its manifest on `engine`, which is handed back after the job when `after` keeps
/// it. `started` is when the job started; the process runs in `mode`.
///
/// Everything that can fail without the data fails first: the output folder must take the products, and
/// is locked for this run (see [`OutputFolder`]); a manifest from an earlier run goes before the migration
/// starts, and the new one is written after the last product, so a folder with a manifest holds every
/// product it lists. The job's warnings are logged as it starts and recorded in its manifest.
pub fn execute_on(
    p: &Prepared,
    mut engine: ReadyEngine,
    mode: &RunMode,
    after: AfterMigration,
    started: Started,
    ctx: &mut RunContext,
) -> Result<(Manifest, Option<ReadyEngine>)> {
    let mut warnings = Warnings::default();
    for w in &p.warnings {
        warnings.add(w.clone());
    }
    let render = &p.job.config.output.render;
    let estimate = products::estimated_bytes(&p.written_products(), render)
        + crate::scan::panel_bytes(&p.products, p.migrations().len(), render);
    let mut folder_warnings = Vec::new();
    let folder =
        OutputFolder::prepare(&p.job, mode, &p.written_products(), &p.inputs(), estimate, &mut folder_warnings);
    folder_warnings.into_iter().for_each(|w| warnings.add(w));
    let folder = folder?;

    let choice = engine.choice.clone();
    tracing::info!("migrating with {} on {}: {}", p.plan.method.name(), choice.kind, engine.summary);
    engine.record_setup(&mut ctx.stats);
    let mut target = p.product_target(ctx.cancel.clone());
    target.report.warnings = warnings.0.clone();
    let migrations = p.migrations();
    let (written, mut kept, release) = rayon::in_place_scope(|scope| {
        let writer = ProductWriter::start(scope, &target, &p.products);
        // One sink per migration (a velocity scan has several), keeping what the scan's panels need.
        let panels = Panels::new(&p.products, migrations.len(), &p.image);
        let migrated = {
            let sinks = panels.sinks(&writer);
            let sinks: Vec<&dyn ProductSink> = sinks.iter().map(|s| s as &dyn ProductSink).collect();
            engine.migrate_scan(&migrations, ctx, &sinks)
        };
        let (kept, release) = match after {
            AfterMigration::Keep => (Some(engine), None),
            AfterMigration::Release => (None, Some(engine.release())),
        };
        // A product that is not handed over (the migration failed, or was stopped) is given up, its files
        // removed, as the scope ends.
        let focus = panels.focus();
        let facts = focus.as_ref().map(|f| f.page_facts()).unwrap_or_default();
        let written = migrated.and_then(|()| {
            let mut more = panels.pictures(&target)?;
            more.extend(products::write_velocity_products(&target, &p.velocity_products, |m| p.model_of(m))?);
            writer.finish(ctx.progress, more, facts)
        });
        (written.map(|w| (w, focus)), kept, release)
    });
    // The products are still under their temporary names, in the folder locked for the run: they take
    // their names only if the job's output folder is still that folder.
    let finished = written
        .and_then(|written| folder.check_in_place().map(|()| written))
        .and_then(|(written, focus)| complete(p, written, focus, choice, started, ctx, warnings));
    // The folder stays locked until the manifest is written (or the run failed).
    drop(folder);
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

/// The warnings of a run: each logged once, as it is found, and kept for the manifest.
#[derive(Default)]
struct Warnings(Vec<String>);

impl Warnings {
    fn add(&mut self, warning: String) {
        tracing::warn!("{warning}");
        self.0.push(warning);
    }
}

/// Put the written products in place, and write the manifest that vouches for them.
fn complete(
    p: &Prepared,
    written: Written,
    focus: Option<ScanFocus>,
    choice: BackendChoice,
    started: Started,
    ctx: &mut RunContext,
    mut warnings: Warnings,
) -> Result<Manifest> {
    if ctx.stats.nonfinite_samples > 0 {
        warnings.add(format!(
            "input.nonfinite: {} NaN, infinite or out-of-range input samples were set to zero (input.nonfinite = \"refuse\" stops at \
             the first)",
            ctx.stats.nonfinite_samples
        ));
    }
    ctx.check()?;
    let (records, replaced) = products::commit_products(written.products)?;
    ctx.stats.add("write", written.after_migration, products::bytes_of(&records));
    ctx.check()?;
    let mut manifest = Manifest::new(p, choice, started, std::mem::take(&mut ctx.stats), records, warnings.0);
    manifest.scan_focus = focus;
    let manifest = manifest.write();
    // An earlier run's files that the products replaced go only now, once the run is complete.
    drop(replaced);
    manifest
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use crate::cancel::CancelToken;
    use crate::imaging::ProductSink;
    use crate::job::Job;
    use crate::products::ProductWriter;

    /// The pictures of a clip group are drawn as soon as the last of them comes, while other products are
    /// still to come: the demo's two depth slices share a clip, and are drawn before the inlines are handed
    /// over.
    #[test]
    fn a_clip_group_is_drawn_once_its_last_picture_comes() {
        let out = tempfile::tempdir().unwrap();
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/demo.toml");
        let overrides = [
            format!("output.dir = {:?}", out.path()),
            "output.inlines = [118, 122]".into(),
            "output.depth_slices = [30.0, 60.0]".into(),
        ];
        let p = super::super::prepare(Job::load(&demo, &overrides).unwrap()).unwrap();
        let target = p.product_target(CancelToken::new());
        let specs = &p.products;
        let index = |stem: &str| specs.iter().position(|s| s.stem == stem).unwrap_or_else(|| panic!("{stem}"));
        let values = |i: usize| (0..specs[i].output_region().len()).map(|k| (k as f32 * 0.37).sin()).collect();
        let pictures = |prefix: &str| {
            let names = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name());
            names.filter(|n| n.to_string_lossy().starts_with(prefix) && n.to_string_lossy().contains(".png")).count()
        };
        let written = rayon::in_place_scope(|scope| {
            let writer = ProductWriter::start(scope, &target, specs);
            for stem in ["depth_30m", "depth_60m"] {
                writer.complete(index(stem), values(index(stem)));
            }
            let t = Instant::now();
            while pictures(".depth_") < 2 && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert_eq!(pictures(".depth_"), 2, "the depth slices are drawn without waiting for the other products");
            assert_eq!(pictures(".inline_"), 0);
            for (i, _) in specs.iter().enumerate().filter(|(_, s)| !s.stem.starts_with("depth_")) {
                writer.complete(i, values(i));
            }
            writer.finish(&crate::progress::Silent, Vec::new(), Vec::new())
        })
        .unwrap();
        assert_eq!(pictures(".inline_"), 2, "the inlines are drawn once both came");
        assert!(written.products.len() >= specs.len());
    }
}
