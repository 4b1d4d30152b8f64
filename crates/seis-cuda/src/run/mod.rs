//! One migration on the device, step for step the CPU engine's (crates/seis-imaging), on the same plan and layout.
//!
//! The files follow the data. [`buffers`] plans the device memory of a run and makes its buffers and FFT
//! plans; [`state`] holds a run's state and the steps every method shares. [`ingest`] reads each chunk of
//! inlines on the host straight into one of a few pinned staging buffers, copies it to the device by a
//! pitched copy that lands every trace in a row padded to the FFT length (copy stream), and transforms it
//! there — R2C along the contiguous traces, then the frequency band moved into the ω-major spectrum
//! (compute stream) — while the host reads the next chunk. This file takes each band's spectrum into the
//! wavenumber domain and hands it to the method ([`phase_shift`], [`stolt`], [`split_step`]), whose imaged
//! levels are cut into the requested boxes ([`Run::gather`]); only those boxes come back, each as soon as
//! it is finished ([`handover`]). `naive`, built with the `bench` feature only, is the plain way the
//! benchmark compares with (`NaiveEngine`).
//!
//! The modules import downwards only: `buffers` and `store`, then `handover`, then `state`, then the steps,
//! then this file, which the engine calls.
//!
//! When the share's spectrum does not fit (see [`super::memory`]), its frequencies go through in bands
//! ([`seis_imaging::bands`]): the input is read and transformed in time once, the spectrum waits on the
//! host ([`store`]), and each band is copied back, migrated and imaged on its own, its values adding into
//! the products on the device.
//!
//! A velocity scan is the same run with several members (migrations whose plans differ in the velocity
//! only, [`seis_imaging::scan`]): each band, once in the wavenumber domain, is copied aside on the device
//! (`RunBuffers::kept`) and every member in turn migrates it from that copy with its own plan, adding into
//! its own products; in the last band each member's products are handed to its sink before the next member
//! starts. The input is read, uploaded and transformed once whatever the number of members. Over several ranks each rank migrates its share, having read a slab of the
//! input and traded frequencies with the others ([`ingest::Exchange`]); the products of the ranks are then
//! summed on rank 0 (see [`crate::ranks`]).

mod estimate;
pub use estimate::device_memory_estimate;
mod buffers;
mod handover;
mod ingest;
#[cfg(feature = "bench")]
mod naive;
mod phase_shift;
mod split_step;
mod state;
mod stolt;
mod store;

use std::time::Instant;

use crate::device::{copy_d2d, PinnedBuffer};
use seis_core::context::RunContext;
use seis_core::error::Result;
use seis_core::stats::Stages;
use seis_core::volume::VolumeReader;
use seis_imaging::store::StoreSettings;
use seis_imaging::{ImageRequest, Method, Migration, Plan};

pub use buffers::{RunBuffers, RunSettings, RunShape, RING};
pub(crate) use ingest::Exchange;
pub use state::Run;

/// What becomes of a run's products once every band is in.
pub enum Finish {
    /// Handed to the sink, each as soon as it is finished.
    Hand,
    /// Kept on the device, to be summed with other ranks' (see [`Run::products`]) and handed over after
    /// ([`Run::hand_over_kept`]).
    Keep,
}

/// The most levels a phase-shift launch of `plan` images at once (1 when it has no level).
pub(crate) fn largest_launch(plan: &Plan) -> usize {
    phase_shift::launches(plan, usize::MAX).iter().map(|b| b.slot_levels.len()).max().unwrap_or(1)
}

impl RunShape {
    /// The shape of a run of `plan` and `request` by `members` migrations of a velocity scan (1: once).
    pub fn of(plan: &Plan, request: &ImageRequest, members: usize, settings: RunSettings) -> Self {
        let launch_sizes = match plan.method.kind() {
            Method::PhaseShift => phase_shift::launches(plan, phase_shift::most_slots(settings.deterministic))
                .iter()
                .map(|b| b.slot_levels.len())
                .collect(),
            _ => Vec::new(),
        };
        RunShape::new(plan, request, members, settings, launch_sizes)
    }
}

impl Run<'_> {
    /// Ingest once, then migrate and image every frequency band of the share by every member of `scan` (one
    /// migration, or the members of a velocity scan, the run made for the first), then hand the products over
    /// (or keep them on the device, with `finish`).
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &self,
        src: &dyn VolumeReader,
        scan: &[Migration],
        ctx: &mut RunContext,
        staging: &mut [PinnedBuffer<f32>],
        store: &StoreSettings,
        exchange: Option<&Exchange>,
        finish: Finish,
    ) -> Result<()> {
        let dev = self.dev;
        let t = Instant::now();
        let bands = &self.buffers.bands;
        let count = bands.ranges.len();
        ctx.stats.frequency_bands = count;
        // The ingest fills only the data part of each plane; the padding must be zero.
        self.buffers.spectrum.zero_async(&dev.compute)?;
        // Alone, the first band goes straight into the device's spectrum as it is read: only the others wait.
        let first_stays = bands.banded() && exchange.is_none();
        let mut waiting = match bands.banded() {
            true => {
                let frequencies = match first_stays {
                    true => bands.ranges[0].end..self.plan.frequencies.end,
                    false => self.plan.frequencies.clone(),
                };
                let place = store::place_for(self.plan, &frequencies, store.usable_host_memory());
                let chunk = self.buffers.chunk_spectrum.as_ref().map_or(0, |c| c.len());
                let made = Instant::now();
                let scratch = store.scratch_dir();
                let w = store::WaitingSpectrum::new(&dev.gpu, self.plan, frequencies, place, chunk, &scratch)?;
                ctx.stats.add("band-store", made.elapsed(), w.layout.bytes());
                tracing::info!("the spectrum waits for its bands in {}", w.place());
                Some(w)
            }
            false => None,
        };
        if count > 0 || exchange.is_some() {
            // A rank with no frequencies still reads its slab for the others.
            self.ingest(src, ctx, staging, waiting.as_mut(), exchange)?;
            // Not earlier, where it would take a core from the ingest.
            self.handover.make_host_memory(&self.buffers);
        }
        let hand = matches!(finish, Finish::Hand);
        self.migrate_bands(scan, ctx, waiting.as_mut(), first_stays, hand)?;
        if let Some(store::Waiting::Memory(pieces)) = waiting.as_ref().map(|w| &w.waiting) {
            // Making the store overlaps the ingest: what counts is how long the run waited for it.
            ctx.stats.add("band-store", pieces.waited, 0);
        }
        drop(waiting);
        dev.sync(&dev.compute)?;
        ctx.stats.add("ingest+compute", t.elapsed(), 0);
        let mut steps = Stages::default();
        self.timer.collect(&mut ctx.stats)?;
        steps.lap("timers");
        match finish {
            Finish::Keep => {}
            // An empty share: its part of every product is zero, as the buffers were cleared.
            Finish::Hand if count == 0 => {
                for sink in &self.handover.sinks {
                    for (i, b) in self.request.boxes.iter().enumerate() {
                        sink.complete(i, vec![0.0; b.len()]);
                    }
                }
            }
            Finish::Hand => {}
        }
        steps.lap("download");
        steps.log_trace("after the migration");
        Ok(())
    }

    /// Migrate and image every frequency band by every member of `scan`: each band loaded from `waiting`
    /// (none: the whole spectrum is on the device; the first band too when `first_stays`), its products
    /// handed over after the last band as they are finished when `hand`.
    fn migrate_bands(
        &self,
        scan: &[Migration],
        ctx: &mut RunContext,
        mut waiting: Option<&mut store::WaitingSpectrum>,
        first_stays: bool,
        hand: bool,
    ) -> Result<()> {
        let bands = &self.buffers.bands;
        let count = bands.ranges.len();
        for (b, band) in bands.ranges.iter().enumerate() {
            if count > 1 {
                tracing::info!("frequency band {} of {count}: {} frequencies", b + 1, band.len());
            }
            ctx.check()?;
            match waiting.as_deref_mut() {
                Some(w) if !(b == 0 && first_stays) => self.load_band(band, w, ctx)?,
                _ => {}
            }
            self.timed("spatial-fft", || self.fft_planes(self.buffers.spectrum.ptr(), band.len(), true))?;
            let last_band = b + 1 == count;
            for (member, m) in scan.iter().enumerate() {
                ctx.check()?;
                if scan.len() > 1 {
                    self.keep_or_restore_band(band, member)?;
                }
                self.handover.begin_member(member, last_band && hand, &self.buffers);
                match m.plan.method.kind() {
                    Method::PhaseShift => self.phase_shift(band, m.plan, ctx)?,
                    Method::Stolt => self.stolt(m.plan, ctx)?,
                    Method::SplitStep => self.split_step(band, m.plan, m.velocity, ctx)?,
                }
                if last_band && hand {
                    // Its products reach the host before the next member's copies reuse the pinned buffers.
                    self.handover.hand_over_the_rest(&self.buffers, &mut ctx.stats)?;
                }
            }
        }
        Ok(())
    }

    /// The products on the device, member after member, each in the request's order (for the sum over
    /// ranks).
    pub fn products(&self) -> Vec<(u64, usize)> {
        self.buffers.products.iter().map(|p| (p.ptr(), p.len())).collect()
    }

    /// Hand over the products kept on the device ([`Finish::Keep`]) as they are now, through the pinned
    /// buffers and the host memory made ready during the migration, as a run that hands them over itself
    /// does.
    pub fn hand_over_kept(&self, ctx: &mut RunContext) -> Result<()> {
        self.handover.hand_over_kept(self.dev, &self.buffers, &mut ctx.stats)
    }

    /// Before member `member` of a scan migrates `band`: the first keeps the band's spectrum as transformed
    /// aside, the others start from that copy (the methods change the spectrum in place).
    fn keep_or_restore_band(&self, band: &std::ops::Range<usize>, member: usize) -> Result<()> {
        let kept = self.buffers.kept.as_ref().expect("a scan's run keeps its band");
        let spectrum = &self.buffers.spectrum;
        let (to, from) = if member == 0 { (kept, spectrum) } else { (spectrum, kept) };
        let bytes = band.len() * self.nk * std::mem::size_of::<crate::prelude::Cpx>();
        // SAFETY: both buffers hold the widest band's planes, at least `bytes`; the copy is queued on the
        // compute stream, in order with the work that reads and writes them.
        self.timed("scan-copy", || unsafe { copy_d2d(to.ptr(), from.ptr(), bytes, &self.dev.compute) })
    }
}
