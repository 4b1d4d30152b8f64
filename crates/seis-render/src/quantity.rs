//! What the values of a picture are and how they map onto its colour scale: the quantity, its clip (one
//! picture's or a group's) with the rule in words, and the display gain that may change the values shown.

use std::borrow::Cow;

use serde::Serialize;

use crate::annotate;
use crate::clip::{self, ClipScope, ClipSetting, ClipSource};
use crate::colormap::Colormap;
use crate::gain;
use crate::options::RenderOptions;
use crate::provenance::number;
use crate::slice::{PlotAxis, Slice};

/// How the values of a picture map onto its colour scale.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ValueRange {
    /// `[-clip, clip]`, zero in the middle (amplitudes).
    Symmetric,
    /// `[0, clip]` (envelopes, frequencies).
    FromZero,
    /// A fixed range whatever the data (phase in degrees, cosine of phase).
    Fixed { lo: f64, hi: f64 },
    /// From the smallest to the largest value (velocities): a quantity that is positive everywhere and whose
    /// zero means nothing is drawn over the span it has.
    MinMax,
}

/// What the values of a picture are.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quantity {
    /// `amplitude`, `envelope`, `instantaneous phase`, ...
    pub name: String,
    /// `°`, `Hz`, `1/km`, or empty.
    pub unit: String,
    pub range: ValueRange,
    /// The colour map this quantity is drawn with; `None`: the `colormap` option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colormap: Option<Colormap>,
    /// Whether the display gain applies (it does to amplitudes only).
    #[serde(skip)]
    pub gain: bool,
}

impl Quantity {
    pub fn amplitude() -> Self {
        Quantity {
            name: "amplitude".into(),
            unit: String::new(),
            range: ValueRange::Symmetric,
            colormap: None,
            gain: true,
        }
    }

    /// Interval velocity in m/s: drawn from its smallest to its largest value on a sequential map.
    pub fn velocity() -> Self {
        Quantity {
            name: "velocity".into(),
            unit: "m/s".into(),
            range: ValueRange::MinMax,
            colormap: Some(Colormap::Heat),
            gain: false,
        }
    }

    /// The name with its unit in parentheses, where it has one.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// The clip of a picture, decided for it alone or for a group of pictures (see [`decide_clip`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub value: f32,
    /// The low end of a [`ValueRange::MinMax`] scale (`value` is its high end); `None` for the others.
    pub low: Option<f32>,
    pub source: ClipSource,
    /// Over which pictures it was taken; `None` for a fixed clip or range.
    pub scope: Option<ClipScope>,
    /// The pictures it was taken over, in words: "in this picture", "over the 3 inline pictures of this run".
    pub over: String,
}

/// The clip of the values of a group of pictures of one quantity (their values after the display gain;
/// see [`display_values`]). `over` says which pictures they are, for the note under each.
pub fn decide_clip(values: &[&[f32]], quantity: &Quantity, opts: &RenderOptions, scope: ClipScope, over: &str) -> Clip {
    match (quantity.range, opts.clip) {
        (ValueRange::Fixed { hi, .. }, _) => {
            Clip { value: hi as f32, low: None, source: ClipSource::Fixed, scope: None, over: "the full range".into() }
        }
        // A fixed clip is in the units of the data: amplitudes and envelopes, not frequencies.
        (ValueRange::MinMax, _) => {
            let (lo, hi) = clip::min_max(values);
            Clip { value: hi, low: Some(lo), source: ClipSource::MinMax, scope: Some(scope), over: over.to_string() }
        }
        (_, ClipSetting::Fixed(c)) if quantity.unit.is_empty() => {
            Clip { value: c as f32, low: None, source: ClipSource::Fixed, scope: None, over: "fixed".into() }
        }
        _ => {
            let (value, source) = clip::shared_clip(values, opts.clip_percentile);
            Clip { value, low: None, source, scope: Some(scope), over: over.to_string() }
        }
    }
}

impl Clip {
    /// The values at the two ends of the colour scale.
    pub fn range(&self, quantity: &Quantity) -> (f32, f32) {
        match quantity.range {
            ValueRange::Symmetric => (-self.value, self.value),
            ValueRange::FromZero => (0.0, self.value),
            ValueRange::Fixed { lo, hi } => (lo as f32, hi as f32),
            ValueRange::MinMax => (self.low.unwrap_or(0.0), self.value),
        }
    }

    /// The rule that set the colour scale, in words.
    pub fn rule(&self, quantity: &Quantity) -> String {
        let (lo, hi) = self.range(quantity);
        let unit = match quantity.unit.as_str() {
            "" => String::new(),
            "°" => "°".into(),
            u => format!(" {u}"),
        };
        let span = match quantity.range {
            ValueRange::Symmetric => format!("±{}{unit}", annotate::amplitude_label(self.value)),
            _ => format!("{} to {}{unit}", annotate::amplitude_label(lo), annotate::amplitude_label(hi)),
        };
        let name = &quantity.name;
        let why = match (self.source, quantity.range) {
            (_, ValueRange::Fixed { .. }) => format!("the whole range of {name}"),
            (ClipSource::Fixed, _) => "a fixed clip".into(),
            (ClipSource::MinMax, _) => format!("the smallest and the largest {name} {}", self.over),
            (ClipSource::Percentile { percentile }, _) => {
                format!("the {} percentile of |{name}| {}", ordinal(percentile), self.over)
            }
            (ClipSource::MaxAbs { percentile }, _) => format!(
                "the largest |{name}| {} (its {} percentile is zero: most samples are zero)",
                self.over,
                ordinal(percentile)
            ),
        };
        match quantity.range {
            ValueRange::Fixed { .. } => format!("Colour scale {span}: {why}."),
            _ => format!("Colour scale {span}: {why}; values beyond it take the end colours."),
        }
    }
}

/// `99` → `99th`, `99.5` → `99.5th`, `2` → `2nd`.
pub(crate) fn ordinal(p: f64) -> String {
    let n = number(p);
    let suffix = if p.fract() != 0.0 {
        "th"
    } else {
        match (p as i64 % 10, p as i64 % 100) {
            (1, x) if x != 11 => "st",
            (2, x) if x != 12 => "nd",
            (3, x) if x != 13 => "rd",
            _ => "th",
        }
    };
    format!("{n}{suffix}")
}

/// Whether `axis` runs along traces (depth or time), so that a display gain applies along it.
fn along_traces(axis: &PlotAxis) -> bool {
    matches!(axis.unit.as_str(), "m" | "ms" | "s") && matches!(axis.name.as_str(), "depth" | "twt" | "time")
}

/// The values a picture of `slice` shows: the slice itself, or with the display gain applied where it
/// applies (amplitudes of sections).
pub fn display_values<'s>(slice: &Slice<'s>, quantity: &Quantity, opts: &RenderOptions) -> Cow<'s, [f32]> {
    match opts.agc_window {
        Some(w) if quantity.gain && along_traces(&slice.rows) => {
            Cow::Owned(gain::agc(slice.data, &slice.rows, slice.cols.len, w))
        }
        _ => Cow::Borrowed(slice.data),
    }
}
