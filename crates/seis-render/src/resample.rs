//! How many pixels a slice gets, and how its samples are carried onto them.
//!
//! Size: a pixel covers the same distance across and down (times the vertical exaggeration), the finer axis
//! gets at least one pixel per sample, the image is enlarged to `min_width` and shrunk to `max_pixels`.
//!
//! Values: each sample is a cell whose centre carries its value. Along an axis drawn on fewer pixels than
//! it has samples, a pixel takes the mean of the samples under a tent one pixel wide (an average, so fine
//! detail turns pale instead of aliasing into false events). Along an axis drawn on more pixels than
//! samples, `sampling` decides: `nearest` draws every sample as a cell of its own colour; `linear`
//! interpolates between sample centres (a tent one sample wide); `auto` (the default) draws cells where a
//! sample gets two pixels or more and interpolates below that. Interpolating across a coarse grid invents
//! structure (the diamonds and stars of bilinear interpolation between a few traces), while along a finely
//! sampled trace it only smooths the steps of an uneven enlargement. Interpolation happens on values,
//! before colour mapping, so an interpolated pixel shows a value the colour map knows rather than a blend
//! of two colours.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{PlotAxis, RenderOptions, Sampling};

/// What the proportions of an image rest on (recorded in the sidecar).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "basis")]
pub enum Aspect {
    /// Both axes have a true spacing in metres.
    TrueSpacing,
    /// A two-way-time axis was given the length of its depth equivalent at `velocity_m_s` (z = v · t / 2);
    /// the other axis has a true spacing.
    TimeAtVelocity { velocity_m_s: f64 },
    /// An axis has no known length (line numbers without survey coordinates, an unknown unit): every
    /// sample is drawn as a square cell.
    SquareSamples,
}

/// The data area of an image in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlotSize {
    pub width: usize,
    pub height: usize,
    pub aspect: Aspect,
}

/// Length of one sample step along `axis` in metres, and whether it came from a time axis.
fn sample_length(axis: &PlotAxis, time_velocity: f64) -> Option<(f64, bool)> {
    if let Some(d) = axis.spacing_m {
        return Some((d, false));
    }
    let seconds_per_unit = match axis.unit.as_str() {
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some((axis.step.abs() * seconds_per_unit * time_velocity / 2.0, true))
}

/// The size of the data area for `rows × cols` samples under `opts`.
pub(crate) fn plot_size(rows: &PlotAxis, cols: &PlotAxis, opts: &RenderOptions) -> PlotSize {
    let velocity = opts.time_aspect_velocity;
    let (dy, dx, aspect) = match (sample_length(rows, velocity), sample_length(cols, velocity)) {
        (Some((dy, false)), Some((dx, false))) => (dy, dx, Aspect::TrueSpacing),
        (Some((dy, _)), Some((dx, _))) => (dy, dx, Aspect::TimeAtVelocity { velocity_m_s: velocity }),
        _ => (1.0, 1.0, Aspect::SquareSamples),
    };
    let dy = dy * opts.vertical_exaggeration;
    let per_pixel = dx.min(dy);
    let mut width = cols.len as f64 * dx / per_pixel;
    let mut height = rows.len as f64 * dy / per_pixel;
    let grow = (opts.min_width as f64 / width).max(1.0);
    width *= grow;
    height *= grow;
    let max_pixels = opts.max_pixels as f64;
    let shrink = (max_pixels / (width * height)).sqrt().min(1.0);
    let (width, height) = if shrink < 1.0 {
        ((width * shrink).floor(), (height * shrink).floor())
    } else {
        (width.round(), height.round())
    };
    // Proportions so extreme that one side would fall under a pixel give way to the pixel budget.
    let width = width.clamp(1.0, max_pixels) as usize;
    let height = height.clamp(1.0, (max_pixels / width as f64).floor().max(1.0)) as usize;
    PlotSize { width, height, aspect }
}

/// The input samples one output pixel draws on, and their tent weights.
#[derive(Clone, Debug, PartialEq)]
struct Tap {
    first: usize,
    weights: Vec<f32>,
}

impl Tap {
    /// Weighted mean of the finite samples under the tap; NaN (no data) where those carry less than half
    /// the weight, so a gap keeps its extent instead of being smeared over or spreading.
    fn mean(&self, sample: impl Fn(usize) -> f32) -> f32 {
        let (mut sum, mut finite_weight, mut total_weight) = (0.0f32, 0.0f32, 0.0f32);
        for (k, &w) in self.weights.iter().enumerate() {
            total_weight += w;
            let v = sample(self.first + k);
            if v.is_finite() {
                sum += w * v;
                finite_weight += w;
            }
        }
        if finite_weight > 0.0 && finite_weight >= 0.5 * total_weight {
            sum / finite_weight
        } else {
            f32::NAN
        }
    }
}

/// One tap per output pixel along an axis of `n_in` samples drawn on `n_out` pixels: the sample under the
/// pixel's centre when drawing `cells`, else a tent.
fn taps(n_in: usize, n_out: usize, cells: bool) -> Vec<Tap> {
    let scale = n_in as f64 / n_out as f64;
    if cells {
        return (0..n_out)
            .map(|j| Tap { first: (((j as f64 + 0.5) * scale) as usize).min(n_in - 1), weights: vec![1.0] })
            .collect();
    }
    let radius = scale.max(1.0);
    (0..n_out)
        .map(|j| {
            let centre = (j as f64 + 0.5) * scale - 0.5;
            // Samples strictly inside the tent: those on its edge would have zero weight.
            let first = ((centre - radius).floor() + 1.0).max(0.0) as usize;
            let last = (((centre + radius).ceil() - 1.0).max(0.0) as usize).min(n_in - 1);
            let weights = (first..=last).map(|i| (1.0 - (i as f64 - centre).abs() / radius) as f32).collect();
            Tap { first, weights }
        })
        .collect()
}

/// Resample row-major `data` of `[rows, cols]` samples onto `[out_rows, out_cols]` pixels.
///
/// One axis after the other, in the order whose intermediate image is the smaller: across first when the
/// rows are few, down first when they are many. Either is at most the larger of the slice and the picture;
/// across first for a slice of 100 000 depth samples drawn 2 000 pixels wide held 200 million values.
pub(crate) fn resample(
    data: &[f32],
    [rows, cols]: [usize; 2],
    [out_rows, out_cols]: [usize; 2],
    sampling: Sampling,
) -> Vec<f32> {
    assert_eq!(data.len(), rows * cols, "one value per sample");
    let across = taps(cols, out_cols, sampling.cells(cols, out_cols));
    let down = taps(rows, out_rows, sampling.cells(rows, out_rows));
    if rows.saturating_mul(out_cols) <= out_rows.saturating_mul(cols) {
        resample_down(&resample_across(data, cols, &across), out_cols, &down)
    } else {
        resample_across(&resample_down(data, cols, &down), cols, &across)
    }
}

/// Each row of `data` (rows of `cols` values) onto `taps.len()` pixels.
fn resample_across(data: &[f32], cols: usize, taps: &[Tap]) -> Vec<f32> {
    let mut out = vec![0.0f32; data.len() / cols * taps.len()];
    out.par_chunks_mut(taps.len()).zip(data.par_chunks(cols)).for_each(|(out, row)| {
        for (o, tap) in out.iter_mut().zip(taps) {
            *o = tap.mean(|i| row[i]);
        }
    });
    out
}

/// Each column of `data` (rows of `cols` values) onto `taps.len()` pixels.
fn resample_down(data: &[f32], cols: usize, taps: &[Tap]) -> Vec<f32> {
    let mut out = vec![0.0f32; taps.len() * cols];
    out.par_chunks_mut(cols).zip(taps.par_iter()).for_each(|(out, tap)| {
        for (x, o) in out.iter_mut().enumerate() {
            *o = tap.mean(|i| data[i * cols + x]);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(unit: &str, step: f64, len: usize, spacing_m: Option<f64>) -> PlotAxis {
        PlotAxis { name: "a".into(), unit: unit.into(), origin: 0.0, step, len, spacing_m }
    }

    #[test]
    fn either_order_gives_the_same_picture() {
        // 7 × 300 samples onto 40 × 20 pixels (across first) and 300 × 7 onto 20 × 40 (down first): the
        // second is the first transposed, so their pictures must be transposes too.
        let wide: Vec<f32> = (0..7 * 300).map(|k| ((k * 37 % 101) as f32 - 50.0) / 7.0).collect();
        let tall: Vec<f32> = (0..300 * 7).map(|k| wide[(k % 7) * 300 + k / 7]).collect();
        for sampling in [Sampling::Auto, Sampling::Nearest, Sampling::Linear] {
            let a = resample(&wide, [7, 300], [40, 20], sampling);
            let b = resample(&tall, [300, 7], [20, 40], sampling);
            for r in 0..40 {
                for c in 0..20 {
                    assert!((a[r * 20 + c] - b[c * 40 + r]).abs() < 1e-5, "{sampling:?}: pixel {r}, {c}");
                }
            }
        }
    }

    #[test]
    fn same_size_is_the_identity() {
        let data: Vec<f32> = (0..12).map(|i| i as f32 * 1.5 - 4.0).collect();
        assert_eq!(resample(&data, [3, 4], [3, 4], Sampling::Auto), data);
        assert!(
            taps(4, 4, false).iter().all(|t| t.weights == [1.0]),
            "one sample per pixel, no zero-weight neighbours"
        );
    }

    #[test]
    fn enlarging_is_bilinear_between_sample_centres() {
        // Two samples 0 and 1 on eight pixels: centres of the samples fall on pixels 1.5 and 5.5.
        let out = resample(&[0.0, 1.0], [1, 2], [1, 8], Sampling::Linear);
        let expected = [0.0, 0.0, 0.125, 0.375, 0.625, 0.875, 1.0, 1.0];
        for (o, e) in out.iter().zip(expected) {
            assert!((o - e).abs() < 1e-6, "{out:?}");
        }
        // Down the rows the same way.
        let col = resample(&[2.0, 4.0], [2, 1], [4, 1], Sampling::Linear);
        assert_eq!(col, vec![2.0, 2.5, 3.5, 4.0]);
    }

    #[test]
    fn coarse_grids_are_drawn_as_cells() {
        // Two samples on eight pixels: four of each, nothing in between.
        for sampling in [Sampling::Auto, Sampling::Nearest] {
            assert_eq!(resample(&[0.0, 1.0], [1, 2], [1, 8], sampling), [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        }
        // Auto interpolates an enlargement under two pixels a sample; nearest still draws cells.
        let ramp: Vec<f32> = (0..10).map(|i| i as f32).collect();
        let smooth = resample(&ramp, [1, 10], [1, 15], Sampling::Auto);
        assert!(smooth.iter().any(|v| v.fract() != 0.0), "{smooth:?}");
        let cells = resample(&ramp, [1, 10], [1, 15], Sampling::Nearest);
        assert!(cells.iter().all(|v| v.fract() == 0.0), "{cells:?}");
    }

    #[test]
    fn shrinking_averages_instead_of_aliasing() {
        // A ±1 checkerboard of 100 × 100 samples on 10 × 10 pixels: every pixel is close to zero.
        let data: Vec<f32> = (0..100 * 100).map(|k| if (k / 100 + k % 100) % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let out = resample(&data, [100, 100], [10, 10], Sampling::Auto);
        assert!(out.iter().all(|v| v.abs() < 0.05), "{out:?}");
        // A constant stays exactly constant.
        let flat = resample(&[3.0; 77 * 13], [77, 13], [5, 4], Sampling::Auto);
        assert!(flat.iter().all(|&v| (v - 3.0).abs() < 1e-5), "{flat:?}");
    }

    #[test]
    fn gaps_keep_their_extent() {
        let mut data = vec![1.0f32; 10];
        data[4] = f32::NAN;
        data[5] = f32::NAN;
        let out = resample(&data, [1, 10], [1, 100], Sampling::Linear);
        // Samples 4 and 5 cover pixels 40..60; a pixel is blank where its nearest sample is blank.
        for (x, v) in out.iter().enumerate() {
            assert_eq!(v.is_nan(), (40..60).contains(&x), "pixel {x}: {v}");
            assert!(v.is_nan() || *v == 1.0);
        }
    }

    #[test]
    fn true_spacing_sets_the_proportions() {
        let opts = RenderOptions { min_width: 1, ..RenderOptions::default() };
        // 50 depth samples of 8 m under 40 traces 4 m apart: 400 m × 160 m, 4 m per pixel.
        let size = plot_size(&axis("m", 8.0, 50, Some(8.0)), &axis("", 1.0, 40, Some(4.0)), &opts);
        assert_eq!(size, PlotSize { width: 40, height: 100, aspect: Aspect::TrueSpacing });
        let exaggerated = RenderOptions { vertical_exaggeration: 2.0, ..opts.clone() };
        let size = plot_size(&axis("m", 8.0, 50, Some(8.0)), &axis("", 1.0, 40, Some(4.0)), &exaggerated);
        assert_eq!((size.width, size.height), (40, 200));
    }

    #[test]
    fn time_axes_take_their_length_from_the_velocity() {
        let opts = RenderOptions { min_width: 1, time_aspect_velocity: 2000.0, ..RenderOptions::default() };
        // 4 ms at 2000 m/s is 4 m of depth; traces 12.5 m apart.
        let size = plot_size(&axis("ms", 4.0, 250, None), &axis("", 1.0, 80, Some(12.5)), &opts);
        assert_eq!(size, PlotSize { width: 250, height: 250, aspect: Aspect::TimeAtVelocity { velocity_m_s: 2000.0 } });
        let unknown = plot_size(&axis("ms", 4.0, 250, None), &axis("", 1.0, 80, None), &opts);
        assert_eq!(unknown, PlotSize { width: 80, height: 250, aspect: Aspect::SquareSamples });
    }

    #[test]
    fn small_slices_grow_and_huge_ones_shrink_keeping_proportions() {
        let opts = RenderOptions { min_width: 600, max_pixels: 90_000, ..RenderOptions::default() };
        let small = plot_size(&axis("m", 10.0, 75, Some(10.0)), &axis("", 1.0, 18, Some(25.0)), &opts);
        // 750 m deep, 450 m wide: 600 px wide means 1000 px deep, over the budget, so shrunk to fit it.
        assert!(small.width * small.height <= 90_000);
        assert!((small.height as f64 / small.width as f64 - 750.0 / 450.0).abs() < 0.01, "{small:?}");
        let roomy = RenderOptions { max_pixels: 10_000_000, ..opts.clone() };
        let small = plot_size(&axis("m", 10.0, 75, Some(10.0)), &axis("", 1.0, 18, Some(25.0)), &roomy);
        assert_eq!((small.width, small.height), (600, 1000));
        let huge = plot_size(&axis("m", 5.0, 4000, Some(5.0)), &axis("", 1.0, 3000, Some(5.0)), &opts);
        assert!(huge.width * huge.height <= 90_000, "{huge:?}");
        assert!((huge.height as f64 / huge.width as f64 - 4.0 / 3.0).abs() < 0.01, "{huge:?}");
    }

    #[test]
    fn extreme_proportions_stay_within_the_budget() {
        let opts = RenderOptions { min_width: 800, max_pixels: 10_000, ..RenderOptions::default() };
        let size = plot_size(&axis("m", 1.0, 1_000_000, Some(1.0)), &axis("", 1.0, 1, Some(1.0)), &opts);
        assert!(size.width >= 1 && size.height >= 1 && size.width * size.height <= 10_000, "{size:?}");
    }
}
