//! A velocity scan from one upload (see [`crate::imaging::scan`]): the input is read, uploaded and
//! transformed once; the spectrum is kept — on the device when a second copy fits, else in pinned host
//! memory — and each migration of the scan starts from it, with its own plan, velocity and hand-over of
//! products. Every method changes the spectrum in place (phase shift and Stolt scale it, split-step
//! transforms it), so each migration gets a fresh copy: device to device, or host to device.

use std::time::{Duration, Instant};

use super::handover::Handover;
use super::state::Run;
use crate::context::RunContext;
use crate::error::Result;
use crate::gpu::device::{check, DeviceBuffer, PinnedBuffer};
use crate::gpu::prelude::Cpx;
use crate::imaging::{Method, Migration, ProductSink};
use crate::stats::Stages;
use crate::volume::VolumeReader;

/// Where the ingested spectrum waits between the migrations.
enum Kept {
    Device(DeviceBuffer<Cpx>),
    Host(PinnedBuffer<Cpx>),
}

impl<'a> Run<'a> {
    /// Run every migration of `scan` (the run was made for the first; none runs in bands) from one ingest,
    /// handing the products of `scan[i]` to `sinks[i]`.
    pub fn execute_scan(
        &mut self,
        src: &dyn VolumeReader,
        scan: &[Migration<'a>],
        sinks: &[&'a dyn ProductSink],
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
    ) -> Result<()> {
        let dev = self.dev;
        let t = Instant::now();
        let band = 0..self.plan.n_omega();
        ctx.stats.frequency_bands = 1;
        self.buffers.spectrum.zero_async(&dev.compute)?;
        self.ingest(src, &band, ctx, staging)?;
        self.handover.make_host_memory(&self.buffers);
        self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), band.len(), true))?;
        let kept = self.keep_spectrum(ctx)?;
        for (i, (m, sink)) in scan.iter().zip(sinks).enumerate() {
            ctx.check()?;
            if i > 0 {
                self.plan = m.plan;
                self.request = m.request;
                self.handover = Handover::new(&dev.gpu, *sink, m.request);
                for p in &self.buffers.products {
                    p.zero_async(&dev.compute)?;
                }
                self.restore_spectrum(&kept, ctx)?;
                self.handover.make_host_memory(&self.buffers);
            }
            self.handover.last_band.set(true);
            match m.plan.method {
                Method::PhaseShift => self.phase_shift(&band, ctx)?,
                Method::Stolt => self.stolt(ctx)?,
                Method::SplitStep => self.split_step(&band, m.velocity, ctx)?,
            }
            dev.sync(&dev.compute)?;
            // Every product of this migration is on the host before the next one clears the boxes.
            self.handover.hand_over_the_rest(&self.buffers, &mut ctx.stats)?;
        }
        ctx.stats.add("ingest+compute", t.elapsed(), 0);
        let mut steps = Stages::default();
        self.timer.collect(&mut ctx.stats)?;
        steps.lap("timers");
        steps.log_trace("after the scan");
        Ok(())
    }

    /// A copy of the spectrum: on the device when it fits beside the run's buffers (and the memory limit),
    /// else in pinned host memory.
    fn keep_spectrum(&self, ctx: &mut RunContext) -> Result<Kept> {
        let dev = self.dev;
        let spectrum = &self.buffers.spectrum;
        let b = &self.buffers;
        let used: usize = [spectrum.bytes(), b.planes.bytes()]
            .into_iter()
            .chain(b.landing.iter().map(|l| l.bytes()))
            .chain(b.half.iter().map(|h| h.bytes()))
            .chain(b.products.iter().map(|p| p.bytes()))
            .sum();
        let limit = b.shape().settings.memory_limit;
        let fits = spectrum.bytes() as u64 <= dev.available_memory(None)?
            && limit.is_none_or(|l| (used + spectrum.bytes()) as u64 <= l);
        let device = if fits { dev.gpu.alloc::<Cpx>(spectrum.len()).ok() } else { None };
        let kept = match device {
            Some(copy) => {
                self.timed("scan-copy", || copy_on_device(&copy, spectrum, &dev.compute))?;
                Kept::Device(copy)
            }
            None => {
                tracing::info!(
                    "the spectrum ({:.1} MiB) has no room for a second copy on the device: it waits in host memory \
                     between the migrations of the scan",
                    spectrum.bytes() as f64 / (1 << 20) as f64
                );
                let mut host = dev.gpu.alloc_pinned::<Cpx>(spectrum.len())?;
                self.timed("scan-copy", || spectrum.download_async(0, &mut host, spectrum.len(), &dev.compute))?;
                ctx.stats.device_to_host_bytes += spectrum.bytes() as u64;
                ctx.stats.add("d2h", Duration::ZERO, spectrum.bytes() as u64);
                Kept::Host(host)
            }
        };
        Ok(kept)
    }

    /// The spectrum as ingested, for the next migration.
    fn restore_spectrum(&self, kept: &Kept, ctx: &mut RunContext) -> Result<()> {
        let dev = self.dev;
        let spectrum = &self.buffers.spectrum;
        match kept {
            Kept::Device(copy) => self.timed("scan-copy", || copy_on_device(spectrum, copy, &dev.compute)),
            Kept::Host(host) => {
                self.timed("scan-copy", || spectrum.upload_async(0, host, spectrum.len(), &dev.compute))?;
                ctx.stats.host_to_device_bytes += spectrum.bytes() as u64;
                ctx.stats.add("h2d", Duration::ZERO, spectrum.bytes() as u64);
                Ok(())
            }
        }
    }
}

/// Queue a copy of `src` into `dst` (same length) on `stream`.
fn copy_on_device(dst: &DeviceBuffer<Cpx>, src: &DeviceBuffer<Cpx>, stream: &cudarc::driver::CudaStream) -> Result<()> {
    assert_eq!(dst.len(), src.len());
    // SAFETY: both are allocations of `src.bytes()` bytes, alive until the stream has done the copy (the
    // run synchronises its streams before its buffers go).
    check("copying on the device", unsafe {
        cudarc::driver::result::memcpy_dtod_async(dst.ptr(), src.ptr(), src.bytes(), stream.cu_stream())
    })
}

impl super::RunBuffers {
    /// Whether the spectrum passes through the device in frequency bands (a scan cannot keep it then).
    pub fn banded(&self) -> bool {
        self.bands.banded()
    }
}
