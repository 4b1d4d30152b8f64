//! The JSON file written next to every image: what its axes are, which pixel shows which line, time or
//! depth, and how amplitudes became colours, so that the picture can be read, measured and reproduced.

use serde::{Deserialize, Serialize};

use super::clip::{ClipScope, ClipSource};
use super::orientation::MapView;
use super::resample::Aspect;
use super::{Colormap, Display, PlotAxis, Provenance};

/// Everything needed to read an image quantitatively.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// File name of the image (in the same folder as the sidecar).
    pub image: String,
    /// Size of the whole image in pixels.
    pub width: u32,
    pub height: u32,
    /// The vertical axis: pixel rows, its first sample at the top.
    pub rows: AxisRecord,
    /// The horizontal axis: pixel columns, its first sample on the left.
    pub cols: AxisRecord,
    /// Slices side by side (the members of a velocity scan): each panel's title and its own horizontal
    /// axis on the pixel columns that show it; `cols` then counts the columns of every panel and the gaps
    /// between them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub panels: Vec<PanelRecord>,
    /// What the values are: `amplitude`, `envelope`, ...
    pub quantity: QuantityRecord,
    pub display: Display,
    pub colormap: Colormap,
    /// Which colour is which value, in words.
    pub polarity: String,
    pub clip: ClipRecord,
    /// The values at the two ends of the colour scale (of the wiggle swing for wiggles).
    pub scale: [f32; 2],
    /// How each axis was carried onto its pixels.
    pub sampling: SamplingRecord,
    /// The display gain of the picture, if any (the files of the product are not gained).
    pub gain: Option<GainRecord>,
    /// Colour of samples without a finite value.
    pub no_data_rgb: [u8; 3],
    /// How many samples of the slice were NaN or infinite.
    pub nonfinite_samples: usize,
    pub aspect: Aspect,
    pub vertical_exaggeration: f64,
    /// How a horizontal slice is arranged on the picture (map orientation), if it is one.
    pub map: Option<MapView>,
    pub title: Option<String>,
    /// The notes written under the picture: the colour scale's rule, aspect, orientation.
    pub notes: Vec<String>,
    /// The footer written under the notes.
    pub footer: Vec<String>,
    /// What produced the picture, where known.
    pub provenance: Option<Provenance>,
    /// The program and version that drew the image.
    pub software: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuantityRecord {
    pub name: String,
    pub unit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GainRecord {
    /// AGC window, in `unit`.
    pub agc_window: f64,
    pub unit: String,
}

/// How the samples of each axis became pixels: `cells` (each sample a block of its own colour),
/// `interpolated` (enlarged, linearly between sample centres) or `averaged` (shrunk, or one pixel a sample).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingRecord {
    pub rows: String,
    pub cols: String,
}

impl SamplingRecord {
    pub(crate) fn new(cells: [bool; 2], samples: [usize; 2], pixels: [usize; 2]) -> Self {
        let word = |k: usize| {
            if cells[k] {
                "cells"
            } else if pixels[k] > samples[k] {
                "interpolated"
            } else {
                "averaged"
            }
            .to_string()
        };
        SamplingRecord { rows: word(0), cols: word(1) }
    }
}

/// One axis of the slice and where it lies in the image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisRecord {
    pub name: String,
    pub unit: String,
    /// Value of the first and last samples.
    pub first: f64,
    pub last: f64,
    pub step: f64,
    /// Number of samples.
    pub n: usize,
    /// True distance between samples in metres, where known.
    pub spacing_m: Option<f64>,
    /// The pixels (columns for `cols`, rows for `rows`) of the whole image that show this axis.
    pub pixel_first: u32,
    pub pixel_count: u32,
    /// The value shown by the centre of pixel `p` (counted in the whole image) is
    /// `value_at_pixel_zero + value_per_pixel · p`; the pixel nearest a value `v` is
    /// `round((v − value_at_pixel_zero) / value_per_pixel)`.
    pub value_at_pixel_zero: f64,
    pub value_per_pixel: f64,
}

impl AxisRecord {
    /// Record `axis` drawn on `pixel_count` pixels starting at `pixel_first`. Sample `i` covers pixels
    /// `[pixel_first + i · k, pixel_first + (i + 1) · k)` with `k = pixel_count / n`, its value at the centre.
    pub(crate) fn new(axis: &PlotAxis, pixel_first: usize, pixel_count: usize) -> Self {
        let samples_per_pixel = axis.len as f64 / pixel_count as f64;
        let value_per_pixel = axis.step * samples_per_pixel;
        // Centre of pixel p is at p + 0.5; its sample coordinate is (p + 0.5 − first) · spp − 0.5.
        let value_at_pixel_zero = axis.origin + axis.step * ((0.5 - pixel_first as f64) * samples_per_pixel - 0.5);
        AxisRecord {
            name: axis.name.clone(),
            unit: axis.unit.clone(),
            first: axis.origin,
            last: axis.last(),
            step: axis.step,
            n: axis.len,
            spacing_m: axis.spacing_m,
            pixel_first: pixel_first as u32,
            pixel_count: pixel_count as u32,
            value_at_pixel_zero,
            value_per_pixel,
        }
    }

    /// The value shown at the centre of image pixel `p`.
    pub fn value_at_pixel(&self, p: u32) -> f64 {
        self.value_at_pixel_zero + self.value_per_pixel * p as f64
    }

    /// The image pixel nearest to `value` (which may lie outside the data area).
    pub fn pixel_of_value(&self, value: f64) -> i64 {
        ((value - self.value_at_pixel_zero) / self.value_per_pixel).round() as i64
    }
}

/// The clip: amplitudes in `[-value, value]` span the colour map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipRecord {
    pub value: f32,
    #[serde(flatten)]
    pub source: ClipSource,
    /// Over which pictures the percentile was taken: `picture`, `kind` or `job`; none for a fixed clip.
    pub scope: Option<ClipScope>,
}

/// Where a panel lies in a picture and what its columns are, for the sidecar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelRecord {
    pub title: String,
    /// The panel's axis on the pixel columns of the whole image that show it.
    pub cols: AxisRecord,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_mapping_puts_sample_centres_in_the_middle_of_their_cells() {
        // 10 depth samples from 100 m every 5 m, on 40 pixels starting at image row 30: 4 pixels a sample.
        let axis =
            PlotAxis { name: "depth".into(), unit: "m".into(), origin: 100.0, step: 5.0, len: 10, spacing_m: None };
        let r = AxisRecord::new(&axis, 30, 40);
        // Sample 0 covers rows 30..34, its centre on the boundary of rows 31 and 32.
        assert!((r.value_at_pixel(31) - (100.0 - 5.0 / 8.0)).abs() < 1e-9);
        assert!((r.value_at_pixel(32) - (100.0 + 5.0 / 8.0)).abs() < 1e-9);
        assert_eq!(r.pixel_of_value(145.0), 30 + 9 * 4 + 2);
        assert!((30..34).contains(&r.pixel_of_value(100.0)));
        assert_eq!((r.first, r.last, r.n), (100.0, 145.0, 10));
    }
}
