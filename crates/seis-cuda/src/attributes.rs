//! Complex-trace attributes of product boxes on the device ([`seis_imaging::attributes`] for the CPU and the
//! formulas): the box gathered by the run is transformed along depth by cuFFT and its attribute written
//! over the start of its own buffer, so that only the attribute's samples are copied back.
//!
//! The work runs on the compute stream, after the gather that finished the box and before its copy. The
//! traces are taken in chunks whose analytic rows fit one scratch buffer of at most [`SCRATCH_BYTES`], made
//! at the first attribute of a run, with a cuFFT plan (and its work area) per chunk size; a run without
//! attributes makes none of them.

use std::cell::RefCell;

use super::device::DeviceBuffer;
use super::fft::{Kind, Layout, Plan};
use super::launch::{grid_1d, Arg, Launcher};
use super::prelude::Cpx;
use seis_core::error::Result;
use seis_imaging::attributes::{fft_len, AttributeOutput};
use seis_imaging::ImageRequest;

/// Largest scratch buffer of analytic rows.
const SCRATCH_BYTES: usize = 64 << 20;

/// The attributes a run's boxes hand over, and the device memory that computes them.
pub(crate) struct DeviceAttributes {
    /// Per box: its attribute, traces and levels.
    boxes: Vec<Option<(AttributeOutput, usize, usize)>>,
    scratch: RefCell<Option<Scratch>>,
}

struct Scratch {
    rows: DeviceBuffer<Cpx>,
    /// Plans by (FFT length, traces), with their work areas.
    plans: Vec<((usize, usize), Plan, DeviceBuffer<u8>)>,
}

/// Traces of `nz` levels taken together, so that their rows fit the scratch buffer.
fn chunk_traces(nz: usize, traces: usize) -> usize {
    (SCRATCH_BYTES / (fft_len(nz) * std::mem::size_of::<Cpx>())).clamp(1, traces.max(1))
}

impl DeviceAttributes {
    pub(crate) fn new(request: &ImageRequest) -> Self {
        let boxes = (0..request.boxes.len())
            .map(|i| {
                let b = &request.boxes[i];
                request.attribute(i).map(|a| (a.clone(), b.il.len() * b.xl.len(), b.s.len()))
            })
            .collect();
        DeviceAttributes { boxes, scratch: RefCell::new(None) }
    }

    /// Queue on the compute stream the attribute of box `i` (held by `product`, `[trace][level]`) over the
    /// start of `product`; the values to copy back (the whole box when it has no attribute).
    pub(crate) fn apply(&self, dev: &Launcher, i: usize, product: &DeviceBuffer<f32>) -> Result<usize> {
        let Some((out, traces, nz)) = self.boxes.get(i).and_then(Option::as_ref) else { return Ok(product.len()) };
        let (traces, nz) = (*traces, *nz);
        let nfft = fft_len(nz);
        let chunk = chunk_traces(nz, traces);
        let mut scratch = self.scratch.borrow_mut();
        if scratch.is_none() {
            let rows =
                self.boxes.iter().flatten().map(|(_, t, z)| chunk_traces(*z, *t) * fft_len(*z)).max().unwrap_or(1);
            *scratch = Some(Scratch { rows: dev.gpu.alloc(rows)?, plans: Vec::new() });
        }
        let scratch = scratch.as_mut().expect("made above");
        let nkeep = out.keep.len();
        let mut first = 0;
        while first < traces {
            let n = chunk.min(traces - first);
            let rows = scratch.rows.ptr();
            let plan = scratch.plan(dev, nfft, n)?;
            let grid = grid_1d(n * nfft, 256);
            dev.launch(
                &dev.compute,
                "attr_load",
                grid,
                &[
                    Arg::Ptr(product.ptr_at(first * nz)),
                    Arg::I32(nz as i32),
                    Arg::I32(n as i32),
                    Arg::Ptr(rows),
                    Arg::I32(nfft as i32),
                ],
            )?;
            // SAFETY: `rows` holds at least `n` rows of `nfft` values, the plan's layout.
            unsafe { plan.exec(rows, rows, true)? };
            dev.launch(
                &dev.compute,
                "attr_analytic",
                grid,
                &[Arg::Ptr(rows), Arg::I32(nfft as i32), Arg::I32(n as i32)],
            )?;
            // SAFETY: as above.
            unsafe { plan.exec(rows, rows, false)? };
            // The output of traces first.. lands before their values (nkeep ≤ nz): later chunks read values
            // this write cannot reach.
            dev.launch(
                &dev.compute,
                "attr_output",
                grid_1d(n * nkeep, 256),
                &[
                    Arg::Ptr(rows),
                    Arg::I32(nfft as i32),
                    Arg::I32(nz as i32),
                    Arg::I32(n as i32),
                    Arg::I32(out.keep.start as i32),
                    Arg::I32(nkeep as i32),
                    Arg::I32(out.attribute.code() as i32),
                    Arg::F32(out.frequency_scale as f32),
                    Arg::Ptr(product.ptr_at(first * nkeep)),
                ],
            )?;
            first += n;
        }
        Ok(out.len(traces))
    }
}

impl Scratch {
    /// The plan of `batch` transforms of `nfft`, made (and bound to the compute stream) at first use.
    fn plan(&mut self, dev: &Launcher, nfft: usize, batch: usize) -> Result<&Plan> {
        let key = (nfft, batch);
        if let Some(k) = self.plans.iter().position(|(k, ..)| *k == key) {
            return Ok(&self.plans[k].1);
        }
        let plan = Plan::new(Kind::C2C, &Layout::contiguous(&[nfft as i64], nfft as i64, nfft as i64, batch as i64))?;
        let work: DeviceBuffer<u8> = dev.gpu.alloc(plan.work_bytes.max(1))?;
        plan.bind(&dev.compute, work.ptr())?;
        self.plans.push((key, plan, work));
        Ok(&self.plans.last().expect("just pushed").1)
    }
}
