//! cuFFT plans made with `cufftMakePlanMany64` and a work area shared by all plans of a run.
//!
//! Plans never allocate their own scratch: the engine sizes one work area for the largest plan and hands it
//! to each, so that device memory is planned up front and several plans do not each hold a copy.

use std::ffi::c_void;
use std::ops::Range;

use cudarc::cufft::{result as fft, sys as fftsys};
use cudarc::driver::CudaStream;

use seis_core::error::{Error, Result};

/// Transform directions of `cufftExecC2C` (cufft.h).
const CUFFT_FORWARD: i32 = -1;
const CUFFT_INVERSE: i32 = 1;

fn check<T>(what: &str, r: std::result::Result<T, fft::CufftError>) -> Result<T> {
    r.map_err(|e| Error::Gpu(format!("cuFFT, {what}: {e:?}")))
}

/// Most elements one batched transform of planes takes. A split-step job of 481 planes of 2400 × 2400
/// (2.8 × 10⁹ elements, past 2³¹) took 2.5 times as long per plane in one batch on an H100 as the same job
/// over two GPUs, in batches of 240 and 241, and their images differed by a relative L2 of 1.7 × 10⁻⁴ after
/// 400 levels, where runs whose batches stay under 2³¹ elements agree within 4 × 10⁻⁷. The size of the
/// batch was the one difference found between those runs, so batches are kept under it.
pub const MAX_BATCH_ELEMENTS: usize = i32::MAX as usize;

/// The ranges of `n` planes of `plane` elements each that are transformed as one batch: as many planes as
/// [`MAX_BATCH_ELEMENTS`] allows, the rest in a last, smaller batch.
pub fn plane_batches(n: usize, plane: usize) -> impl Iterator<Item = Range<usize>> {
    let most = (MAX_BATCH_ELEMENTS / plane.max(1)).max(1);
    (0..n).step_by(most).map(move |start| start..(start + most).min(n))
}

/// Layout of one batched transform (elements, not bytes; `embed` as in `cufftPlanMany`).
#[derive(Clone, Debug)]
pub struct Layout {
    pub n: Vec<i64>,
    pub inembed: Vec<i64>,
    pub istride: i64,
    pub idist: i64,
    pub onembed: Vec<i64>,
    pub ostride: i64,
    pub odist: i64,
    pub batch: i64,
}

impl Layout {
    /// `batch` contiguous transforms of shape `n`, each `dist` elements apart (in and out alike).
    pub fn contiguous(n: &[i64], dist_in: i64, dist_out: i64, batch: i64) -> Self {
        Layout {
            n: n.to_vec(),
            inembed: n.to_vec(),
            istride: 1,
            idist: dist_in,
            onembed: n.to_vec(),
            ostride: 1,
            odist: dist_out,
            batch,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    R2C,
    C2C,
}

/// A cuFFT plan without its own work area.
pub struct Plan {
    handle: fftsys::cufftHandle,
    kind: Kind,
    pub work_bytes: usize,
}

// SAFETY: a cuFFT handle may be used from any thread as long as calls on it are not concurrent; the engine
// uses each plan from one thread.
unsafe impl Send for Plan {}

impl Plan {
    pub fn new(kind: Kind, layout: &Layout) -> Result<Self> {
        let handle = check("creating a plan", fft::create())?;
        let mut plan = Plan { handle, kind, work_bytes: 0 };
        let mut l = layout.clone();
        let ty = match kind {
            Kind::R2C => fftsys::cufftType::CUFFT_R2C,
            Kind::C2C => fftsys::cufftType::CUFFT_C2C,
        };
        // SAFETY: the handle is fresh; the vectors outlive the call.
        unsafe {
            check("disabling work-area auto allocation", fft::set_auto_allocation(handle, false))?;
            plan.work_bytes = check(
                &format!("making a plan of {:?} × {} ({kind:?})", layout.n, layout.batch),
                fft::make_plan_many64(
                    handle,
                    l.n.len() as i32,
                    l.n.as_mut_ptr(),
                    l.inembed.as_mut_ptr(),
                    l.istride,
                    l.idist,
                    l.onembed.as_mut_ptr(),
                    l.ostride,
                    l.odist,
                    ty,
                    l.batch,
                ),
            )?;
        }
        Ok(plan)
    }

    /// Bind the plan to a stream and a work area of at least `work_bytes`.
    pub fn bind(&self, stream: &CudaStream, work_area: u64) -> Result<()> {
        // SAFETY: valid handle; the work area outlives the plan's executions (the engine owns both).
        unsafe {
            check("setting the stream", fft::set_stream(self.handle, stream.cu_stream() as _))?;
            check("setting the work area", fft::set_work_area(self.handle, work_area as *mut c_void))
        }
    }

    /// Execute. `forward` picks the sign: forward uses exp(−i…), as rustfft and numpy do.
    ///
    /// # Safety
    /// `input` and `output` must be device buffers laid out as the plan says.
    pub unsafe fn exec(&self, input: u64, output: u64, forward: bool) -> Result<()> {
        match self.kind {
            Kind::R2C => {
                check("R2C", fft::exec_r2c(self.handle, input as *mut f32, output as *mut fftsys::cufftComplex))
            }
            Kind::C2C => check(
                "C2C",
                fft::exec_c2c(
                    self.handle,
                    input as *mut fftsys::cufftComplex,
                    output as *mut fftsys::cufftComplex,
                    if forward { CUFFT_FORWARD } else { CUFFT_INVERSE },
                ),
            ),
        }
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: handle created in `new`.
        unsafe {
            let _ = fft::destroy(self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_batches_stay_under_the_limit_and_cover_every_plane_once() {
        let plane = 2400 * 2400;
        let most = MAX_BATCH_ELEMENTS / plane;
        assert_eq!(most, 372);
        let batches: Vec<_> = plane_batches(481, plane).collect();
        assert_eq!(batches, vec![0..372, 372..481]);
        assert_eq!(plane_batches(240, plane).collect::<Vec<_>>(), vec![0..240]);
        assert_eq!(plane_batches(0, plane).count(), 0);
        // A plane larger than the limit still goes one at a time.
        assert_eq!(plane_batches(3, MAX_BATCH_ELEMENTS + 1).collect::<Vec<_>>(), vec![0..1, 1..2, 2..3]);
        for (n, plane) in [(1000, 1 << 22), (17, 1 << 27), (5, 1 << 10)] {
            let b: Vec<_> = plane_batches(n, plane).collect();
            assert!(b.iter().all(|r| r.len() * plane <= MAX_BATCH_ELEMENTS || r.len() == 1));
            assert_eq!(b.iter().map(|r| r.len()).sum::<usize>(), n);
            assert!(b.windows(2).all(|w| w[0].end == w[1].start));
        }
    }
}
