//! Amplitude statistics of values or of a whole source, read a block at a time, with non-finite samples
//! counted apart.

use serde::Serialize;

use super::geometry::IndexBox;
use super::reader::VolumeReader;
use crate::error::Result;

/// Amplitude statistics of a volume, with non-finite samples (NaN, ±Inf) counted apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AmplitudeStats {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub rms: f64,
    /// Finite samples counted.
    pub finite: u64,
    pub nan: u64,
    pub infinite: u64,
}

impl AmplitudeStats {
    /// Statistics of `values`.
    pub fn of(values: &[f32]) -> Self {
        use rayon::prelude::*;
        let acc = values.par_chunks(1 << 16).map(Accumulator::of).reduce(Accumulator::default, Accumulator::merge);
        acc.finish()
    }

    /// Statistics of a whole source, read a block of inlines at a time (never the whole volume at once).
    pub fn of_reader(src: &dyn VolumeReader, progress: &dyn crate::progress::Progress) -> Result<Self> {
        use rayon::prelude::*;
        let g = src.geometry();
        let per_inline = (g.xlines.len * g.samples.len).max(1);
        let block = ((64usize << 20) / 4 / per_inline).clamp(1, g.ilines.len.max(1));
        let mut buf: Vec<f32> =
            crate::alloc::try_vec(block * per_inline, std::path::Path::new(&src.describe()), "a block of inlines")?;
        let mut acc = Accumulator::default();
        progress.begin("statistics", g.ilines.len as u64);
        let mut il = 0;
        while il < g.ilines.len {
            crate::cancel::CancelToken::process().check()?;
            let n = block.min(g.ilines.len - il);
            let b = IndexBox { il: il..il + n, xl: 0..g.xlines.len, s: 0..g.samples.len };
            let out = &mut buf[..b.len()];
            src.read_box(&b, out)?;
            // Dead traces read as zeros; leave them out of the statistics of real data.
            let ns = g.samples.len.max(1);
            let live = &g.live[il * g.xlines.len..(il + n) * g.xlines.len];
            let part = out
                .par_chunks(ns)
                .zip(live.par_iter())
                .filter(|(_, l)| **l)
                .map(|(t, _)| Accumulator::of(t))
                .reduce(Accumulator::default, Accumulator::merge);
            acc = acc.merge(part);
            progress.advance(n as u64);
            il += n;
        }
        progress.finish();
        Ok(acc.finish())
    }
}

#[derive(Clone, Copy, Default)]
struct Accumulator {
    min: f64,
    max: f64,
    sum: f64,
    sum2: f64,
    finite: u64,
    nan: u64,
    infinite: u64,
}

impl Accumulator {
    fn of(values: &[f32]) -> Self {
        let mut a = Accumulator { min: f64::INFINITY, max: f64::NEG_INFINITY, ..Default::default() };
        for &v in values {
            if v.is_finite() {
                let v = v as f64;
                a.min = a.min.min(v);
                a.max = a.max.max(v);
                a.sum += v;
                a.sum2 += v * v;
                a.finite += 1;
            } else if v.is_nan() {
                a.nan += 1;
            } else {
                a.infinite += 1;
            }
        }
        a
    }

    fn merge(self, o: Self) -> Self {
        if self.finite + self.nan + self.infinite == 0 {
            return o;
        }
        if o.finite + o.nan + o.infinite == 0 {
            return self;
        }
        Accumulator {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
            sum: self.sum + o.sum,
            sum2: self.sum2 + o.sum2,
            finite: self.finite + o.finite,
            nan: self.nan + o.nan,
            infinite: self.infinite + o.infinite,
        }
    }

    fn finish(self) -> AmplitudeStats {
        let n = self.finite.max(1) as f64;
        let any = self.finite > 0;
        AmplitudeStats {
            min: if any { self.min } else { 0.0 },
            max: if any { self.max } else { 0.0 },
            mean: self.sum / n,
            rms: (self.sum2 / n).sqrt(),
            finite: self.finite,
            nan: self.nan,
            infinite: self.infinite,
        }
    }
}
