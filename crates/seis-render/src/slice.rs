//! What is drawn: a 2-D slice of values and its two axes, with their true spacing. The bottom layer of the
//! crate: every other module takes its slices from here.

use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, LineAxis, SampleAxis};

/// One axis of a slice: sample `i` lies at `origin + i · step`, in `unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotAxis {
    /// `iline`, `xline`, `depth` or `twt` for slices of a volume; any name is drawn as given.
    pub name: String,
    /// `m`, `ms`, or empty for line numbers.
    pub unit: String,
    pub origin: f64,
    pub step: f64,
    pub len: usize,
    /// True distance between neighbouring samples in metres, which sets the aspect; `None` when unknown
    /// (a time axis, or lines of a survey without coordinates).
    pub spacing_m: Option<f64>,
}

impl PlotAxis {
    /// An axis of line numbers, `spacing_m` apart on the ground.
    pub fn lines(name: &str, axis: &LineAxis, spacing_m: Option<f64>) -> Self {
        PlotAxis {
            name: name.into(),
            unit: String::new(),
            origin: axis.first as f64,
            step: axis.step as f64,
            len: axis.len,
            spacing_m,
        }
    }

    /// The sample axis of traces: depth in metres (its step is its spacing) or two-way time in ms.
    pub fn samples(axis: &SampleAxis) -> Self {
        let spacing_m = match axis.domain {
            Domain::Depth => Some(axis.step.abs()),
            Domain::Time => None,
        };
        PlotAxis {
            name: axis.domain.axis_name().into(),
            unit: axis.domain.unit().into(),
            origin: axis.origin,
            step: axis.step,
            len: axis.len,
            spacing_m,
        }
    }

    /// The value at a (possibly fractional) sample index.
    pub fn value(&self, index: f64) -> f64 {
        self.origin + self.step * index
    }

    pub fn last(&self) -> f64 {
        self.value(self.len.saturating_sub(1) as f64)
    }

    /// The axis title: the name, and the unit in parentheses where there is one.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }

    /// Refuse an axis that cannot be drawn, naming it as the `role` axis of the picture.
    pub(crate) fn check(&self, role: &str) -> Result<()> {
        let fail = |what: String| Err(Error::Request(format!("cannot render the {role} axis `{}`: {what}", self.name)));
        if self.len == 0 {
            return fail("it has no samples".into());
        }
        if !self.origin.is_finite() || !self.step.is_finite() || self.step == 0.0 {
            return fail(format!("origin {} and step {} must be finite, the step non-zero", self.origin, self.step));
        }
        match self.spacing_m {
            Some(d) if !(d.is_finite() && d > 0.0) => fail(format!("spacing {d} m must be positive")),
            _ => Ok(()),
        }
    }
}

/// A 2-D slice to draw: `data` is row-major, `rows.len` rows of `cols.len` values.
#[derive(Clone, Debug)]
pub struct Slice<'a> {
    pub data: &'a [f32],
    /// Vertical, drawn downwards: the first sample is the top row (the shallowest, for a section).
    pub rows: PlotAxis,
    /// Horizontal, drawn left to right.
    pub cols: PlotAxis,
}
