//! What the engines ask of a plan as they follow it: the share of the frequencies, the frequencies and
//! wavenumbers of the padded grid, the ingest chunks and the depth segments of each block.

use std::ops::Range;

use super::{Plan, Segment};
use crate::bands::Share;
use crate::formulas::{angular_frequency, imaging_weight, wavenumber};
use crate::request::ImageRequest;
use seis_core::error::{Error, Result};
use seis_core::volume::Geometry;

impl Plan {
    /// Migrate only `share` of the frequencies (see [`crate::bands`]). A method that needs every frequency
    /// of a wavenumber at once (Stolt) does not split: its first share migrates them all and the others none, which
    /// the plan's warnings say.
    pub fn restrict_to(&mut self, share: Share) {
        self.share = share;
        self.frequencies = self.share_frequencies(share);
        if let Some(note) = self.share_note() {
            if self.method.rules().whole_spectrum().is_some() || self.frequencies.is_empty() {
                self.warnings.push(note);
            }
        }
    }

    /// What this plan's share of the frequencies is, in words; `None` for the whole band.
    pub(super) fn share_note(&self) -> Option<String> {
        let (share, n) = (self.share, self.band.len);
        if share.is_whole() {
            return None;
        }
        Some(match (self.method.rules().whole_spectrum(), self.frequencies.is_empty()) {
            (Some(why), false) => {
                format!("share {share}: {why}, so this share migrates all {n} frequencies and the other shares none")
            }
            (Some(why), true) => {
                format!("share {share}: {why}; share 1/{} migrates them all, this one none", share.count)
            }
            (_, true) => format!("share {share}: no frequency (more shares than the {n} frequencies)"),
            (_, false) => {
                let df = 1.0 / (self.padded[2] as f64 * self.dt);
                let f = |i: usize| (self.band.first + i) as f64 * df;
                format!(
                    "share {share}: frequencies {}..{} of {n} ({:.2}..{:.2} Hz)",
                    self.frequencies.start + 1,
                    self.frequencies.end,
                    f(self.frequencies.start),
                    f(self.frequencies.end - 1)
                )
            }
        })
    }

    /// The frequencies (indices into the band) that `share` migrates (see [`Plan::restrict_to`]).
    pub fn share_frequencies(&self, share: Share) -> Range<usize> {
        let n = self.band.len;
        match self.method.rules().whole_spectrum() {
            Some(_) if share.index == 0 => 0..n,
            Some(_) => n..n,
            None => {
                let (_, f_max) = self.band_hz();
                let df = 1.0 / (self.padded[2] as f64 * self.dt);
                let rules = self.method.rules();
                let costs: Vec<f64> =
                    (0..n).map(|i| rules.frequency_cost((self.band.first + i) as f64 * df, f_max)).collect();
                share.range_by_cost(&costs)
            }
        }
    }

    /// The image grid: the input's lateral grid and the depth axis.
    pub fn image_geometry(&self) -> Geometry {
        self.image.clone()
    }

    /// The lowest and highest frequency kept (Hz).
    pub fn band_hz(&self) -> (f64, f64) {
        let df = 1.0 / (self.padded[2] as f64 * self.dt);
        (self.band.first as f64 * df, (self.band.first + self.band.len - 1) as f64 * df)
    }

    /// Number of kept frequencies.
    pub fn n_omega(&self) -> usize {
        self.band.len
    }

    /// Number of lateral wavenumbers (points of one padded plane).
    pub fn nk(&self) -> usize {
        self.padded[0] * self.padded[1]
    }

    /// Angular frequency (rad/s) of kept frequency `iw` (0-based within the band).
    pub fn omega(&self, iw: usize) -> f64 {
        angular_frequency(self.band.first + iw, self.padded[2], self.dt)
    }

    /// Weight of kept frequency `iw` in the imaging sum.
    pub fn weight(&self, iw: usize) -> f64 {
        imaging_weight(self.band.first + iw, self.padded[2])
    }

    /// Factor that turns a sum over the kept frequencies of an unnormalised inverse 2-D FFT into image
    /// amplitude: the inverse time FFT at t = 0 and the inverse lateral FFT are both normalised by length.
    pub fn image_scale(&self) -> f64 {
        1.0 / (self.padded[2] as f64 * self.nk() as f64)
    }

    /// The inlines of each ingest chunk, in order: at most `ingest_inlines` each, the first and the last a
    /// quarter of that. While the first chunk is read nothing can be uploaded, and after the last one is
    /// read its upload and transform are all that is left: small ends keep both waits short.
    pub fn ingest_chunks(&self) -> Vec<Range<usize>> {
        let ni = self.input.shape()[0];
        let (full, end) = (self.ingest_inlines, self.ingest_inlines.div_ceil(4));
        if ni <= full + 2 * end {
            return (0..ni).step_by(full).map(|s| s..(s + full).min(ni)).collect();
        }
        let middle = end..ni - end;
        std::iter::once(0..end)
            .chain(middle.clone().step_by(full).map(|s| s..(s + full).min(middle.end)))
            .chain(std::iter::once(ni - end..ni))
            .collect()
    }

    /// `|k|² = kx² + ky²` of every point of the padded plane, in `[il][xl]` order.
    pub fn k_squared(&self) -> Vec<f64> {
        let [ni, nx, _] = self.padded;
        let kx: Vec<f64> = (0..ni).map(|i| wavenumber(i, ni, self.bin[0]).powi(2)).collect();
        let ky: Vec<f64> = (0..nx).map(|j| wavenumber(j, nx, self.bin[1]).powi(2)).collect();
        kx.iter().flat_map(|a| ky.iter().map(move |b| a + b)).collect()
    }

    /// The deepest level computed.
    pub fn last_level(&self) -> usize {
        self.levels.last().map_or(0, |l| l.index)
    }

    /// The depth stretches of block `b`, from the last level of the previous block (or the surface) down to
    /// the block's last level.
    pub fn segments(&self, b: usize) -> Vec<Segment> {
        let block = self.blocks[b].clone();
        let dz = self.depth.step;
        let mut current = if block.start == 0 { 0 } else { self.levels[block.start - 1].index };
        let mut segments = Vec::new();
        for (slot, level) in self.levels[block].iter().enumerate() {
            let mut j = current;
            while j < level.index {
                let v = self.step_velocity[j];
                let n = self.step_velocity[j..level.index].iter().take_while(|&&x| x == v).count();
                segments.push(Segment { velocity: v, thickness: n as f64 * dz, slot: None });
                j += n;
            }
            if current < level.index {
                segments.last_mut().expect("pushed above").slot = Some(slot);
            } else {
                segments.push(Segment { velocity: level.velocity, thickness: 0.0, slot: Some(slot) });
            }
            current = level.index;
        }
        segments
    }

    /// Check that `src` is the input this plan was made for and `request` asks only for planned levels.
    pub fn check(&self, src: &Geometry, request: &ImageRequest) -> Result<()> {
        if src.shape() != self.input.shape() || src.samples != self.input.samples {
            return Err(Error::Request(format!(
                "the plan was made for an input of {:?} samples, the source has {:?}",
                self.input.shape(),
                src.shape()
            )));
        }
        request.check(&self.image)?;
        let planned: Vec<usize> = self.levels.iter().map(|l| l.index).collect();
        if let Some(l) = request.levels().iter().find(|l| planned.binary_search(l).is_err()) {
            return Err(Error::Request(format!("depth level {l} is requested but was not planned")));
        }
        Ok(())
    }
}
