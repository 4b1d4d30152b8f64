//! Where a share's spectrum waits for its bands when it does not fit the device (see
//! [`seis_imaging::store`]). A run with no other rank keeps its first band on the device from the ingest
//! on, so only the later bands wait: half the spectrum of a job in two bands, whose host memory then takes
//! half as long to pin and is copied out and back half as much. They wait in page-locked host memory,
//! whose copies run at full speed and asynchronously; in ordinary host memory when that much cannot be
//! pinned; or in a cache file on scratch disk when the host cannot hold it either. The ingest puts each
//! chunk's spectrum there on its way from the device's time transform ([`super::Run::ingest`]); each band
//! is copied back onto the padded grid from there ([`super::Run::load_band`]).

use std::ops::Range;
use std::path::Path;

use crate::device::{Gpu, PinnedBuffer};
use crate::prelude::Cpx;
use seis_core::error::{Error, Result};
use seis_imaging::store::{CacheFile, Layout, Place};
use seis_imaging::Plan;

pub(super) enum Waiting {
    Pinned(PinnedBuffer<Cpx>),
    Pageable(Vec<Cpx>),
    /// The file, and a pinned buffer of one chunk's spectrum that each chunk goes through to the file.
    Disk {
        file: CacheFile,
        staging: PinnedBuffer<Cpx>,
    },
}

/// The frequencies of a share's spectrum, frequency-major and unpadded, on the host.
pub(super) struct WaitingSpectrum {
    pub(super) waiting: Waiting,
    pub(super) layout: Layout,
}

impl WaitingSpectrum {
    /// Room for the `frequencies` (plan indices) of `plan`'s traces at `place` (host memory, or a file in
    /// `scratch`); a disk store stages chunks of up to `chunk_values` values.
    pub(super) fn new(
        gpu: &Gpu,
        plan: &Plan,
        frequencies: Range<usize>,
        place: Place,
        chunk_values: usize,
        scratch: &Path,
    ) -> Result<Self> {
        let layout = Layout { first: frequencies.start, frequencies: frequencies.len(), traces: plan.input.n_traces() };
        let waiting = match place {
            Place::Disk => Waiting::Disk {
                file: CacheFile::create(scratch, layout.bytes())?,
                staging: gpu.alloc_pinned(chunk_values)?,
            },
            _ => match gpu.alloc_pinned::<Cpx>(layout.values()) {
                Ok(pinned) => Waiting::Pinned(pinned),
                Err(e) => {
                    tracing::warn!(
                        "the spectrum waits for its bands in ordinary host memory, slower to copy: {:.2} GB could not \
                         be pinned ({e})",
                        layout.bytes() as f64 / 1e9
                    );
                    let mut v = Vec::new();
                    v.try_reserve_exact(layout.values()).map_err(|_| {
                        Error::Backend(format!(
                            "cannot allocate {:.2} GB of host memory for the spectrum: set compute.host_memory_gb lower, \
                             so that it waits on scratch disk",
                            layout.bytes() as f64 / 1e9
                        ))
                    })?;
                    v.resize(layout.values(), [0.0, 0.0]);
                    Waiting::Pageable(v)
                }
            },
        };
        Ok(WaitingSpectrum { waiting, layout })
    }

    pub(super) fn place(&self) -> &'static str {
        match self.waiting {
            Waiting::Pinned(_) => "pinned host memory",
            Waiting::Pageable(_) => "host memory",
            Waiting::Disk { .. } => "scratch disk",
        }
    }

    /// Host address of the value of frequency `w` at trace `t`, for the memory stores.
    pub(super) fn host_ptr(&mut self, w: usize, t: usize) -> Option<*mut Cpx> {
        let i = self.layout.index(w, t);
        match &mut self.waiting {
            Waiting::Pinned(p) => Some(p.as_mut_slice_unsynced()[i..].as_mut_ptr()),
            Waiting::Pageable(v) => Some(v[i..].as_mut_ptr()),
            Waiting::Disk { .. } => None,
        }
    }
}

/// Where `frequencies` of the share's spectrum wait when they do not fit the device: host memory if `usable`
/// bytes of it hold them, else scratch disk.
pub(super) fn place_for(plan: &Plan, frequencies: &Range<usize>, usable: u64) -> Place {
    let bytes = (frequencies.len() * plan.input.n_traces() * 8) as u64;
    if bytes <= usable {
        Place::Memory
    } else {
        Place::Disk
    }
}

/// Complex values as bytes, to read a cache file into pinned memory.
pub(super) fn cpx_as_complex(v: &mut [Cpx]) -> &mut [num_complex::Complex32] {
    // SAFETY: [f32; 2] and Complex32 (#[repr(C)] { re: f32, im: f32 }) have the same size, alignment and
    // layout, and every bit pattern is valid for both.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len()) }
}
