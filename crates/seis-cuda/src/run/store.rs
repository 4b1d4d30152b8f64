//! Where a share's spectrum waits for its bands when it does not fit the device (see
//! [`seis_imaging::store`]). A run with no other rank keeps its first band on the device from the ingest
//! on, so only the later bands wait: half the spectrum of a job in two bands, whose host memory then takes
//! half as long to pin and is copied out and back half as much.
//!
//! They wait in host memory, in pieces of whole inlines ([`Pieces`]), page-locked so that their copies run
//! at full speed and asynchronously (ordinary memory for what cannot be pinned), or in a cache file on
//! scratch disk when the host cannot hold them. The pieces are made on a thread of their own, in the order
//! the ingest fills them, while the input is read: making host memory takes its time wherever it is first
//! touched (on a virtual machine, 64 GB took 12 s to pin), and the ingest waits only for a piece it has
//! reached and that is not made yet. The ingest puts each chunk's spectrum into the store on its way from
//! the device's time transform ([`super::Run::ingest`]); each band is copied back onto the padded grid from
//! there ([`super::Run::load_band`]).

use std::ops::Range;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;

use crate::device::{Gpu, PinnedBuffer};
use crate::prelude::Cpx;
use seis_core::error::{Error, Result};
use seis_imaging::store::{CacheFile, Layout, Place};
use seis_imaging::Plan;

/// A piece of the store holds whole inlines, about this many bytes of them and at most an eighth of them:
/// small enough that the ingest soon has its first piece, large enough that a band's copy back to the
/// device takes a few hundred calls at most.
const PIECE_BYTES: usize = 512 << 20;
const PIECES_AT_LEAST: usize = 8;

pub(super) enum Waiting {
    Memory(Pieces),
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
            _ => {
                let [ni, nx, _] = plan.input.shape();
                let inline_values = (layout.frequencies * nx).max(1);
                let per_piece = (PIECE_BYTES / 8).div_ceil(inline_values).min(ni.div_ceil(PIECES_AT_LEAST)).max(1);
                let inlines = (0..ni).step_by(per_piece).map(|i| i..(i + per_piece).min(ni)).collect();
                Waiting::Memory(Pieces::start(gpu.ctx.clone(), inlines, inline_values))
            }
        };
        Ok(WaitingSpectrum { waiting, layout })
    }

    pub(super) fn place(&self) -> &'static str {
        match self.waiting {
            Waiting::Memory(_) => "host memory (pinned as far as the driver allows)",
            Waiting::Disk { .. } => "scratch disk",
        }
    }
}

/// Host memory of the store, in pieces of whole inlines made on a thread of their own: the piece of
/// inlines `r` holds, for each stored frequency, the values of those inlines (`[ω][il][xl]` within it).
pub(super) struct Pieces {
    made: Vec<Piece>,
    coming: Option<Receiver<Result<Piece>>>,
    maker: Option<std::thread::JoinHandle<()>>,
    /// How long the ingest waited for pieces not made yet.
    pub(super) waited: Duration,
}

pub(super) struct Piece {
    pub(super) inlines: Range<usize>,
    memory: PieceMemory,
}

enum PieceMemory {
    Pinned(PinnedBuffer<Cpx>),
    Pageable(Vec<Cpx>),
}

impl Piece {
    pub(super) fn host_ptr(&mut self) -> *mut Cpx {
        match &mut self.memory {
            PieceMemory::Pinned(p) => p.as_mut_slice_unsynced().as_mut_ptr(),
            PieceMemory::Pageable(v) => v.as_mut_ptr(),
        }
    }
}

impl Pieces {
    /// Start making the pieces of `inlines` (in that order), each of `inline_values` values per inline.
    fn start(ctx: Arc<CudaContext>, inlines: Vec<Range<usize>>, inline_values: usize) -> Self {
        let (send, coming) = std::sync::mpsc::sync_channel(2);
        let maker = std::thread::spawn(move || make_pieces(&ctx, inlines, inline_values, send));
        Pieces { made: Vec::new(), coming: Some(coming), maker: Some(maker), waited: Duration::ZERO }
    }

    /// The pieces made so far, once those holding inlines up to `through` (excluded) are among them.
    pub(super) fn through(&mut self, through: usize) -> Result<&mut [Piece]> {
        let t = Instant::now();
        while self.made.last().map_or(0, |p| p.inlines.end) < through {
            let next = self.coming.as_ref().and_then(|c| c.recv().ok());
            match next {
                Some(piece) => self.made.push(piece?),
                None => return Err(Error::Internal("the host store's pieces ended early".into())),
            }
        }
        self.waited += t.elapsed();
        Ok(&mut self.made)
    }
}

impl Drop for Pieces {
    fn drop(&mut self) {
        // The maker stops at its next piece once nobody receives; not before it is done with the context.
        self.coming = None;
        if let Some(maker) = self.maker.take() {
            let _ = maker.join();
        }
    }
}

/// Make the pieces of `inlines` in order and send them; ordinary memory where pinning fails (said once).
fn make_pieces(
    ctx: &Arc<CudaContext>,
    inlines: Vec<Range<usize>>,
    inline_values: usize,
    send: SyncSender<Result<Piece>>,
) {
    let mut pinning = true;
    for r in inlines {
        let values = r.len() * inline_values;
        let pinned = if pinning { PinnedBuffer::new(ctx, values) } else { Err(Error::Gpu(String::new())) };
        let memory = match pinned {
            Ok(p) => Ok(PieceMemory::Pinned(p)),
            Err(e) => {
                if pinning {
                    tracing::warn!(
                        "the spectrum waits for its bands partly in ordinary host memory, slower to copy: pinning \
                         failed ({e})"
                    );
                    pinning = false;
                }
                pageable(values).map(PieceMemory::Pageable)
            }
        };
        if send.send(memory.map(|memory| Piece { inlines: r, memory })).is_err() {
            return;
        }
    }
}

fn pageable(values: usize) -> Result<Vec<Cpx>> {
    let mut v = Vec::new();
    v.try_reserve_exact(values).map_err(|_| {
        Error::Backend(format!(
            "cannot allocate {:.2} GB of host memory for the spectrum: set compute.host_memory_gb lower, so that it \
             waits on scratch disk",
            values as f64 * 8.0 / 1e9
        ))
    })?;
    v.resize(values, [0.0, 0.0]);
    Ok(v)
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
