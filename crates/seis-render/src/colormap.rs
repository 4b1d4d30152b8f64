//! Colour maps: small piecewise-linear tables over `t` in `[0, 1]`. The diverging maps (`seismic`, `gray`,
//! `binary`) put the negative clip at 0, zero at 0.5 and the positive clip at 1; `heat` is sequential
//! (zero to the clip, for envelopes and frequencies); `phase` is cyclic (its two ends are one colour, for
//! angles from −180° to 180°).

use seis_core::choice::Choice;
use serde::{Deserialize, Serialize};

/// How amplitudes become colours.
///
/// Polarity: positive amplitudes (peaks) are red in `seismic`, white in `gray` and black in `binary`; the
/// amplitude sign is drawn as the data carry it, nothing is flipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Colormap {
    /// Red-white-blue diverging map: negative blue, zero white, positive red, darkening towards the clip.
    #[default]
    Seismic,
    /// Black (negative) through mid-gray (zero) to white (positive).
    #[serde(alias = "grey")]
    Gray,
    /// White (negative) through mid-gray to black (positive): peaks black, as on paper sections.
    Binary,
    /// Sequential, white through yellow and red to dark brown: for values from zero up (envelope,
    /// frequency).
    Heat,
    /// Cyclic, for angles: blue at ±180°, white at −90°, red at 0°, near-black at 90°.
    Phase,
}

impl Choice for Colormap {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            Colormap::Seismic,
            "seismic",
            "Red-white-blue diverging map: negative blue, zero white, positive red, darkening towards the clip.",
        ),
        (Colormap::Gray, "gray", "Black (negative) through mid-gray (zero) to white (positive)."),
        (
            Colormap::Binary,
            "binary",
            "White (negative) through mid-gray to black (positive): peaks black, as on paper sections.",
        ),
        (
            Colormap::Heat,
            "heat",
            "Sequential, white through yellow and red to dark brown: for values from zero up (envelope, frequency).",
        ),
        (Colormap::Phase, "phase", "Cyclic, for angles: blue at ±180°, white at −90°, red at 0°, near-black at 90°."),
    ];
    const ALIASES: &'static [(&'static str, &'static str)] = &[("grey", "gray")];
}

/// One control point of a map: position in `[0, 1]` and colour there.
type Stop = (f32, [u8; 3]);

const SEISMIC: &[Stop] =
    &[(0.0, [0, 0, 96]), (0.25, [0, 48, 224]), (0.5, [255, 255, 255]), (0.75, [224, 24, 0]), (1.0, [112, 0, 0])];
const GRAY: &[Stop] = &[(0.0, [0, 0, 0]), (1.0, [255, 255, 255])];
const BINARY: &[Stop] = &[(0.0, [255, 255, 255]), (1.0, [0, 0, 0])];
const HEAT: &[Stop] = &[
    (0.0, [255, 255, 255]),
    (0.25, [252, 226, 120]),
    (0.5, [245, 140, 40]),
    (0.75, [196, 30, 30]),
    (1.0, [70, 10, 20]),
];
const PHASE: &[Stop] =
    &[(0.0, [20, 70, 200]), (0.25, [245, 245, 245]), (0.5, [200, 30, 20]), (0.75, [30, 30, 30]), (1.0, [20, 70, 200])];

/// The colour of samples that hold no number (NaN or infinite): a muted green that none of the maps uses.
pub const NO_DATA: [u8; 3] = [104, 168, 104];

impl Colormap {
    pub const ALL: [Colormap; 5] =
        [Colormap::Seismic, Colormap::Gray, Colormap::Binary, Colormap::Heat, Colormap::Phase];

    /// The name used in job files, on the command line and in sidecars.
    pub fn name(self) -> &'static str {
        match self {
            Colormap::Seismic => "seismic",
            Colormap::Gray => "gray",
            Colormap::Binary => "binary",
            Colormap::Heat => "heat",
            Colormap::Phase => "phase",
        }
    }

    /// How the amplitude sign shows, in words (written to the sidecar).
    pub fn polarity(self) -> &'static str {
        match self {
            Colormap::Seismic => "positive red, zero white, negative blue",
            Colormap::Gray => "positive white, zero mid-gray, negative black",
            Colormap::Binary => "positive black, zero mid-gray, negative white",
            Colormap::Heat => "zero white, then yellow and red to dark brown at the top of the scale",
            Colormap::Phase => "0° red, 90° black, ±180° blue, -90° white",
        }
    }

    fn stops(self) -> &'static [Stop] {
        match self {
            Colormap::Seismic => SEISMIC,
            Colormap::Gray => GRAY,
            Colormap::Binary => BINARY,
            Colormap::Heat => HEAT,
            Colormap::Phase => PHASE,
        }
    }

    /// The colour at `t` in `[0, 1]` (clamped): 0 is the negative clip, 0.5 zero, 1 the positive clip.
    pub fn at(self, t: f32) -> [u8; 3] {
        let stops = self.stops();
        let t = t.clamp(0.0, 1.0);
        let upper = stops.iter().position(|&(p, _)| p >= t).unwrap_or(stops.len() - 1).max(1);
        let (p0, c0) = stops[upper - 1];
        let (p1, c1) = stops[upper];
        let f = (t - p0) / (p1 - p0);
        // The channel lies in [0, 255]: adding ½ and truncating rounds it like `round`, without the libm call
        // that took a third of the time of drawing a picture.
        std::array::from_fn(|k| (c0[k] as f32 + (c1[k] as f32 - c0[k] as f32) * f + 0.5) as u8)
    }

    /// The colour of an amplitude under a symmetric clip: `[-clip, clip]` spans the map, values beyond
    /// saturate, non-finite values get [`NO_DATA`], and a zero clip (an all-zero slice) gives the mid colour.
    pub fn amplitude(self, value: f32, clip: f32) -> [u8; 3] {
        if !value.is_finite() {
            return NO_DATA;
        }
        let t = if clip > 0.0 { 0.5 + 0.5 * (value / clip) } else { 0.5 };
        self.at(t)
    }
}

/// A colour map sampled for one value range: [`Colormap::at`] at [`LEVELS`] evenly spaced positions, looked
/// up instead of computed for the hundreds of thousands of pixels of a picture. Every value takes the colour
/// of the nearest level, so a picture holds at most `LEVELS` colours of its map (which lets small pictures
/// be written as palette PNGs) and never shows a step finer than the eye can tell: a level is 1/224 of the
/// range. Zero (the middle of a symmetric range), the ends and every stop of the maps (multiples of 1/4)
/// are levels themselves, so they are drawn exactly.
pub struct Palette {
    colours: Vec<[u8; 3]>,
    lo: f32,
    /// Levels per unit of value.
    scale: f32,
}

/// Colours of a palette: 224 steps.
pub const LEVELS: usize = 225;

impl Colormap {
    /// This map with `-clip` at its start and `clip` at its end (see [`Palette`]).
    pub fn palette(self, clip: f32) -> Palette {
        self.palette_over(-clip, clip)
    }

    /// This map with `lo` at its start and `hi` at its end; an empty range draws every value in the map's
    /// middle colour, as [`Colormap::amplitude`] does for a zero clip.
    pub fn palette_over(self, lo: f32, hi: f32) -> Palette {
        if hi > lo {
            let colours = (0..LEVELS).map(|i| self.at(i as f32 / (LEVELS - 1) as f32)).collect();
            Palette { colours, lo, scale: (LEVELS - 1) as f32 / (hi - lo) }
        } else {
            Palette { colours: vec![self.at(0.5)], lo, scale: 0.0 }
        }
    }
}

impl Palette {
    /// The colour of `value`: that of the nearest level, the ends beyond the range, [`NO_DATA`] for NaN
    /// and infinities.
    pub fn colour(&self, value: f32) -> [u8; 3] {
        if !value.is_finite() {
            return NO_DATA;
        }
        let position = ((value - self.lo) * self.scale).clamp(0.0, (self.colours.len() - 1) as f32);
        self.colours[(position + 0.5) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_ordered_and_span_zero_to_one() {
        for map in Colormap::ALL {
            let stops = map.stops();
            assert_eq!(stops.first().unwrap().0, 0.0, "{map:?}");
            assert_eq!(stops.last().unwrap().0, 1.0, "{map:?}");
            assert!(stops.windows(2).all(|w| w[0].0 < w[1].0), "{map:?} stops must increase");
        }
    }

    #[test]
    fn maps_hit_their_stops_and_interpolate_between() {
        assert_eq!(Colormap::Seismic.at(0.5), [255, 255, 255]);
        assert_eq!(Colormap::Seismic.at(0.0), [0, 0, 96]);
        assert_eq!(Colormap::Seismic.at(1.0), [112, 0, 0]);
        // Halfway between the white centre and the red stop at 0.75.
        assert_eq!(Colormap::Seismic.at(0.625), [240, 140, 128]);
        assert_eq!(Colormap::Gray.at(0.25), [64, 64, 64]);
        assert_eq!(Colormap::Binary.at(0.25), [191, 191, 191]);
        assert_eq!(Colormap::Gray.at(-3.0), [0, 0, 0]);
        assert_eq!(Colormap::Gray.at(7.0), [255, 255, 255]);
    }

    #[test]
    fn the_palette_gives_the_colour_of_the_nearest_level() {
        for map in Colormap::ALL {
            for clip in [1.0f32, 0.37, 2.5e4] {
                let palette = map.palette(clip);
                // Exact where the maps have their stops, and beyond the clip.
                for v in [0.0, 0.5 * clip, clip, -0.5 * clip, -clip, 3.0 * clip, -1e30] {
                    assert_eq!(palette.colour(v), map.amplitude(v, clip), "{map:?} clip {clip}: {v}");
                }
                for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    assert_eq!(palette.colour(v), NO_DATA);
                }
                let mut seen = std::collections::HashSet::new();
                for i in 0..=20_000 {
                    let v = clip * (i as f32 / 10_000.0 - 1.0);
                    let level = ((v / clip + 1.0) / 2.0 * (LEVELS - 1) as f32).round() / (LEVELS - 1) as f32;
                    assert_eq!(palette.colour(v), map.at(level), "{map:?} clip {clip}: {v}");
                    seen.insert(palette.colour(v));
                }
                assert!(seen.len() <= LEVELS);
            }
            assert!(map.palette(0.0).colour(5.0) == map.at(0.5), "a zero clip draws the mid colour");
        }
        // A one-sided range: zero at the start, the top at the end.
        let heat = Colormap::Heat.palette_over(0.0, 8.0);
        assert_eq!(heat.colour(0.0), [255, 255, 255]);
        assert_eq!(heat.colour(8.0), Colormap::Heat.at(1.0));
        assert_eq!(heat.colour(4.0), Colormap::Heat.at(0.5));
    }

    #[test]
    fn the_phase_map_is_cyclic() {
        assert_eq!(Colormap::Phase.at(0.0), Colormap::Phase.at(1.0));
        let p = Colormap::Phase.palette_over(-180.0, 180.0);
        assert_eq!(p.colour(-180.0), p.colour(180.0));
        assert_eq!(p.colour(0.0), [200, 30, 20]);
    }

    #[test]
    fn amplitudes_clip_symmetrically_and_survive_degenerate_input() {
        let m = Colormap::Seismic;
        assert_eq!(m.amplitude(2.0, 2.0), m.at(1.0));
        assert_eq!(m.amplitude(50.0, 2.0), m.at(1.0));
        assert_eq!(m.amplitude(-2.0, 2.0), m.at(0.0));
        assert_eq!(m.amplitude(0.0, 2.0), [255, 255, 255]);
        assert_eq!(m.amplitude(0.0, 0.0), [255, 255, 255]);
        assert_eq!(m.amplitude(f32::NAN, 1.0), NO_DATA);
        assert_eq!(m.amplitude(f32::INFINITY, 1.0), NO_DATA);
        for map in Colormap::ALL {
            for t in [0.0, 0.2, 0.5, 0.8, 1.0] {
                assert_ne!(map.at(t), NO_DATA, "{map:?} must not use the no-data colour");
            }
        }
    }

    #[test]
    fn names_match_serde_and_the_command_line() {
        for map in Colormap::ALL {
            let json = serde_json::to_string(&map).unwrap();
            assert_eq!(json, format!("\"{}\"", map.name()));
            assert_eq!(Colormap::from_name(map.name()), Some(map));
        }
        seis_core::choice::assert_names_match_serde::<Colormap>();
        seis_core::choice::assert_names_match_serde::<crate::Sampling>();
        seis_core::choice::assert_names_match_serde::<crate::Display>();
        assert_eq!(Colormap::from_name("grey"), Some(Colormap::Gray));
    }
}
