//! The shape and labels of a volume (its axes, coordinates and live traces) and the boxes that select
//! parts of it by index or by header value.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::axes::{CoordTransform, LineAxis, SampleAxis};
use crate::error::{Error, Result};

/// The shape and labels of a volume: axes, survey coordinates and which traces hold data.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    pub ilines: LineAxis,
    pub xlines: LineAxis,
    pub samples: SampleAxis,
    /// `None` when the file carries no usable coordinates.
    pub coords: Option<CoordTransform>,
    /// One flag per (iline, xline) in memory order: `false` where the file had no trace (filled with zeros).
    pub live: Vec<bool>,
}

/// The live flags are counted, not listed: a survey has millions of traces.
impl std::fmt::Debug for Geometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.live.iter().filter(|&&l| l).count();
        f.debug_struct("Geometry")
            .field("ilines", &self.ilines)
            .field("xlines", &self.xlines)
            .field("samples", &self.samples)
            .field("coords", &self.coords)
            .field("live", &format_args!("{live} of {}", self.live.len()))
            .finish()
    }
}

impl Geometry {
    /// A fully live geometry without coordinates.
    pub fn regular(ilines: LineAxis, xlines: LineAxis, samples: SampleAxis) -> Self {
        let n = ilines.len * xlines.len;
        Geometry { ilines, xlines, samples, coords: None, live: vec![true; n] }
    }

    /// `[n_iline, n_xline, n_sample]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.ilines.len, self.xlines.len, self.samples.len]
    }

    pub fn n_traces(&self) -> usize {
        self.ilines.len * self.xlines.len
    }

    pub fn n_values(&self) -> usize {
        self.n_traces() * self.samples.len
    }

    pub fn n_missing(&self) -> usize {
        self.live.iter().filter(|l| !**l).count()
    }

    pub fn full_box(&self) -> IndexBox {
        IndexBox { il: 0..self.ilines.len, xl: 0..self.xlines.len, s: 0..self.samples.len }
    }

    /// The geometry of a box cut from this one.
    pub fn subset(&self, b: &IndexBox) -> Geometry {
        let nx = self.xlines.len;
        let live =
            b.il.clone().flat_map(|i| b.xl.clone().map(move |j| (i, j))).map(|(i, j)| self.live[i * nx + j]).collect();
        Geometry {
            ilines: self.ilines.sub(b.il.clone()),
            xlines: self.xlines.sub(b.xl.clone()),
            samples: self.samples.sub(b.s.clone()),
            coords: self.coords.map(|c| c.shifted(b.il.start, b.xl.start)),
            live,
        }
    }

    pub fn iline_index(&self, value: i64) -> Result<usize> {
        self.ilines.index_of(value).ok_or_else(|| {
            Error::Request(format!(
                "inline {value} is not in the survey (inlines {}..={} step {})",
                self.ilines.first,
                self.ilines.last(),
                self.ilines.step
            ))
        })
    }

    pub fn xline_index(&self, value: i64) -> Result<usize> {
        self.xlines.index_of(value).ok_or_else(|| {
            Error::Request(format!(
                "crossline {value} is not in the survey (crosslines {}..={} step {})",
                self.xlines.first,
                self.xlines.last(),
                self.xlines.step
            ))
        })
    }

    pub fn sample_index(&self, value: f64) -> Result<usize> {
        let a = &self.samples;
        a.nearest_index(value).ok_or_else(|| {
            Error::Request(format!(
                "{} {value} {} is outside the sample axis ({}..={} {} step {})",
                a.domain.axis_name(),
                a.domain.unit(),
                a.origin,
                a.last(),
                a.domain.unit(),
                a.step
            ))
        })
    }

    /// Turn a selection by header values into grid indices, or say why it selects nothing.
    pub fn index_box(&self, sel: &ValueBox) -> Result<IndexBox> {
        let il = match sel.iline {
            Some([a, b]) => self.ilines.index_range(a, b),
            None => 0..self.ilines.len,
        };
        let xl = match sel.xline {
            Some([a, b]) => self.xlines.index_range(a, b),
            None => 0..self.xlines.len,
        };
        let s = match sel.sample {
            Some([a, b]) => self.samples.index_range(a, b),
            None => 0..self.samples.len,
        };
        let b = IndexBox { il, xl, s };
        if b.is_empty() {
            return Err(Error::Request(format!(
                "the box {sel} selects nothing from inlines {}..={}, crosslines {}..={}, {} {}..={} {}",
                self.ilines.first,
                self.ilines.last(),
                self.xlines.first,
                self.xlines.last(),
                self.samples.domain.axis_name(),
                self.samples.origin,
                self.samples.last(),
                self.samples.domain.unit()
            )));
        }
        Ok(b)
    }
}

/// A box of grid indices `[il][xl][s]`; the data of a box is stored in that order, samples contiguous.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexBox {
    pub il: Range<usize>,
    pub xl: Range<usize>,
    pub s: Range<usize>,
}

impl IndexBox {
    pub fn shape(&self) -> [usize; 3] {
        [self.il.len(), self.xl.len(), self.s.len()]
    }

    pub fn len(&self) -> usize {
        self.il.len() * self.xl.len() * self.s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A selection by header values; `None` on an axis means all of it. Bounds are inclusive, in either order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueBox {
    pub iline: Option<[i64; 2]>,
    pub xline: Option<[i64; 2]>,
    /// Time in ms or depth in m, following the volume's domain.
    pub sample: Option<[f64; 2]>,
}

impl std::fmt::Display for ValueBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some([a, b]) = self.iline {
            parts.push(format!("iline {a}..={b}"));
        }
        if let Some([a, b]) = self.xline {
            parts.push(format!("xline {a}..={b}"));
        }
        if let Some([a, b]) = self.sample {
            parts.push(format!("sample {a}..={b}"));
        }
        if parts.is_empty() {
            parts.push("everything".into());
        }
        write!(f, "[{}]", parts.join(", "))
    }
}
