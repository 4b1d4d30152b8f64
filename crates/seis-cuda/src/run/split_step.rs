//! Split-step Fourier for v(x, y, z) on the device, as seis-imaging split_step.rs does it: per depth step,
//! each frequency plane is shifted with the reference velocity in the wavenumber domain, taken into space,
//! corrected by the thin lens of the lateral velocity (its table uploaded for each step on the copy-in
//! stream, two in flight), and imaged there in the same pass (kernels/split_step.cu).

use std::collections::HashMap;
use std::ops::Range;
use std::time::Duration;

use cudarc::driver::CudaEvent;

use super::state::{dip_args, level_table, Run};
use crate::device::{check, DeviceBuffer, PinnedBuffer};
use crate::launch::{grid_1d, Arg};
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_imaging::Plan;
use seis_velocity::VelocityModel;

impl Run<'_> {
    /// Split-step of one band with `plan` and `velocity` (the member's): every requested pixel adds the band's
    /// share of its image.
    pub(super) fn split_step(
        &self,
        band: &Range<usize>,
        plan: &Plan,
        velocity: &VelocityModel,
        ctx: &mut RunContext,
    ) -> Result<()> {
        // Over 100 lines: its steps are ordered on the device's streams and events, which one function
        // keeps in view; split, that order would be spread over several.
        let dev = self.dev;
        let (nw, nk) = (band.len(), self.nk);
        let [ni, nx, _] = plan.input.shape();
        let [_, px, pt] = plan.padded;
        let dz = plan.depth.step;
        let (max, rolloff) = dip_args(plan);
        let (omega, weight) = (self.omega.ptr_at(band.start), self.weight.ptr_at(band.start));

        // Into space, normalised (as the CPU engine does before its depth loop).
        self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, false))?;
        let norm = DeviceBuffer::from_slice(&dev.gpu, &vec![[1.0 / nk as f32, 0.0f32]; nw])?;
        self.scale_spectrum(norm.ptr(), nw)?;

        let lateral = plan.lateral_velocity;
        let mut lens_host: Vec<PinnedBuffer<f32>> =
            if lateral { (0..2).map(|_| dev.gpu.alloc_pinned::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_dev: Vec<DeviceBuffer<f32>> =
            if lateral { (0..2).map(|_| dev.gpu.alloc::<f32>(nk)).collect::<Result<_>>()? } else { Vec::new() };
        let lens_ready: Vec<CudaEvent> = (0..2).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let lens_used: Vec<CudaEvent> = (0..2).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let mut slowness = vec![0.0f32; if lateral { ni * nx } else { 0 }];
        let mut level_ids: HashMap<usize, DeviceBuffer<i32>> = HashMap::new();

        let image_level = |level: usize, lens: u64, level_ids: &mut HashMap<usize, DeviceBuffer<i32>>| -> Result<()> {
            let wanted = self.request.boxes.iter().any(|b| b.s.contains(&level));
            if lens == 0 && !wanted {
                return Ok(());
            }
            self.timed("migrate", || {
                dev.launch(
                    &dev.compute,
                    "split_step_lens_image",
                    grid_1d(nk, 256),
                    &[
                        Arg::Ptr(self.buffers.spectrum.ptr()),
                        Arg::Ptr(lens),
                        Arg::Ptr(omega),
                        Arg::Ptr(weight),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::Ptr(if wanted { self.buffers.planes.ptr() } else { 0 }),
                    ],
                )
            })?;
            if wanted {
                let ids = match level_ids.entry(level) {
                    std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => v.insert(level_table(dev, &[level])?),
                };
                // Split-step's planes are normalised laterally already: only the time normalisation remains.
                self.timed("gather", || self.gather(self.buffers.planes.ptr(), ids, &[level], 1.0 / pt as f64))?;
            }
            Ok(())
        };
        image_level(0, 0, &mut level_ids)?;

        ctx.progress.begin("split-step", plan.step_velocity.len() as u64);
        let mut lens_bytes = 0u64;
        for (j, &v_ref) in plan.step_velocity.iter().enumerate() {
            ctx.check()?;
            self.handover.hand_over_copied(&self.buffers, false)?;
            let mut lens_ptr = 0;
            if lateral {
                let slot = j % 2;
                if j >= 2 {
                    check("waiting for a lens buffer", lens_used[slot].synchronize())?;
                }
                velocity.slowness_slice((j as f64 + 0.5) * dz, &mut slowness);
                let s0 = 2.0 / v_ref;
                let host = lens_host[slot].as_mut_slice_unsynced();
                host.fill(0.0);
                for (row, s) in slowness.chunks(nx).enumerate() {
                    for (l, &s) in host[row * px..row * px + nx].iter_mut().zip(s) {
                        *l = ((2.0 * s as f64 - s0) * dz) as f32;
                    }
                }
                lens_dev[slot].upload_async(0, &lens_host[slot], nk, &dev.copy_in)?;
                dev.record(&lens_ready[slot], &dev.copy_in)?;
                dev.wait(&dev.compute, &lens_ready[slot])?;
                lens_bytes += (nk * 4) as u64;
                lens_ptr = lens_dev[slot].ptr();
            }
            self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, true))?;
            self.timed("migrate", || {
                dev.launch(
                    &dev.compute,
                    "split_step_shift",
                    grid_1d(nw * nk, 256),
                    &[
                        Arg::Ptr(self.buffers.spectrum.ptr()),
                        Arg::Ptr(self.k2.ptr()),
                        Arg::Ptr(omega),
                        Arg::I32(nw as i32),
                        Arg::I32(nk as i32),
                        Arg::F64(v_ref),
                        Arg::F64(dz),
                        Arg::F32(1.0 / nk as f32),
                        Arg::F32(max),
                        Arg::F32(rolloff),
                    ],
                )
            })?;
            self.timed("inverse-fft", || self.fft_planes(self.buffers.spectrum.ptr(), nw, false))?;
            image_level(j + 1, lens_ptr, &mut level_ids)?;
            if lateral {
                dev.record(&lens_used[j % 2], &dev.compute)?;
            }
            ctx.progress.advance(1);
        }
        dev.sync(&dev.compute)?;
        ctx.progress.finish();
        ctx.stats.host_to_device_bytes += lens_bytes;
        if lens_bytes > 0 {
            ctx.stats.add("h2d-velocity", Duration::ZERO, lens_bytes);
        }
        Ok(())
    }
}
