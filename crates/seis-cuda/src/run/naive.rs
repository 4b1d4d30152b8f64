//! The naive path, only for the benchmark's comparison (the `bench` feature's `NaiveEngine`): the whole
//! volume read into pageable memory and uploaded in one synchronous copy before any device work, then
//! transformed chunk by chunk as the ingest does; after the same migration ([`Run::migrate_bands`]), every
//! product pulled back into pageable memory.

use std::time::Instant;

use super::ingest::Packed;
use super::state::Run;
use crate::device::{self, copy_2d, Source, Target};
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::stats::RunStats;
use seis_core::volume::{VolumeReader, WriteMode};
use seis_imaging::{window, Migration};

impl Run<'_> {
    /// The naive run of `scan`: its products, member after member, each in the request's order.
    pub fn execute_naive(
        &self,
        src: &dyn VolumeReader,
        scan: &[Migration],
        ctx: &mut RunContext,
    ) -> Result<Vec<Vec<Vec<f32>>>> {
        let t = Instant::now();
        ctx.stats.frequency_bands = self.buffers.bands.ranges.len();
        // The ingest fills only the data part of each plane; the padding must be zero.
        self.buffers.spectrum.zero_async(&self.dev.compute)?;
        self.ingest_naive(src, ctx)?;
        self.migrate_bands(scan, ctx, None, false, false)?;
        self.dev.sync(&self.dev.compute)?;
        ctx.stats.add("ingest+compute", t.elapsed(), 0);
        self.timer.collect(&mut ctx.stats)?;
        self.download_naive(&mut ctx.stats)
    }

    /// The naive ingest: read everything, window everything, one pageable upload, then transform.
    fn ingest_naive(&self, src: &dyn VolumeReader, ctx: &mut RunContext) -> Result<()> {
        let dev = self.dev;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let wall = Instant::now();
        let t = Instant::now();
        let mut host = vec![0.0f32; ni * nx * nt];
        let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
        window::read_conditioned(src, 0..ni, &mut host, &conditioner, WriteMode::Cached)?;
        ctx.stats.nonfinite_samples += conditioner.check(src)?;
        ctx.stats.add("read", t.elapsed(), (host.len() * 4) as u64);
        let raw = dev.gpu.alloc::<f32>(host.len())?;
        let t = Instant::now();
        device::upload_pageable(&raw, &host)?;
        let bytes = (host.len() * 4) as u64;
        ctx.stats.add("h2d", t.elapsed(), bytes);
        ctx.stats.host_to_device_bytes += bytes;
        drop(host);
        let band = plan.frequencies.clone();
        ctx.progress.begin("transform", ni as u64);
        for il0 in (0..ni).step_by(plan.ingest_inlines) {
            let il = il0..(il0 + plan.ingest_inlines).min(ni);
            let traces = il.len() * nx;
            // SAFETY: `raw` holds the whole volume; the landing slot holds chunk_traces rows of pt floats.
            unsafe {
                let from = Source::Device(raw.ptr_at(il0 * nx * nt));
                copy_2d(
                    Target::Device(self.buffers.landing[0].ptr()),
                    pt * 4,
                    from,
                    nt * 4,
                    nt * 4,
                    traces,
                    &dev.compute,
                )?;
            }
            self.timed("time-fft", || {
                // SAFETY: as in `ingest`.
                unsafe { self.buffers.ffts.r2c.exec(self.buffers.landing[0].ptr(), self.buffers.half[0].ptr(), true)? };
                let to = Packed { ptr: self.buffers.spectrum.ptr(), first_il: il0, rows: plan.padded[0] };
                self.band_transpose(0, traces, &band, to, plan.padded[1])
            })?;
            ctx.progress.advance(il.len() as u64);
        }
        dev.sync(&dev.compute)?;
        ctx.progress.finish();
        ctx.stats.add("ingest", wall.elapsed(), bytes);
        Ok(())
    }

    /// The naive download: every product of every member into pageable memory, one synchronous copy each.
    fn download_naive(&self, stats: &mut RunStats) -> Result<Vec<Vec<Vec<f32>>>> {
        let t = Instant::now();
        let mut out = Vec::with_capacity(self.handover.sinks.len());
        let mut bytes = 0u64;
        for member in 0..self.handover.sinks.len() {
            let mut images = Vec::new();
            for p in self.buffers.member_products(member) {
                let mut host = vec![0.0f32; p.len()];
                device::download_pageable(&mut host, p)?;
                bytes += (p.len() * 4) as u64;
                images.push(host);
            }
            out.push(images);
        }
        stats.add("d2h", t.elapsed(), bytes);
        stats.device_to_host_bytes += bytes;
        Ok(out)
    }
}
