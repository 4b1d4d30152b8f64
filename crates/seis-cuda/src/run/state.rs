//! The state of one run on the device — the engine's device, the plan, the buffers, the plan's tables, the
//! device timer and the hand-over — and the steps every method shares: 2-D FFTs of the planes, scaling of
//! the spectrum, and the cut of imaged levels into the requested boxes.

use cudarc::driver::LaunchConfig;

use super::buffers::RunBuffers;
use super::handover::Handover;
use crate::device::DeviceBuffer;
use crate::fft;
use crate::launch::{grid_1d, Arg, Launcher};
use crate::prelude::Cpx;
use crate::timer::DeviceTimer;
use seis_core::error::{Error, Result};
use seis_imaging::{formulas, ImageRequest, Plan, ProductSink};

/// One migration on the device, or the members of a velocity scan: its buffers and plans, and the plan's
/// tables (which the members share: they differ in the velocity only).
pub struct Run<'a> {
    pub(super) dev: &'a Launcher,
    /// The plan of the ingest: the first member's.
    pub(super) plan: &'a Plan,
    pub(super) request: &'a ImageRequest,
    pub(super) nk: usize,
    pub(super) bins: usize,
    pub(super) buffers: RunBuffers,
    /// Per frequency of the plan: exp(−iω t0), ω, |k|², imaging weights (as complex, for scale_planes).
    pub(super) delay: DeviceBuffer<Cpx>,
    /// |k|² and ω in double: the kernels form kz² = (2ω/v)² − |k|² from them without cancellation.
    pub(super) k2: DeviceBuffer<f64>,
    pub(super) omega: DeviceBuffer<f64>,
    pub(super) weight: DeviceBuffer<f32>,
    pub(super) weight_cpx: DeviceBuffer<Cpx>,
    /// The device time of the stages on the compute stream, summed into the stage table at the end.
    pub(super) timer: DeviceTimer<'a>,
    /// Where the finished products go, and how far they are on their way there.
    pub(super) handover: Handover<'a>,
}

impl<'a> Run<'a> {
    /// A run of `plan` on `buffers` (made for its shape), each member handing its products to its sink of
    /// `sinks`: clears what must start at zero and uploads the plan's tables.
    pub fn new(
        dev: &'a Launcher,
        plan: &'a Plan,
        request: &'a ImageRequest,
        buffers: RunBuffers,
        sinks: Vec<&'a dyn ProductSink>,
    ) -> Result<Self> {
        let (nk, nw) = (plan.nk(), plan.n_omega());
        let bins = plan.padded[2] / 2 + 1;
        for l in &buffers.landing {
            // The padding of every row stays zero: copies fill only the first nt samples of a row and the R2C
            // is out of place.
            l.zero_async(&dev.compute)?;
        }
        for p in &buffers.products {
            p.zero_async(&dev.compute)?;
        }
        let delay: Vec<Cpx> = (0..nw)
            .map(|iw| {
                let phase = -plan.omega(iw) * plan.t0;
                [phase.cos() as f32, phase.sin() as f32]
            })
            .collect();
        let weights: Vec<f32> = (0..nw).map(|iw| plan.weight(iw) as f32).collect();
        let weights_cpx: Vec<Cpx> = weights.iter().map(|&w| [w, 0.0]).collect();
        let omega: Vec<f64> = (0..nw).map(|iw| plan.omega(iw)).collect();
        let gpu = &dev.gpu;
        let run = Run {
            dev,
            plan,
            request,
            nk,
            bins,
            buffers,
            delay: DeviceBuffer::from_slice(gpu, &delay)?,
            k2: DeviceBuffer::from_slice(gpu, &plan.k_squared())?,
            omega: DeviceBuffer::from_slice(gpu, &omega)?,
            weight: DeviceBuffer::from_slice(gpu, &weights)?,
            weight_cpx: DeviceBuffer::from_slice(gpu, &weights_cpx)?,
            timer: DeviceTimer::new(gpu),
            handover: Handover::new(gpu, sinks, request),
        };
        // The clears above ran on the compute stream; the copy stream writes the landing slots next.
        dev.sync(&dev.compute)?;
        Ok(run)
    }

    /// The device the run is on, with its streams and kernels.
    pub fn launcher(&self) -> &'a Launcher {
        self.dev
    }

    /// The run's buffers, for the next run of the same shape (the caller has synchronised the streams).
    pub fn into_buffers(self) -> RunBuffers {
        self.buffers
    }

    /// Queue `f`'s work on the compute stream as part of stage `stage` (see [`DeviceTimer`]).
    pub(super) fn timed<T>(&self, stage: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.timer.time(stage, &self.dev.compute, f)
    }

    /// 2-D FFTs of the first `n` planes at `planes`, in place, in batches of [`fft::plane_batches`].
    pub(super) fn fft_planes(&self, planes: u64, n: usize, forward: bool) -> Result<()> {
        for batch in fft::plane_batches(n, self.nk) {
            let count = batch.len();
            let p = self
                .buffers
                .ffts
                .planes
                .get(&count)
                .ok_or_else(|| Error::Gpu(format!("no 2-D FFT plan for {count} planes (a batch of {n} planes)")))?;
            let at = planes + (batch.start * self.nk * std::mem::size_of::<Cpx>()) as u64;
            // SAFETY: `planes` holds at least n planes of nk values, so the batch's planes lie within it.
            unsafe { p.exec(at, at, forward) }?;
        }
        Ok(())
    }

    /// Multiply the first `n` planes of the spectrum by `factor[0..n]`.
    pub(super) fn scale_spectrum(&self, factor: u64, n: usize) -> Result<()> {
        self.dev.launch(
            &self.dev.compute,
            "scale_planes",
            grid_1d(n * self.nk, 256),
            &[Arg::Ptr(self.buffers.spectrum.ptr()), Arg::Ptr(factor), Arg::I32(n as i32), Arg::I32(self.nk as i32)],
        )
    }

    /// Add every box's levels held by `planes` (plane `slot` = level `slot_levels[slot]`) into the products
    /// of the member being migrated; in the last band, a box whose last level this adds starts on its way to
    /// the host.
    pub(super) fn gather(
        &self,
        planes: u64,
        slot_levels: &DeviceBuffer<i32>,
        levels: &[usize],
        scale: f64,
    ) -> Result<()> {
        let [pi, px, _] = self.plan.padded;
        let products = self.buffers.member_products(self.handover.member());
        for (b, product) in self.request.boxes.iter().zip(products) {
            if !levels.iter().any(|l| b.s.contains(l)) {
                continue;
            }
            let pixels = b.il.len() * b.xl.len();
            let cfg = LaunchConfig {
                grid_dim: (pixels.div_ceil(256).clamp(1, 4096) as u32, levels.len().clamp(1, 65535) as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            self.dev.launch(
                &self.dev.compute,
                "gather_box",
                cfg,
                &[
                    Arg::Ptr(planes),
                    Arg::Ptr(slot_levels.ptr()),
                    Arg::I32(levels.len() as i32),
                    Arg::I32(pi as i32),
                    Arg::I32(px as i32),
                    Arg::Ptr(product.ptr()),
                    Arg::I32(b.il.start as i32),
                    Arg::I32(b.il.len() as i32),
                    Arg::I32(b.xl.start as i32),
                    Arg::I32(b.xl.len() as i32),
                    Arg::I32(b.s.start as i32),
                    Arg::I32(b.s.len() as i32),
                    Arg::F32(scale as f32),
                ],
            )?;
        }
        if self.handover.last_band.get() {
            let finished = self.handover.completion.borrow_mut().imaged(levels);
            for i in finished {
                self.handover.start_copy(self.dev, &self.buffers, i)?;
            }
        }
        Ok(())
    }
}

/// A table of the levels `levels` on the device, for [`Run::gather`].
pub(super) fn level_table(dev: &Launcher, levels: &[usize]) -> Result<DeviceBuffer<i32>> {
    let ids: Vec<i32> = levels.iter().map(|&l| l as i32).collect();
    DeviceBuffer::from_slice(&dev.gpu, &ids)
}

/// The dip limit as the kernels take it: (max angle, roll-off) in radians, or (−1, 0) for none.
pub(super) fn dip_args(plan: &Plan) -> (f32, f32) {
    match plan.dip_limit {
        Some(max) => (max as f32, formulas::DIP_ROLLOFF_DEG.to_radians().min(max) as f32),
        None => (-1.0, 0.0),
    }
}
