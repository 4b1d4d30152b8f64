//! The CPU engine: the plan's steps with rustfft / realfft, in parallel with rayon, in a thread pool of its
//! own (so a benchmark or a caller can choose the number of threads).

use std::time::Instant;

use super::image::ImageAssembly;
use super::request::ImageRequest;
use super::spectrum::{ingest, Fft2};
use super::{phase_shift, split_step, stolt, Engine, Method, Plan};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::stats::RunStats;
use crate::velocity::VelocityModel;
use crate::volume::VolumeReader;

pub struct CpuEngine {
    pool: rayon::ThreadPool,
}

impl CpuEngine {
    /// An engine running on `threads` threads (all cores when `None`).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .thread_name(|i| format!("seisimage-cpu-{i}"))
            .build()
            .map_err(|e| Error::Backend(format!("cannot start the CPU thread pool: {e}")))?;
        Ok(CpuEngine { pool })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }

    fn migrate(
        &mut self,
        src: &dyn VolumeReader,
        plan: &Plan,
        velocity: &VelocityModel,
        request: &ImageRequest,
        progress: &dyn Progress,
        stats: &mut RunStats,
    ) -> Result<Vec<Vec<f32>>> {
        plan.check(src.geometry(), request)?;
        self.pool.install(|| {
            let mut spectrum = ingest(src, plan, progress, stats)?;
            let fft2 = Fft2::new([plan.padded[0], plan.padded[1]]);
            let mut asm = ImageAssembly::new(request, plan);
            let t = Instant::now();
            match plan.method {
                Method::PhaseShift => phase_shift::migrate(&mut spectrum, plan, &fft2, &mut asm, progress)?,
                Method::Stolt => stolt::migrate(&spectrum, plan, &fft2, &mut asm, progress)?,
                Method::SplitStep => split_step::migrate(&mut spectrum, plan, velocity, &fft2, &mut asm, progress)?,
            }
            stats.add("migrate", t.elapsed(), (request.n_values() * 4) as u64);
            Ok(asm.finish())
        })
    }
}
