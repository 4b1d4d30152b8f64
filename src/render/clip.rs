//! The symmetric clip: one amplitude `c` such that `[-c, c]` spans the colour map.
//!
//! A percentile of |amplitude| rather than the maximum, so that a few spikes (a bad trace, an edge artefact
//! of the migration) do not wash the rest of the image out to the zero colour.

use serde::{Deserialize, Serialize};

/// How the clip of an image was found (recorded in the sidecar).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum ClipSource {
    /// The given percentile of |amplitude| over the finite samples.
    Percentile { percentile: f64 },
    /// The percentile was zero (most samples are zero) so the largest |amplitude| was used instead, to keep
    /// sparse events visible.
    MaxAbs { percentile: f64 },
    /// Given by the caller.
    Fixed,
}

/// The clip for `data` at `percentile` (in `(0, 100]`), ignoring non-finite values.
///
/// The percentile interpolates linearly between the two nearest ranks (rank `p / 100 · (n − 1)` of the
/// sorted |values|). Returns 0 when no sample is finite and non-zero; the caller then draws the mid colour.
pub fn symmetric_clip(data: &[f32], percentile: f64) -> (f32, ClipSource) {
    let mut mags: Vec<f32> = data.iter().filter(|v| v.is_finite()).map(|v| v.abs()).collect();
    if mags.is_empty() {
        return (0.0, ClipSource::Percentile { percentile });
    }
    let rank = percentile * (mags.len() - 1) as f64 / 100.0;
    let lo = rank.floor() as usize;
    let frac = (rank - lo as f64) as f32;
    let (_, &mut below, above) = mags.select_nth_unstable_by(lo, f32::total_cmp);
    let next = above.iter().copied().reduce(f32::min).unwrap_or(below);
    let clip = below + (next - below) * frac;
    if clip > 0.0 {
        return (clip, ClipSource::Percentile { percentile });
    }
    // Everything at or below the rank is zero: the largest value is among those above it.
    (above.iter().copied().fold(0.0, f32::max), ClipSource::MaxAbs { percentile })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interpolates_between_ranks() {
        // |values| 0..=100 in a scrambled order with mixed signs: the p-th percentile is p itself.
        let data: Vec<f32> = (0..=100).map(|i| ((i * 37) % 101) as f32 * if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        assert_eq!(symmetric_clip(&data, 99.0).0, 99.0);
        assert_eq!(symmetric_clip(&data, 100.0).0, 100.0);
        assert_eq!(symmetric_clip(&data, 12.5).0, 12.5);
        // Four values: rank 0.99 · 3 = 2.97 lies between 3 and 4.
        let (c, _) = symmetric_clip(&[1.0, -2.0, 3.0, -4.0], 99.0);
        assert!((c - 3.97).abs() < 1e-6, "{c}");
    }

    #[test]
    fn one_outlier_does_not_set_the_clip() {
        let mut data: Vec<f32> = (0..1000).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        data[17] = 1.0e6;
        assert_eq!(symmetric_clip(&data, 99.0), (1.0, ClipSource::Percentile { percentile: 99.0 }));
    }

    #[test]
    fn non_finite_values_are_ignored() {
        let data = [f32::NAN, 2.0, f32::INFINITY, -2.0, f32::NEG_INFINITY, 2.0];
        assert_eq!(symmetric_clip(&data, 50.0).0, 2.0);
        assert_eq!(symmetric_clip(&[f32::NAN; 4], 99.0).0, 0.0);
    }

    #[test]
    fn sparse_events_fall_back_to_the_maximum_and_zero_stays_zero() {
        let mut data = vec![0.0f32; 1000];
        data[500] = -3.0;
        data[501] = 2.0;
        assert_eq!(symmetric_clip(&data, 99.0), (3.0, ClipSource::MaxAbs { percentile: 99.0 }));
        assert_eq!(symmetric_clip(&vec![0.0f32; 64], 99.0).0, 0.0);
        assert_eq!(symmetric_clip(&[], 99.0).0, 0.0);
    }
}
