//! What planning needs of a 3-D model, the least and the mean slowness of a depth over every trace, found
//! for all the depths a plan asks for in one pass over the model rather than one pass per depth.
//!
//! A plan asks for every image level (the record's reach, the levels' reference velocities) and every
//! step between two levels (the steps' reference velocities): about twice as many depths as levels. Asked
//! one depth at a time, each was a sweep over the whole lateral grid that mixed its two depth samples
//! again, so each depth sample of a model of functions was mixed about three times, and every depth below
//! the model's last sample (where that sample holds) was swept again. Here the depths are taken together,
//! each depth sample of an inline is mixed once for all the depths around it, and depths with the same
//! two samples and weight share one summary. The summaries are bit for bit those of the sweep per depth:
//! the same slownesses, whose least is the least in any order and whose f32 values add up exactly in f64
//! in any order (see [`VelocityGrid::slowness_summary`]).
//!
//! On a 2-core machine, a split-step job of 1024 × 1024 traces × 200 samples of 4 ms (`seisimage synth
//! --model diffractor`), functions at the four corners (1800-3500 m/s; a model of 301 levels), dz 10 m,
//! zmax 4000 m (401 levels), three runs of each binary alternated: `seisimage -v validate` plans in
//! 0.14-0.15 s instead of 0.24-0.25 s (the model, whose range now comes from the ends of its runs of
//! crosslines, in 0.003 s instead of 0.07 s); `validate` takes 0.20-0.21 s instead of 0.37-0.53 s, and
//! `reduce JOB --shards 4` (fmax 2 Hz) 1.20-1.30 s instead of 1.23-1.48 s, most of it reading and
//! writing the products.

use rayon::prelude::*;

use super::grid::{summarise_slowness, SlownessSummary, Values, VelocityGrid};

/// A summary's key: the two depth samples around the depth, the deeper one's weight (its bits) and the
/// grid's scale (its bits). Depths with the same key have the same slownesses.
pub(super) type SummaryKey = (usize, usize, u32, u64);

/// Depths summarised in one pass: the partial summaries of a pass, per worker, stay small however many
/// depths a plan asks for.
const DEPTHS_PER_PASS: usize = 512;

impl VelocityGrid {
    /// The key of depth `z`'s summary.
    pub(super) fn summary_key(&self, z: f64) -> SummaryKey {
        let (k0, k1, w) = self.bracket(z);
        (k0, k1, w.to_bits(), self.scale.to_bits())
    }

    /// Find and keep the [`VelocityGrid::slowness_summary`] of every depth in `depths` not yet known, in
    /// one pass over the model: asking for any of them afterwards is free.
    pub fn summarise_depths(&self, depths: &[f64]) {
        let mut wanted: Vec<(usize, usize, f32)> = {
            let known = self.data.summaries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            depths.iter().filter(|z| !known.contains_key(&self.summary_key(**z))).map(|z| self.bracket(*z)).collect()
        };
        // In depth order, so that a pass over an inline reads (or mixes) each depth sample once.
        wanted.sort_by_key(|&(k0, k1, w)| (k0, k1, w.to_bits()));
        wanted.dedup_by_key(|&mut (k0, k1, w)| (k0, k1, w.to_bits()));
        for brackets in wanted.chunks(DEPTHS_PER_PASS) {
            let found = self.summarise_brackets(brackets);
            let mut known = self.data.summaries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            for (&(k0, k1, w), summary) in brackets.iter().zip(found) {
                known.insert((k0, k1, w.to_bits(), self.scale.to_bits()), summary);
            }
        }
    }

    /// The summaries of `brackets` (each the two depth samples around a depth and the deeper one's
    /// weight), sorted by depth: inline after inline, each inline's summaries of every bracket.
    fn summarise_brackets(&self, brackets: &[(usize, usize, f32)]) -> Vec<SlownessSummary> {
        let n = brackets.len();
        let scale = self.scale as f32;
        let nothing = || (vec![f32::INFINITY; n], vec![0.0f64; n]);
        let (least, sum) = (0..self.geometry.ilines.len)
            .into_par_iter()
            .fold(
                || (nothing(), MixedRows::default()),
                |((mut least, mut sum), mut rows), i| {
                    for (b, &(k0, k1, w)) in brackets.iter().enumerate() {
                        let (l, s) = self.with_rows(&mut rows, [k0, k1], i, |a, b| summarise_slowness(a, b, w, scale));
                        least[b] = least[b].min(l);
                        sum[b] += s;
                    }
                    ((least, sum), rows)
                },
            )
            .map(|(partial, _)| partial)
            .reduce(nothing, |(mut least, mut sum), (l, s)| {
                for b in 0..n {
                    least[b] = least[b].min(l[b]);
                    sum[b] += s[b];
                }
                (least, sum)
            });
        let traces = self.geometry.n_traces() as f64;
        least
            .into_iter()
            .zip(sum)
            .map(|(least, sum)| SlownessSummary { least: least as f64, mean: sum / traces })
            .collect()
    }

    /// `f` of depth samples `k0` and `k1` of seismic inline `i`: rows of a stored grid as they are, rows
    /// of a mixed grid mixed into `rows` unless they are there from the bracket before.
    pub(super) fn with_rows<R>(
        &self,
        rows: &mut MixedRows,
        [k0, k1]: [usize; 2],
        i: usize,
        f: impl FnOnce(&[f32], &[f32]) -> R,
    ) -> R {
        match &self.data.values {
            Values::Stored(_) => f(&self.row(k0, i), &self.row(k1, i)),
            Values::Mixed(mix) => {
                let nx = self.geometry.xlines.len;
                let first = rows.slot(k0, i, None, |out| {
                    out.resize(nx, 0.0);
                    mix.fill_row(k0, i, out)
                });
                let second = rows.slot(k1, i, Some(first), |out| {
                    out.resize(nx, 0.0);
                    mix.fill_row(k1, i, out)
                });
                f(&rows.rows[first], &rows.rows[second])
            }
        }
    }
}

/// The two rows of a mixed grid last mixed by a worker, each with its depth sample and inline.
#[derive(Default)]
pub(super) struct MixedRows {
    held: [Option<(usize, usize)>; 2],
    rows: [Vec<f32>; 2],
    /// The slot to fill next: the one filled less recently.
    next: usize,
}

impl MixedRows {
    /// The slot holding depth sample `k` of inline `i`, mixed by `fill` into a slot other than `keep` when
    /// it is not there.
    fn slot(&mut self, k: usize, i: usize, keep: Option<usize>, fill: impl FnOnce(&mut Vec<f32>)) -> usize {
        if let Some(s) = self.held.iter().position(|h| *h == Some((k, i))) {
            return s;
        }
        let s = if keep == Some(self.next) { 1 - self.next } else { self.next };
        fill(&mut self.rows[s]);
        self.held[s] = Some((k, i));
        self.next = 1 - s;
        s
    }
}

#[cfg(test)]
mod tests;
