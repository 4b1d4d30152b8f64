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

use super::grid::{summarise_slowness, MixedRows, SlownessSummary, SummaryKey, VelocityGrid};

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
}

#[cfg(test)]
mod tests;
