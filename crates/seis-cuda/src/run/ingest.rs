//! The ingest: each chunk of inlines is read and windowed on the host straight into a pinned staging
//! buffer, copied to the device by a pitched copy that lands every trace in a row padded to the time-FFT
//! length (copy stream), transformed along the traces, and its share of frequencies moved into the
//! ω-major spectrum (compute stream), while the host reads the next chunk into the next buffer of the ring.
//!
//! Where the chunk's spectrum goes depends on the run:
//! - one band: straight into the padded spectrum on the device;
//! - several bands: into the host store, frequency-major ([`super::store`]), on the copy-out stream, from
//!   where each band is copied back ([`Run::load_band`]);
//! - several ranks: each rank reads a slab of the inlines, and after the time transform the ranks
//!   exchange the chunk's frequencies (grouped NCCL sends and receives, see [`Exchange`]), so that each
//!   input byte is read and crosses the bus once in the whole job; each rank then places the blocks of its
//!   share it received into its spectrum or its host store. A chunk waits with every frequency in a send
//!   buffer until its round of the exchange, so that a rank reads and transforms its slab while NCCL is
//!   still joining the ranks, as far ahead as it has send buffers; the rounds it staged meanwhile are
//!   traded one after the other as soon as the ranks have joined.

use std::ops::Range;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, LaunchConfig};

use super::buffers::RING;
use super::state::Run;
use super::store::{cpx_as_complex, Waiting, WaitingSpectrum};
use crate::device::{check, copy_2d, copy_3d, PinnedBuffer, Slabs, Source, Target};
use crate::launch::Arg;
use crate::nccl::Comm;
use crate::prelude::{Cpx, BAND_TILE};
use crate::timer::DeviceTimer;
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::volume::{VolumeReader, WriteMode};
use seis_imaging::bands::split_even;
use seis_imaging::window;

/// The ranks of a run over several GPUs, as the ingest sees them: which inlines each reads and which
/// frequencies each migrates.
pub(crate) struct Exchange<'c> {
    pub(crate) comm: &'c Comm,
    /// Inlines each rank reads.
    pub(crate) slabs: Vec<Range<usize>>,
    /// Frequencies (plan indices) each rank migrates.
    pub(crate) shares: Vec<Range<usize>>,
}

impl Exchange<'_> {
    /// The chunk of inlines rank `p` reads in round `round`, if any: its slab in pieces of `inlines`.
    fn chunk(&self, p: usize, round: usize, inlines: usize) -> Option<Range<usize>> {
        slab_chunk(&self.slabs[p], round, inlines)
    }

    /// Rounds of the exchange: the most chunks a rank's slab has.
    fn rounds(&self, inlines: usize) -> usize {
        rounds(&self.slabs, inlines)
    }

    /// The slabs of `ni` inlines for `world` ranks.
    pub(crate) fn slabs_for(ni: usize, world: usize) -> Vec<Range<usize>> {
        split_even(ni, world)
    }
}

/// Round `round`'s piece of `slab` in pieces of `inlines`, if the slab has one.
fn slab_chunk(slab: &Range<usize>, round: usize, inlines: usize) -> Option<Range<usize>> {
    let start = slab.start + round * inlines;
    (start < slab.end).then(|| start..(start + inlines).min(slab.end))
}

/// The rounds an exchange of `slabs` read in pieces of `inlines` takes: every rank takes part in each.
fn rounds(slabs: &[Range<usize>], inlines: usize) -> usize {
    slabs.iter().map(|s| s.len().div_ceil(inlines)).max().unwrap_or(0)
}

/// Bytes of a complex value: the exchange counts bytes.
const CPX_BYTES: usize = std::mem::size_of::<Cpx>();

/// Events that order the steps of a chunk's way into a store.
struct Spill {
    /// The last spill out of the staging (or receive) buffers is done: they may be written again.
    spilled: CudaEvent,
    /// The chunk's spectrum is staged: the copy-out stream may take it.
    staged: CudaEvent,
    bytes: u64,
}

impl Run<'_> {
    /// Read, window, upload and transform the input chunk by chunk, overlapping the three, and put the
    /// share's frequencies of each chunk into the spectrum (`store` none) or the host store; with
    /// `exchange`, read this rank's slab and trade frequencies with the other ranks.
    pub(super) fn ingest(
        &self,
        src: &dyn VolumeReader,
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
        mut store: Option<&mut WaitingSpectrum>,
        exchange: Option<&Exchange>,
    ) -> Result<()> {
        // Over 100 lines: its steps are ordered on the device's streams and events, which one function
        // keeps in view; split, that order would be spread over several.
        let dev = self.dev;
        let plan = self.plan;
        let [_, nx, nt] = plan.input.shape();
        let pt = plan.padded[2];
        let copied: Vec<CudaEvent> = (0..RING).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let transformed: Vec<CudaEvent> = (0..RING).map(|_| dev.gpu.sync_event()).collect::<Result<_>>()?;
        let mut spill = Spill { spilled: dev.gpu.sync_event()?, staged: dev.gpu.sync_event()?, bytes: 0 };
        dev.record(&spill.spilled, &dev.copy_out)?;
        let chunks: Vec<Option<Range<usize>>> = match exchange {
            None => plan.ingest_chunks().into_iter().map(Some).collect(),
            Some(x) => {
                let me = x.comm.rank();
                (0..x.rounds(plan.ingest_inlines)).map(|r| x.chunk(me, r, plan.ingest_inlines)).collect()
            }
        };
        let mine: usize = chunks.iter().flatten().map(|il| il.len()).sum();
        // With other ranks, the exchange of a round is only queued: the host reads on while it runs, and its
        // waits watch the communicator, so that a rank that fails ends them.
        let wait = |event: &CudaEvent, what: &str| match exchange {
            Some(x) => x.comm.wait_event(event, what),
            None => check(what, event.synchronize()),
        };
        // The copies (copy streams) and the transforms (compute stream), summed into the stages at the end.
        let timer = DeviceTimer::new(&dev.gpu);
        let conditioner = window::TraceConditioner::new(&plan.window, plan.nonfinite);
        let (mut read_s, mut bytes) = (0.0, 0u64);
        let wall = Instant::now();
        ctx.progress.begin("read and upload", mine.max(1) as u64);
        let staged = self.buffers.exchange.as_ref().map_or(1, |b| b.sends.len());
        // Rounds of the exchange queued so far, and the bytes this rank sent and received in them.
        let (mut traded, mut moved) = (0, 0);
        for (c, il) in chunks.iter().enumerate() {
            ctx.check()?;
            let slot = c % RING;
            if let Some(x) = exchange {
                // Round c is staged where round c − staged was: that round's exchange goes first (it runs
                // before, on the compute stream), waiting for the ranks to join if they have not.
                let end = (c + 1).saturating_sub(staged);
                moved += self.trade_until(x, &mut traded, end, store.as_deref_mut(), &mut spill, &timer)?;
            }
            if let Some(il) = il.clone() {
                let traces = il.len() * nx;
                if c >= RING {
                    // The copy out of this staging buffer (chunk c − RING) must be over before we refill it.
                    wait(&copied[slot], "waiting for a staging buffer")?;
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
                        let to = Target::Device(self.buffers.landing[slot].ptr());
                        copy_2d(to, pt * 4, from, nt * 4, nt * 4, traces, &dev.copy_in)
                    }
                })?;
                dev.record(&copied[slot], &dev.copy_in)?;
                bytes += (traces * nt * 4) as u64;

                dev.wait(&dev.compute, &copied[slot])?;
                timer.time("time-fft", &dev.compute, || {
                    // SAFETY: landing and half slots are laid out as the R2C plan says (chunk_traces rows);
                    // rows past `traces` in a last, partial chunk are transformed but never read.
                    unsafe {
                        self.buffers.ffts.r2c.exec(
                            self.buffers.landing[slot].ptr(),
                            self.buffers.half[slot].ptr(),
                            true,
                        )?
                    };
                    Ok(())
                })?;
            }
            if let Some(x) = exchange {
                if let Some(il) = il {
                    let send = &self.buffers.exchange.as_ref().expect("a rank has exchange buffers").sends[c % staged];
                    let to = Packed { ptr: send.ptr(), first_il: 0, rows: il.len() };
                    let all = 0..plan.n_omega();
                    timer.time("time-fft", &dev.compute, || self.band_transpose(slot, il.len() * nx, &all, to, nx))?;
                }
                if x.comm.is_joined()? {
                    if traded < c {
                        tracing::debug!(
                            "rank {}: the ranks joined with {} of {} rounds of the exchange staged",
                            x.comm.rank(),
                            c + 1 - traded,
                            chunks.len()
                        );
                    }
                    moved += self.trade_until(x, &mut traded, c + 1, store.as_deref_mut(), &mut spill, &timer)?;
                }
            }
            match (exchange, store.as_deref_mut()) {
                (Some(_), _) => {}
                (None, None) => {
                    let il = il.clone().expect("every chunk of a single rank has inlines");
                    let to = Packed { ptr: self.buffers.spectrum.ptr(), first_il: il.start, rows: self.plan.padded[0] };
                    timer.time("time-fft", &dev.compute, || {
                        self.band_transpose(slot, il.len() * nx, &self.plan.frequencies, to, self.plan.padded[1])
                    })?;
                }
                (None, Some(store)) => {
                    let il = il.clone().expect("every chunk of a single rank has inlines");
                    // The frequencies below the store's stay on the device: the first band.
                    let stays = self.plan.frequencies.start..store.layout.first;
                    if !stays.is_empty() {
                        let to =
                            Packed { ptr: self.buffers.spectrum.ptr(), first_il: il.start, rows: self.plan.padded[0] };
                        timer.time("time-fft", &dev.compute, || {
                            self.band_transpose(slot, il.len() * nx, &stays, to, self.plan.padded[1])
                        })?;
                    }
                    let stored = store.layout.first..store.layout.first + store.layout.frequencies;
                    let chunk = self.buffers.chunk_spectrum.as_ref().expect("a banded run stages its chunks");
                    dev.wait(&dev.compute, &spill.spilled)?;
                    let to = Packed { ptr: chunk.ptr(), first_il: 0, rows: il.len() };
                    timer
                        .time("time-fft", &dev.compute, || self.band_transpose(slot, il.len() * nx, &stored, to, nx))?;
                    dev.record(&spill.staged, &dev.compute)?;
                    self.spill(chunk.ptr(), il, store, &mut spill, &timer)?;
                }
            }
            dev.record(&transformed[slot], &dev.compute)?;
            if let Some(il) = il {
                ctx.progress.advance(il.len() as u64);
            }
        }
        if let Some(x) = exchange {
            moved += self.trade_until(x, &mut traded, chunks.len(), store, &mut spill, &timer)?;
        }
        for stream in [&dev.compute, &dev.copy_out] {
            let done = dev.gpu.sync_event()?;
            dev.record(&done, stream)?;
            wait(&done, "waiting for the device")?;
        }
        ctx.progress.finish();
        ctx.stats.add("read", Duration::from_secs_f64(read_s), bytes);
        ctx.stats.nonfinite_samples += conditioner.check(src)?;
        timer.collect(&mut ctx.stats)?;
        // The timer knows times, not bytes: the copies' bytes join their stage here.
        ctx.stats.add("h2d", Duration::ZERO, bytes);
        if exchange.is_some() {
            ctx.stats.add("exchange", Duration::ZERO, moved);
        }
        ctx.stats.add("ingest", wall.elapsed(), bytes);
        ctx.stats.host_to_device_bytes += bytes;
        if spill.bytes > 0 {
            ctx.stats.add("spill", Duration::ZERO, spill.bytes);
            ctx.stats.device_to_host_bytes += spill.bytes;
        }
        Ok(())
    }

    /// The rounds of the exchange from `*traded` up to `end` (excluded), one after the other; returns the
    /// bytes they moved (see [`Run::trade`]).
    fn trade_until(
        &self,
        x: &Exchange,
        traded: &mut usize,
        end: usize,
        mut store: Option<&mut WaitingSpectrum>,
        spill: &mut Spill,
        timer: &DeviceTimer,
    ) -> Result<u64> {
        let mut moved = 0;
        while *traded < end {
            moved += self.trade(x, *traded, store.as_deref_mut(), spill, timer)?;
            *traded += 1;
        }
        Ok(moved)
    }

    /// Round `round` of the ranks' exchange: this rank's chunk of the round (if any, staged with every
    /// frequency in its send buffer) sent to every rank, that rank's share of it, and the blocks of this
    /// rank's share that the others read in the round received and placed. Returns the bytes sent to and
    /// received from the other ranks.
    fn trade(
        &self,
        x: &Exchange,
        round: usize,
        mut store: Option<&mut WaitingSpectrum>,
        spill: &mut Spill,
        timer: &DeviceTimer,
    ) -> Result<u64> {
        let dev = self.dev;
        let plan = self.plan;
        let nx = plan.input.shape()[1];
        let buffers = self.buffers.exchange.as_ref().expect("a run over several ranks has exchange buffers");
        let me = x.comm.rank();
        let inlines = plan.ingest_inlines;
        // The receive buffers may be written once the last round's blocks are out.
        dev.wait(&dev.compute, &spill.spilled)?;
        let mut sends = Vec::new();
        if let Some(il) = x.chunk(me, round, inlines) {
            let send = &buffers.sends[round % buffers.sends.len()];
            let traces = il.len() * nx;
            for (q, share) in x.shares.iter().enumerate() {
                if !share.is_empty() {
                    sends.push((q, send.ptr_at(share.start * traces), share.len() * traces * CPX_BYTES));
                }
            }
        }
        let mine = &x.shares[me];
        let block = inlines * nx * mine.len();
        let mut recvs = Vec::new();
        let mut placed = Vec::new();
        for p in 0..x.comm.world() {
            if let (Some(their), false) = (x.chunk(p, round, inlines), mine.is_empty()) {
                let ptr = buffers.recv.ptr_at(p * block);
                recvs.push((p, ptr, their.len() * nx * mine.len() * CPX_BYTES));
                placed.push((ptr, their));
            }
        }
        let moved = sends.iter().chain(&recvs).filter(|t| t.0 != me).map(|t| t.2 as u64).sum();
        // The wait for the ranks to join is not the exchange's: it ends before the exchange's time starts.
        x.comm.join()?;
        timer.time("exchange", &dev.compute, || x.comm.enqueue_exchange(&sends, &recvs, &dev.compute))?;
        for (ptr, their) in placed {
            match store.as_deref_mut() {
                None => {
                    let [pi, px, _] = plan.padded;
                    // SAFETY: the block holds mine.len() planes of their.len() × nx values; the spectrum holds
                    // mine.len() padded planes of pi × px.
                    timer.time("exchange-place", &dev.compute, || unsafe {
                        copy_3d(
                            Slabs {
                                at: Target::Device(self.buffers.spectrum.ptr()),
                                pitch: px * 8,
                                height: pi,
                                y: their.start,
                            },
                            Slabs { at: Source::Device(ptr), pitch: nx * 8, height: their.len(), y: 0 },
                            nx * 8,
                            their.len(),
                            mine.len(),
                            &dev.compute,
                        )
                    })?;
                }
                Some(store) => {
                    dev.record(&spill.staged, &dev.compute)?;
                    self.spill(ptr, their, store, spill, timer)?;
                }
            }
        }
        Ok(moved)
    }

    /// Copy a chunk's spectrum of the share, staged frequency-major at `block` (`[ω][trace]` for the inlines
    /// `il`), into the host store, on the copy-out stream after `spill.staged`. A store on disk is written
    /// from a pinned buffer once the copy is done.
    fn spill(
        &self,
        block: u64,
        il: Range<usize>,
        store: &mut WaitingSpectrum,
        spill: &mut Spill,
        timer: &DeviceTimer,
    ) -> Result<()> {
        let dev = self.dev;
        let nx = self.plan.input.shape()[1];
        let traces = il.len() * nx;
        let layout = store.layout;
        let (first, nw) = (layout.first, layout.frequencies);
        dev.wait(&dev.copy_out, &spill.staged)?;
        match &mut store.waiting {
            Waiting::Memory(pieces) => {
                for piece in pieces.through(il.end)?.iter_mut() {
                    let both = il.start.max(piece.inlines.start)..il.end.min(piece.inlines.end);
                    if both.is_empty() {
                        continue;
                    }
                    let held = piece.inlines.len() * nx;
                    // SAFETY: the piece holds nw rows of its inlines' `held` values, of which those of the
                    // inlines `both` are written; the block holds nw rows of `traces` values, read from
                    // those of the same inlines. The host does not touch the piece while bands wait.
                    let host = unsafe { piece.host_ptr().add((both.start - piece.inlines.start) * nx) };
                    let from = block + ((both.start - il.start) * nx * 8) as u64;
                    let row_bytes = both.len() * nx * 8;
                    timer.time("spill", &dev.copy_out, || {
                        // SAFETY: as above.
                        unsafe {
                            let to = Target::Host(host.cast());
                            copy_2d(to, held * 8, Source::Device(from), traces * 8, row_bytes, nw, &dev.copy_out)
                        }
                    })?;
                }
            }
            Waiting::Disk { file, staging } => {
                timer.time("spill", &dev.copy_out, || {
                    // SAFETY: the block holds nw rows of `traces` values, copied into the pinned staging
                    // buffer of at least nw × traces values, which is read below only after the copy is done.
                    unsafe {
                        let to = Target::Host(staging.host_ptr_mut());
                        copy_2d(to, traces * 8, Source::Device(block), traces * 8, traces * 8, nw, &dev.copy_out)
                    }
                })?;
                dev.sync(&dev.copy_out)?;
                let values = cpx_as_complex(&mut staging.as_mut_slice_unsynced()[..nw * traces]);
                for (iw, row) in values.chunks(traces).enumerate() {
                    file.write(layout.index(first + iw, il.start * nx), row)?;
                }
            }
        }
        dev.record(&spill.spilled, &dev.copy_out)?;
        spill.bytes += (nw * traces * 8) as u64;
        Ok(())
    }

    /// The spectrum of `band` from the host store onto the padded grid of the device's spectrum (its padding
    /// cleared), ready for the compute stream.
    pub(super) fn load_band(
        &self,
        band: &Range<usize>,
        store: &mut WaitingSpectrum,
        ctx: &mut RunContext,
    ) -> Result<()> {
        let dev = self.dev;
        let plan = self.plan;
        let [ni, nx, _] = plan.input.shape();
        let [pi, px, _] = plan.padded;
        let nk = plan.nk();
        let spectrum = &self.buffers.spectrum;
        let timer = DeviceTimer::new(&dev.gpu);
        let t = Instant::now();
        spectrum.zero_async(&dev.compute)?;
        let zeroed = dev.gpu.sync_event()?;
        dev.record(&zeroed, &dev.compute)?;
        dev.wait(&dev.copy_in, &zeroed)?;
        let layout = store.layout;
        match &mut store.waiting {
            Waiting::Memory(pieces) => {
                for piece in pieces.through(ni)?.iter_mut() {
                    let (rows, held) = (piece.inlines.len(), piece.inlines.len() * nx);
                    // SAFETY: the piece holds each stored frequency's `held` values of its inlines, from
                    // which the band's planes are copied onto rows piece.inlines of the spectrum's band.len()
                    // planes of pi × px; the store is not written while bands are loaded.
                    let host = unsafe { piece.host_ptr().add((band.start - layout.first) * held) };
                    let y = piece.inlines.start;
                    let from = Source::Host(host.cast_const().cast());
                    timer.time("band-load", &dev.copy_in, || {
                        // SAFETY: as above.
                        unsafe {
                            copy_3d(
                                Slabs { at: Target::Device(spectrum.ptr()), pitch: px * 8, height: pi, y },
                                Slabs { at: from, pitch: nx * 8, height: rows, y: 0 },
                                nx * 8,
                                rows,
                                band.len(),
                                &dev.copy_in,
                            )
                        }
                    })?;
                }
            }
            Waiting::Disk { file, staging } => {
                let rows = (staging.len() / nx).clamp(1, ni);
                for w in band.clone() {
                    ctx.check()?;
                    for il0 in (0..ni).step_by(rows) {
                        let n = rows.min(ni - il0);
                        file.read(
                            layout.index(w, il0 * nx),
                            cpx_as_complex(&mut staging.as_mut_slice_unsynced()[..n * nx]),
                        )?;
                        let to = spectrum.ptr_at((w - band.start) * nk + il0 * px);
                        timer.time("band-load", &dev.copy_in, || {
                            // SAFETY: `n` rows of nx values from the pinned staging buffer into rows il0.. of
                            // plane w − band.start; the buffer is refilled only after the copy is done.
                            unsafe {
                                copy_2d(
                                    Target::Device(to),
                                    px * 8,
                                    Source::Host(staging.host_ptr()),
                                    nx * 8,
                                    nx * 8,
                                    n,
                                    &dev.copy_in,
                                )
                            }
                        })?;
                        dev.sync(&dev.copy_in)?;
                    }
                }
            }
        }
        let loaded = dev.gpu.sync_event()?;
        dev.record(&loaded, &dev.copy_in)?;
        dev.wait(&dev.compute, &loaded)?;
        dev.sync(&dev.copy_in)?;
        timer.collect(&mut ctx.stats)?;
        let bytes = (band.len() * ni * nx * 8) as u64;
        ctx.stats.add("band-load", Duration::ZERO, bytes);
        ctx.stats.host_to_device_bytes += bytes;
        tracing::debug!("band of {} frequencies loaded in {:.3} s", band.len(), t.elapsed().as_secs_f64());
        Ok(())
    }

    /// Move the frequencies `band` (plan indices) of the R2C output in half-spectrum slot `slot` (`traces`
    /// traces) into `to`, rows of `row` values: the padded spectrum, or a chunk's frequency-major staging.
    pub(super) fn band_transpose(
        &self,
        slot: usize,
        traces: usize,
        band: &Range<usize>,
        to: Packed,
        row: usize,
    ) -> Result<()> {
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
                Arg::Ptr(to.ptr),
                Arg::Ptr(self.delay.ptr_at(band.start)),
                Arg::I32(traces as i32),
                Arg::I32(self.bins as i32),
                Arg::I32((plan.band.first + band.start) as i32),
                Arg::I32(band.len() as i32),
                Arg::I32(plan.input.shape()[1] as i32),
                Arg::I32(to.first_il as i32),
                Arg::I32(to.rows as i32),
                Arg::I32(row as i32),
            ],
        )
    }
}

/// Where `band_transpose` writes: planes of `rows` rows at `ptr`, the chunk's first inline at row
/// `first_il`.
#[derive(Clone, Copy)]
pub(super) struct Packed {
    pub(super) ptr: u64,
    pub(super) first_il: usize,
    pub(super) rows: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every inline is read by exactly one rank, in one round; every rank knows what every other reads.
    #[test]
    fn the_slabs_cover_the_inlines_once_in_rounds_every_rank_agrees_on() {
        for (ni, world, inlines) in [(100, 3, 16), (7, 4, 3), (3, 8, 5), (64, 2, 64)] {
            let slabs = Exchange::slabs_for(ni, world);
            let n = rounds(&slabs, inlines);
            let mut read = Vec::new();
            for round in 0..n {
                for slab in &slabs {
                    if let Some(c) = slab_chunk(slab, round, inlines) {
                        assert!(!c.is_empty() && c.len() <= inlines, "{c:?}");
                        read.extend(c);
                    }
                }
            }
            read.sort_unstable();
            assert_eq!(read, (0..ni).collect::<Vec<_>>(), "{ni} inlines, {world} ranks");
            assert!(slabs.iter().any(|s| slab_chunk(s, n - 1, inlines).is_some()), "no empty last round");
            assert!(slabs.iter().all(|s| slab_chunk(s, n, inlines).is_none()));
        }
    }
}
