//! The axes of a volume: line numbers, the sample axis in time or depth, and the map to survey
//! coordinates. The bottom layer of the volume model: plain values that know nothing of volumes.

use std::ops::Range;

use serde::{Deserialize, Serialize};

/// A regular axis of line numbers as stored in trace headers (inline or crossline numbers).
///
/// Always ascending: `step > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineAxis {
    pub first: i64,
    pub step: i64,
    pub len: usize,
}

impl LineAxis {
    pub fn new(first: i64, step: i64, len: usize) -> Self {
        assert!(step > 0, "line axes are ascending");
        LineAxis { first, step, len }
    }

    pub fn value(&self, index: usize) -> i64 {
        self.first + self.step * index as i64
    }

    pub fn last(&self) -> i64 {
        self.value(self.len.saturating_sub(1))
    }

    /// The index of a line number, if that number is on this axis.
    pub fn index_of(&self, value: i64) -> Option<usize> {
        // In 128 bits: a line number far from `first` must not overflow the difference.
        let d = i128::from(value) - i128::from(self.first);
        let step = i128::from(self.step);
        if d < 0 || d % step != 0 {
            return None;
        }
        let i = d / step;
        (i < self.len as i128).then_some(i as usize)
    }

    /// Indices of the lines whose numbers lie in `lo..=hi` (in either order).
    pub fn index_range(&self, lo: i64, hi: i64) -> Range<usize> {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        // In 128 bits: with a step near the 64-bit limit, rounding up by adding `step - 1` would wrap.
        let (first, step, len) = (i128::from(self.first), i128::from(self.step), self.len as i128);
        let start = ((i128::from(lo) - first).max(0) + step - 1) / step;
        let end = if i128::from(hi) < first { 0 } else { ((i128::from(hi) - first) / step + 1).min(len) };
        let start = start.min(len);
        start as usize..end.max(start) as usize
    }

    pub fn sub(&self, r: Range<usize>) -> LineAxis {
        LineAxis { first: self.value(r.start), step: self.step, len: r.len() }
    }
}

/// Whether the trace axis is two-way time or depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Two-way time, in milliseconds.
    Time,
    /// Depth, in metres.
    Depth,
}

impl Domain {
    pub fn axis_name(self) -> &'static str {
        match self {
            Domain::Time => "twt",
            Domain::Depth => "depth",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Domain::Time => "ms",
            Domain::Depth => "m",
        }
    }
}

/// The sample axis along each trace: `origin + i * step` in the domain's unit (ms or m).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleAxis {
    pub origin: f64,
    pub step: f64,
    pub len: usize,
    pub domain: Domain,
}

impl SampleAxis {
    pub fn value(&self, index: usize) -> f64 {
        self.origin + self.step * index as f64
    }

    pub fn last(&self) -> f64 {
        self.value(self.len.saturating_sub(1))
    }

    /// The index of the sample nearest to `value`, if `value` lies within half a step of the axis.
    pub fn nearest_index(&self, value: f64) -> Option<usize> {
        let f = (value - self.origin) / self.step;
        let i = f.round();
        (i >= 0.0 && (i as usize) < self.len && (f - i).abs() <= 0.5 + 1e-9).then_some(i as usize)
    }

    /// Indices of the samples whose values lie in `lo..=hi` (in either order), with a small tolerance.
    pub fn index_range(&self, lo: f64, hi: f64) -> Range<usize> {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let eps = 1e-6;
        let start = ((lo - self.origin) / self.step - eps).ceil().max(0.0) as usize;
        let end = (((hi - self.origin) / self.step + eps).floor() + 1.0).max(0.0) as usize;
        let start = start.min(self.len);
        start..end.min(self.len).max(start)
    }

    pub fn sub(&self, r: Range<usize>) -> SampleAxis {
        SampleAxis { origin: self.value(r.start), step: self.step, len: r.len(), domain: self.domain }
    }
}

/// Affine map from grid indices to projected survey coordinates (metres or feet, after the SEG-Y
/// coordinate scalar): `(x, y) = origin + il_index * per_iline + xl_index * per_xline`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoordTransform {
    pub origin: [f64; 2],
    /// Displacement from one inline to the next (same crossline).
    pub per_iline: [f64; 2],
    /// Displacement from one crossline to the next (same inline).
    pub per_xline: [f64; 2],
}

impl CoordTransform {
    pub fn xy(&self, il_index: f64, xl_index: f64) -> [f64; 2] {
        [
            self.origin[0] + il_index * self.per_iline[0] + xl_index * self.per_xline[0],
            self.origin[1] + il_index * self.per_iline[1] + xl_index * self.per_xline[1],
        ]
    }

    /// Distance between adjacent inlines and between adjacent crosslines.
    pub fn bin_size(&self) -> [f64; 2] {
        [self.per_iline[0].hypot(self.per_iline[1]), self.per_xline[0].hypot(self.per_xline[1])]
    }

    /// The same map for a grid that starts at `(il0, xl0)` of this one.
    pub fn shifted(&self, il0: usize, xl0: usize) -> CoordTransform {
        CoordTransform { origin: self.xy(il0 as f64, xl0 as f64), ..*self }
    }
}
