//! The benchmark's reference (the `bench` feature): the same device compute as [`GpuEngine`], reached the
//! plain way. The whole volume is read into ordinary (pageable) memory and uploaded in one synchronous copy
//! before any device work, and every product comes back into pageable memory once the migration is over
//! (see `run/naive.rs`). `seisimage bench` times it beside the engine to show what the engine's pipeline
//! saves; nothing else runs it.

use crate::engine::GpuEngine;
use crate::kernel_cache::KernelCache;
use crate::runtime::DeviceInfo;
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_imaging::{Engine, ImageRequest, Migration, Plan, ProductSink};

/// The naive way to the same products (see the module comment).
pub struct NaiveEngine {
    engine: GpuEngine,
}

impl NaiveEngine {
    /// Open `device` and load the kernels, as [`GpuEngine::new`] does.
    pub fn new(device: DeviceInfo, fast_math: bool, cache: &KernelCache) -> Result<Self> {
        let mut engine = GpuEngine::new(device, fast_math, cache)?;
        engine.settings.products_at_end = true;
        Ok(NaiveEngine { engine })
    }
}

impl Engine for NaiveEngine {
    fn name(&self) -> &str {
        "cuda, naive"
    }

    fn prepare(&mut self, plan: &Plan, request: &ImageRequest, members: usize) -> Result<()> {
        self.engine.prepare(plan, request, members)
    }

    fn release_last_run(&mut self) {
        self.engine.release_last_run();
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        let input = scan[0].input;
        let products = self.engine.with_run(scan, ctx, sinks, |run, _, _, ctx| run.execute_naive(input, scan, ctx))?;
        for (sink, images) in sinks.iter().zip(products) {
            for (i, image) in images.into_iter().enumerate() {
                sink.complete(i, image);
            }
        }
        Ok(())
    }
}
