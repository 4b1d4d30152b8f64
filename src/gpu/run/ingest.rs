//! The ingest: each chunk of inlines is read and windowed on the host straight into a pinned staging
//! buffer, copied to the device by a pitched copy that lands every trace in a row padded to the time-FFT
//! length (copy stream), transformed along the traces, and its band of frequencies moved into the ω-major
//! spectrum (compute stream), while the host reads the next chunk into the next buffer of the ring.

use std::ops::Range;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, LaunchConfig};

use super::buffers::RING;
use super::state::Run;
use crate::context::RunContext;
use crate::error::Result;
use crate::gpu::device::{check, copy_2d, PinnedBuffer, Source};
use crate::gpu::launch::Arg;
use crate::gpu::prelude::BAND_TILE;
use crate::gpu::timer::DeviceTimer;
use crate::volume::{VolumeReader, WriteMode};
use crate::window;

impl Run<'_> {
    /// Read, window, upload and transform the input chunk by chunk, overlapping the three, keeping the
    /// frequencies of `band`.
    pub(super) fn ingest(
        &self,
        src: &dyn VolumeReader,
        band: &Range<usize>,
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
    ) -> Result<()> {
        let dev = self.dev;
        let plan = self.plan;
        let [ni, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let copied: Vec<CudaEvent> = (0..RING).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let transformed: Vec<CudaEvent> = (0..RING).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let chunks = plan.ingest_chunks();
        // The copies (copy stream) and the transforms (compute stream), summed into the stages at the end.
        let timer = DeviceTimer::new(&dev.gpu);
        let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
        let (mut read_s, mut bytes) = (0.0, 0u64);
        let wall = Instant::now();
        ctx.progress.begin("read and upload", ni as u64);
        for (c, il) in chunks.iter().cloned().enumerate() {
            ctx.check()?;
            let slot = c % RING;
            let il0 = il.start;
            let traces = il.len() * nx;
            if c >= RING {
                // The copy out of this staging buffer (chunk c − RING) must be over before we refill it.
                check("waiting for a staging buffer", copied[slot].synchronize())?;
            }
            let host = &mut staging[slot].as_mut_slice_unsynced()[..traces * nt];
            let t = Instant::now();
            window::read_conditioned(src, il.clone(), host, &conditioner, WriteMode::Streaming)?;
            conditioner.check(src)?;
            read_s += t.elapsed().as_secs_f64();

            if c >= RING {
                dev.wait(&dev.copy_in, &transformed[slot])?;
            }
            timer.time("h2d", &dev.copy_in, || {
                // SAFETY: the staging buffer holds `traces` rows of nt floats and stays untouched until
                // `copied[slot]` completes; the landing slot holds chunk_traces rows of pt floats.
                unsafe {
                    let from = Source::Host(staging[slot].host_ptr());
                    copy_2d(self.buffers.landing[slot].ptr(), pt * 4, from, nt * 4, nt * 4, traces, &dev.copy_in)
                }
            })?;
            dev.record(&copied[slot], &dev.copy_in)?;
            bytes += (traces * nt * 4) as u64;

            dev.wait(&dev.compute, &copied[slot])?;
            timer.time("time-fft", &dev.compute, || {
                // SAFETY: landing and half slots are laid out as the R2C plan says (chunk_traces rows); rows
                // past `traces` in a last, partial chunk are transformed but never read.
                unsafe {
                    self.buffers.ffts.r2c.exec(self.buffers.landing[slot].ptr(), self.buffers.half[slot].ptr(), true)?
                };
                self.band_transpose(slot, traces, il0, band)
            })?;
            dev.record(&transformed[slot], &dev.compute)?;
            ctx.progress.advance(il.len() as u64);
        }
        dev.sync(&dev.compute)?;
        ctx.progress.finish();
        ctx.stats.add("read", Duration::from_secs_f64(read_s), bytes);
        ctx.stats.nonfinite_samples += conditioner.check(src)?;
        timer.collect(&mut ctx.stats)?;
        // The timer knows times, not bytes: the copies' bytes join their stage here.
        ctx.stats.add("h2d", Duration::ZERO, bytes);
        ctx.stats.add("ingest", wall.elapsed(), bytes);
        ctx.stats.host_to_device_bytes += bytes;
        Ok(())
    }

    /// Move the frequencies `band` of the R2C output in half-spectrum slot `slot` (`traces` traces from
    /// inline `il0`) into the spectrum.
    pub(super) fn band_transpose(&self, slot: usize, traces: usize, il0: usize, band: &Range<usize>) -> Result<()> {
        let plan = self.plan;
        let cfg = LaunchConfig {
            grid_dim: ((band.len() as u32).div_ceil(BAND_TILE), (traces as u32).div_ceil(BAND_TILE), 1),
            block_dim: (BAND_TILE, 8, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            &self.dev.compute,
            "band_transpose",
            cfg,
            &[
                Arg::Ptr(self.buffers.half[slot].ptr()),
                Arg::Ptr(self.buffers.spectrum.ptr()),
                Arg::Ptr(self.delay.ptr_at(band.start)),
                Arg::I32(traces as i32),
                Arg::I32(self.bins as i32),
                Arg::I32((plan.band.first + band.start) as i32),
                Arg::I32(band.len() as i32),
                Arg::I32(plan.input.shape()[1] as i32),
                Arg::I32(il0 as i32),
                Arg::I32(plan.padded[0] as i32),
                Arg::I32(plan.padded[1] as i32),
            ],
        )
    }
}
