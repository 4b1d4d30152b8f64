//! Stolt (f-k) migration for a constant velocity on the device, as seis-imaging stolt.rs does it: the
//! spectrum centred on t = 0, remapped from ω onto a regular kz grid (kernels/stolt.cu), transformed back
//! over kz into depth levels and over (kx, ky) into space. It needs every frequency of a wavenumber at
//! once, so it never runs in bands.

use cudarc::driver::LaunchConfig;

use super::state::{dip_args, level_table, Run};
use crate::device::DeviceBuffer;
use crate::launch::Arg;
use crate::prelude::Cpx;
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_imaging::{Plan, StoltInterpolation};

impl Run<'_> {
    /// Stolt with `plan` (the member's): the remap of the whole spectrum onto the kz grid, one inverse FFT
    /// over kz, and the inverse 2-D FFTs and gather of every level down to the deepest requested.
    pub(super) fn stolt(&self, plan: &Plan, ctx: &RunContext) -> Result<()> {
        let dev = self.dev;
        let nw = plan.n_omega();
        let grid = plan.method.stolt().expect("checked by RunBuffers::new");
        let (max, rolloff) = dip_args(plan);
        ctx.progress.begin("stolt", plan.levels.len() as u64);
        // Centre the record on t = 0 (see seis-imaging stolt.rs): every plane times exp(+iω t_c).
        let centring: Vec<Cpx> = (0..nw)
            .map(|iw| {
                let ph = plan.omega(iw) * grid.time_centre;
                [ph.cos() as f32, ph.sin() as f32]
            })
            .collect();
        let centring = DeviceBuffer::from_slice(&dev.gpu, &centring)?;
        self.timed("migrate", || self.scale_spectrum(centring.ptr(), nw))?;
        let step = if nw > 1 { plan.omega(1) - plan.omega(0) } else { 1.0 };
        let cfg = LaunchConfig {
            grid_dim: ((self.nk as u32).div_ceil(128), grid.nz_fft.min(65535) as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        self.timed("migrate", || {
            dev.launch(
                &dev.compute,
                "stolt_remap",
                cfg,
                &[
                    Arg::Ptr(self.buffers.spectrum.ptr()),
                    Arg::Ptr(self.buffers.planes.ptr()),
                    Arg::Ptr(self.k2.ptr()),
                    Arg::I32(nw as i32),
                    Arg::I32(self.nk as i32),
                    Arg::I32(grid.nz_fft as i32),
                    Arg::F64(plan.omega(0)),
                    Arg::F64(step),
                    Arg::F64(grid.velocity),
                    Arg::F64(grid.dkz),
                    Arg::F64(grid.time_centre),
                    Arg::I32(matches!(grid.interpolation, StoltInterpolation::Sinc) as i32),
                    Arg::F32(max),
                    Arg::F32(rolloff),
                ],
            )
        })?;
        // The inverse FFT over kz turns line m into depth level m, as the CPU's per-column FFT does.
        let kz = self.buffers.ffts.kz.as_ref().expect("a Stolt run has a kz plan");
        // SAFETY: planes holds nz_fft planes of nk values, laid out as the "kz" plan says.
        self.timed("inverse-fft", || unsafe { kz.exec(self.buffers.planes.ptr(), self.buffers.planes.ptr(), false) })?;
        let levels: Vec<usize> = (0..=plan.last_level()).collect();
        self.timed("inverse-fft", || self.fft_planes(self.buffers.planes.ptr(), levels.len(), false))?;
        let ids = level_table(dev, &levels)?;
        self.timed("gather", || self.gather(self.buffers.planes.ptr(), &ids, &levels, plan.image_scale()))?;
        dev.sync(&dev.compute)?;
        ctx.progress.advance(plan.levels.len() as u64);
        ctx.progress.finish();
        Ok(())
    }
}
