//! One migration on the device, step for step the CPU engine's (src/imaging), on the same plan and layout.
//!
//! The files follow the data. [`buffers`] plans the device memory of a run and makes its buffers and FFT
//! plans; [`state`] holds a run's state and the steps every method shares. [`ingest`] reads each chunk of
//! inlines on the host straight into one of a few pinned staging buffers, copies it to the device by a
//! pitched copy that lands every trace in a row padded to the FFT length (copy stream), and transforms it
//! there — R2C along the contiguous traces, then the frequency band moved into the ω-major spectrum
//! (compute stream) — while the host reads the next chunk. This file takes each band's spectrum into the
//! wavenumber domain and hands it to the method ([`phase_shift`], [`stolt`], [`split_step`]), whose imaged
//! levels are cut into the requested boxes ([`Run::gather`]); only those boxes come back, each as soon as
//! it is finished ([`handover`]). [`naive`] is the plain way the benchmark compares with.
//!
//! A velocity scan ([`scan`]) ingests once and runs each of its migrations from a copy of the spectrum.
//!
//! The modules import downwards only: `buffers`, then `handover`, then `state`, then the steps, then this
//! file, which the engine calls.
//!
//! When the spectrum does not fit (see [`super::memory`]), the frequencies are taken in bands: each band is
//! ingested (the input is read and crosses the bus once per band), migrated and imaged on its own, and the
//! image — phase shift's k-domain images of every level, or the requested boxes — stays resident and adds
//! up the bands, since the imaging condition is a sum over frequency.

mod buffers;
mod handover;
mod ingest;
mod naive;
mod phase_shift;
mod scan;
mod split_step;
mod state;
mod stolt;

use std::time::Instant;

use crate::context::RunContext;
use crate::error::Result;
use crate::gpu::device::PinnedBuffer;
use crate::imaging::{ImageRequest, Method, Plan};
use crate::stats::Stages;
use crate::velocity::VelocityModel;
use crate::volume::VolumeReader;

pub use buffers::{RunBuffers, RunSettings, RunShape, RING};
pub use state::Run;

impl RunShape {
    /// The shape of a run of `plan` and `request`.
    pub fn of(plan: &Plan, request: &ImageRequest, settings: RunSettings) -> Self {
        let launch_sizes = match plan.method {
            Method::PhaseShift => phase_shift::launches(plan).iter().map(|b| b.slot_levels.len()).collect(),
            _ => Vec::new(),
        };
        RunShape::new(plan, request, settings, launch_sizes)
    }
}

impl Run<'_> {
    /// Ingest, migrate and image every frequency band, then hand the products over.
    pub fn execute(
        &self,
        src: &dyn VolumeReader,
        velocity: &VelocityModel,
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
    ) -> Result<()> {
        let dev = self.dev;
        let t = Instant::now();
        let count = self.buffers.bands.ranges.len();
        ctx.stats.frequency_bands = count;
        for (b, band) in self.buffers.bands.ranges.iter().enumerate() {
            if count > 1 {
                tracing::info!("frequency band {} of {count}: {} frequencies", b + 1, band.len());
            }
            self.handover.last_band.set(b + 1 == count);
            // Ingest fills only the data part of each plane; the padding must be zero (for the next band too,
            // after this one's transforms have filled it).
            self.buffers.spectrum.zero_async(&dev.compute)?;
            if self.naive() {
                self.ingest_naive(src, ctx)?;
            } else {
                self.ingest(src, band, ctx, staging)?;
                // Not earlier, where it would take a core from the ingest.
                self.handover.make_host_memory(&self.buffers);
            }
            self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), band.len(), true))?;
            match self.plan.method {
                Method::PhaseShift => self.phase_shift(band, ctx)?,
                Method::Stolt => self.stolt(ctx)?,
                Method::SplitStep => self.split_step(band, velocity, ctx)?,
            }
        }
        if self.plan.method == Method::PhaseShift && self.buffers.bands.banded() {
            self.image_all_levels()?;
        }
        dev.sync(&dev.compute)?;
        ctx.stats.add("ingest+compute", t.elapsed(), 0);
        let mut steps = Stages::default();
        self.timer.collect(&mut ctx.stats)?;
        steps.lap("timers");
        if self.naive() {
            for (i, image) in self.download_naive(&mut ctx.stats)?.into_iter().enumerate() {
                self.handover.sink.complete(i, image);
            }
        } else {
            self.handover.hand_over_the_rest(&self.buffers, &mut ctx.stats)?;
        }
        steps.lap("download");
        steps.log_trace("after the migration");
        Ok(())
    }
}
