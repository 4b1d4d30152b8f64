//! A 3-D model given as velocity functions on a full grid of locations, kept as those functions and each
//! seismic line's taps between them, and mixed into depth slices where a slice is asked for.
//!
//! Made whole, the model of a 2048 × 2048-trace survey 400 levels deep is 6.7 GB: computing it (a third of
//! it the kernel clearing fresh pages) was the slowest stage of planning, and every rank of a run over
//! several GPUs repeated it. Kept as functions and taps it is a few kilobytes, and a slice costs two
//! interpolations per trace between values a row shares. `seisimage validate -v` of such a job (functions
//! at the four corners, 301 model levels) on a 2-core machine: the model in 1.4 s instead of 12.7 s, a peak
//! of 4.4 GB (the mapped input) instead of 9.7 GB; on a 64-core host with four H100s, `validate` in 2.8-4.3 s
//! instead of 6.3-7.3 s.

use std::borrow::Cow;

use crate::lateral::{GridTaps, Tap};

/// Functions sampled on the model's depth axis and the taps that mix them onto the seismic's traces.
#[derive(Clone, Debug, PartialEq)]
pub struct GridMix {
    /// Velocity of each function at each depth sample, level after level (`[level][function]`).
    levels: Vec<f64>,
    functions: usize,
    taps: GridTaps,
    /// The seismic's crosslines in runs between the same two functions' columns, and each crossline's
    /// weight of the second: a row is then a few runs of one multiply-add each, which vectorise.
    runs: Vec<Run>,
    col_weights: Vec<f64>,
}

/// Consecutive seismic crosslines `cols` between located crosslines `lo` and `hi`.
#[derive(Clone, Debug, PartialEq)]
struct Run {
    cols: std::ops::Range<usize>,
    lo: usize,
    hi: usize,
    /// The crosslines of the run with the least and the greatest weight of `hi`.
    ends: [usize; 2],
}

impl GridMix {
    /// `sampled[f][k]`: function `f` at depth sample `k`; `taps` place the functions on the seismic's lines.
    pub fn new(sampled: &[Vec<f64>], taps: GridTaps) -> Self {
        let functions = sampled.len();
        let depth = sampled.first().map_or(0, Vec::len);
        let levels = (0..depth).flat_map(|k| sampled.iter().map(move |f| f[k])).collect();
        let mut runs: Vec<Run> = Vec::new();
        for (j, c) in taps.cols.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if (run.lo, run.hi) == (c.lo, c.hi) => run.cols.end = j + 1,
                _ => runs.push(Run { cols: j..j + 1, lo: c.lo, hi: c.hi, ends: [j, j] }),
            }
        }
        let col_weights: Vec<f64> = taps.cols.iter().map(|c| c.w).collect();
        for run in &mut runs {
            let by_weight = |a: &usize, b: &usize| col_weights[*a].total_cmp(&col_weights[*b]);
            let least = run.cols.clone().min_by(by_weight).unwrap_or(run.cols.start);
            let greatest = run.cols.clone().max_by(by_weight).unwrap_or(run.cols.start);
            run.ends = [least, greatest];
        }
        GridMix { levels, functions, taps, runs, col_weights }
    }

    /// Values held in memory: the functions' samples.
    pub fn held_values(&self) -> usize {
        self.levels.len()
    }

    pub fn n_levels(&self) -> usize {
        self.levels.len() / self.functions.max(1)
    }

    /// The functions' values, for a digest.
    pub fn sampled(&self) -> &[f64] {
        &self.levels
    }

    /// The taps, for a digest.
    pub fn taps(&self) -> &GridTaps {
        &self.taps
    }

    fn level(&self, k: usize) -> &[f64] {
        &self.levels[k * self.functions..(k + 1) * self.functions]
    }

    /// Depth sample `k` of seismic inline `i` (every crossline), as f32.
    pub fn row(&self, k: usize, i: usize) -> Cow<'_, [f32]> {
        let mut out = vec![0.0; self.taps.cols.len()];
        self.fill_row(k, i, &mut out);
        Cow::Owned(out)
    }

    /// [`GridMix::row`] into `out` (one value per seismic crossline).
    pub fn fill_row(&self, k: usize, i: usize, out: &mut [f32]) {
        for run in &self.runs {
            let (lo, hi) = self.run_ends(k, i, run);
            for (o, &w) in out[run.cols.clone()].iter_mut().zip(&self.col_weights[run.cols.clone()]) {
                *o = along(lo, hi, w);
            }
        }
    }

    /// The least and the greatest value of [`GridMix::row`] `k`, `i`, without mixing the row. Along a run
    /// of crosslines a value is `lo + w · (hi - lo)` for the run's `lo` and `hi`, and each rounded step of
    /// it is monotonic in `w`, so the run's extremes lie at its least and greatest weight, as computed.
    pub fn row_range(&self, k: usize, i: usize) -> (f32, f32) {
        self.runs.iter().fold((f32::INFINITY, 0.0f32), |(least, greatest), run| {
            let (lo, hi) = self.run_ends(k, i, run);
            let [a, b] = run.ends.map(|j| along(lo, hi, self.col_weights[j]));
            (least.min(a).min(b), greatest.max(a).max(b))
        })
    }

    /// Depth sample `k` of seismic inline `i` at the located crosslines `run` lies between: the inline
    /// taps are the same along the row, so the located columns are mixed along the inlines once per run.
    fn run_ends(&self, k: usize, i: usize, run: &Run) -> (f64, f64) {
        let (v, t) = (self.level(k), self.taps.rows[i]);
        let column = |b: usize| between(v[self.taps.function(t.lo, b)], v[self.taps.function(t.hi, b)], t);
        (column(run.lo), column(run.hi))
    }

    /// Depth sample `k` of the trace at seismic inline `i`, crossline `j`.
    pub fn value(&self, k: usize, i: usize, j: usize) -> f32 {
        let (v, t, c) = (self.level(k), self.taps.rows[i], self.taps.cols[j]);
        let at = |b: usize| between(v[self.taps.function(t.lo, b)], v[self.taps.function(t.hi, b)], t);
        between(at(c.lo), at(c.hi), c) as f32
    }

    /// Whether every function sample is a usable velocity: then so is every mix of them.
    pub fn first_unusable(&self) -> Option<(usize, usize, f64)> {
        let f = self.functions.max(1);
        self.levels.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v > 0.0)).map(|(n, v)| (n % f, n / f, *v))
    }
}

/// A value of a run of crosslines between the located columns' `lo` and `hi`, `w` of the way.
fn along(lo: f64, hi: f64, w: f64) -> f32 {
    (lo + w * (hi - lo)) as f32
}

/// `lo` and `hi` mixed by tap `t`: `lo` itself where the tap holds an edge.
fn between(lo: f64, hi: f64, t: Tap) -> f64 {
    lo + t.w * (hi - lo)
}
