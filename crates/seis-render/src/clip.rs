//! The clip: one value `c` such that `[-c, c]` (or `[0, c]` for values that start at zero, such as an
//! envelope) spans the colour map.
//!
//! A percentile of |value| rather than the maximum, so that a few spikes (a bad trace, an edge artefact of
//! the migration) do not wash the rest of the image out to the zero colour. The percentile may be taken
//! over one picture, over the pictures of one kind of a run (every inline, say), or over all of a run's
//! pictures ([`ClipSetting`]): pictures that share a clip can be compared, and a picture that holds only
//! weak artefacts is drawn faint instead of at full contrast.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

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
    /// The smallest and the largest finite value span the colour map (a positive quantity: velocity).
    MinMax,
}

/// Which pictures share a clip (the `clip` render option), or a fixed clip.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ClipSetting {
    /// Each picture has its own percentile.
    Picture,
    /// The percentile over all pictures of one kind of a run: its inlines, its crosslines, its depth slices,
    /// and each attribute's pictures apart.
    #[default]
    Kind,
    /// The percentile over all pictures of a run (each attribute's pictures apart from the amplitudes).
    Job,
    /// This clip, in the units of the data.
    Fixed(f64),
}

impl ClipSetting {
    /// The pictures the percentile is taken over, in words (`None` for a fixed clip).
    pub fn scope(self) -> Option<ClipScope> {
        match self {
            ClipSetting::Picture => Some(ClipScope::Picture),
            ClipSetting::Kind => Some(ClipScope::Kind),
            ClipSetting::Job => Some(ClipScope::Job),
            ClipSetting::Fixed(_) => None,
        }
    }
}

/// Over which pictures a clip was taken (recorded in the sidecar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipScope {
    Picture,
    Kind,
    Job,
}

impl Serialize for ClipSetting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ClipSetting::Picture => s.serialize_str("picture"),
            ClipSetting::Kind => s.serialize_str("kind"),
            ClipSetting::Job => s.serialize_str("job"),
            ClipSetting::Fixed(c) => s.serialize_f64(*c),
        }
    }
}

impl<'de> Deserialize<'de> for ClipSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ClipSetting;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a clip value (a positive number) or one of \"picture\", \"kind\", \"job\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ClipSetting, E> {
                Ok(ClipSetting::Fixed(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ClipSetting, E> {
                Ok(ClipSetting::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ClipSetting, E> {
                Ok(ClipSetting::Fixed(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ClipSetting, E> {
                match v {
                    "picture" => Ok(ClipSetting::Picture),
                    "kind" => Ok(ClipSetting::Kind),
                    "job" => Ok(ClipSetting::Job),
                    other => match other.parse::<f64>() {
                        Ok(c) => Ok(ClipSetting::Fixed(c)),
                        Err(_) => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
                    },
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The smallest and the largest finite value of `parts` together, the scale of a positive quantity. A
/// span of nothing (a constant velocity) is widened by 1 % of the value either side (or by 1 around zero),
/// so that the colour bar has a span; `(0, 1)` when no value is finite.
pub fn min_max(parts: &[&[f32]]) -> (f32, f32) {
    let finite = parts.iter().flat_map(|p| p.iter()).filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo < hi {
        return (lo, hi);
    }
    let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
    (lo - pad, hi + pad)
}

/// The clip for `data` at `percentile` (in `(0, 100]`), ignoring non-finite values.
///
/// The percentile interpolates linearly between the two nearest ranks (rank `p / 100 · (n − 1)` of the
/// sorted |values|). Returns 0 when no sample is finite and non-zero; the caller then draws the mid colour.
pub fn symmetric_clip(data: &[f32], percentile: f64) -> (f32, ClipSource) {
    shared_clip(&[data], percentile)
}

/// [`symmetric_clip`] over the values of several pictures together.
pub fn shared_clip(parts: &[&[f32]], percentile: f64) -> (f32, ClipSource) {
    let mut mags: Vec<f32> = parts.iter().flat_map(|p| p.iter()).filter(|v| v.is_finite()).map(|v| v.abs()).collect();
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

    #[test]
    fn a_shared_clip_is_the_percentile_of_every_picture_together() {
        let a: Vec<f32> = (0..=50).map(|i| i as f32).collect();
        let b: Vec<f32> = (51..=100).map(|i| -(i as f32)).collect();
        assert_eq!(shared_clip(&[&a, &b], 99.0).0, 99.0);
        assert_eq!(shared_clip(&[&a], 100.0).0, 50.0);
    }

    #[test]
    fn the_clip_setting_reads_a_number_or_a_scope() {
        #[derive(Deserialize, Serialize)]
        struct T {
            clip: ClipSetting,
        }
        let read = |text: &str| toml::from_str::<T>(text).map(|t| t.clip);
        assert_eq!(read("clip = 0.5").unwrap(), ClipSetting::Fixed(0.5));
        assert_eq!(read("clip = 3").unwrap(), ClipSetting::Fixed(3.0));
        assert_eq!(read("clip = \"job\"").unwrap(), ClipSetting::Job);
        assert_eq!(read("clip = \"picture\"").unwrap(), ClipSetting::Picture);
        let err = read("clip = \"everything\"").unwrap_err().to_string();
        assert!(err.contains("\"picture\", \"kind\", \"job\""), "{err}");
        assert_eq!(toml::to_string(&T { clip: ClipSetting::Kind }).unwrap().trim(), "clip = \"kind\"");
        assert_eq!(toml::to_string(&T { clip: ClipSetting::Fixed(2.5) }).unwrap().trim(), "clip = 2.5");
    }
}
