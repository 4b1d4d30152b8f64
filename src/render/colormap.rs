//! Colour maps for signed amplitudes: small piecewise-linear tables from the negative clip (t = 0) through
//! zero (t = 0.5) to the positive clip (t = 1).

use serde::{Deserialize, Serialize};

/// How amplitudes become colours.
///
/// Polarity: positive amplitudes (peaks) are red in `seismic`, white in `gray` and black in `binary`; the
/// amplitude sign is drawn as the data carry it, nothing is flipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Colormap {
    /// Red-white-blue diverging map: negative blue, zero white, positive red, darkening towards the clip.
    #[default]
    Seismic,
    /// Black (negative) through mid-gray (zero) to white (positive).
    #[value(alias = "grey")]
    #[serde(alias = "grey")]
    Gray,
    /// White (negative) through mid-gray to black (positive): peaks black, as on paper sections.
    Binary,
}

/// One control point of a map: position in `[0, 1]` and colour there.
type Stop = (f32, [u8; 3]);

const SEISMIC: &[Stop] =
    &[(0.0, [0, 0, 96]), (0.25, [0, 48, 224]), (0.5, [255, 255, 255]), (0.75, [224, 24, 0]), (1.0, [112, 0, 0])];
const GRAY: &[Stop] = &[(0.0, [0, 0, 0]), (1.0, [255, 255, 255])];
const BINARY: &[Stop] = &[(0.0, [255, 255, 255]), (1.0, [0, 0, 0])];

/// The colour of samples that hold no number (NaN or infinite): a muted green that none of the maps uses.
pub const NO_DATA: [u8; 3] = [104, 168, 104];

impl Colormap {
    pub const ALL: [Colormap; 3] = [Colormap::Seismic, Colormap::Gray, Colormap::Binary];

    /// The name used in job files, on the command line and in sidecars.
    pub fn name(self) -> &'static str {
        match self {
            Colormap::Seismic => "seismic",
            Colormap::Gray => "gray",
            Colormap::Binary => "binary",
        }
    }

    /// How the amplitude sign shows, in words (written to the sidecar).
    pub fn polarity(self) -> &'static str {
        match self {
            Colormap::Seismic => "positive red, zero white, negative blue",
            Colormap::Gray => "positive white, zero mid-gray, negative black",
            Colormap::Binary => "positive black, zero mid-gray, negative white",
        }
    }

    fn stops(self) -> &'static [Stop] {
        match self {
            Colormap::Seismic => SEISMIC,
            Colormap::Gray => GRAY,
            Colormap::Binary => BINARY,
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

/// A colour map sampled for one clip: [`Colormap::amplitude`] looked up in a table instead of computed, for
/// the hundreds of thousands of pixels of a picture. The table holds the map at `PALETTE_STEPS + 1` evenly
/// spaced positions, so a pixel's colour is the exact one of an amplitude at most `clip / PALETTE_STEPS`
/// away: within one level of 255 in every channel, and exact at zero, at the clip and at every stop of the
/// maps (which all lie on multiples of 1/4).
pub struct Palette {
    colours: Vec<[u8; 3]>,
    /// Table positions per unit of amplitude.
    scale: f32,
}

/// Intervals of the palette table.
pub const PALETTE_STEPS: usize = 4096;

impl Colormap {
    /// This map under a symmetric clip, tabulated (see [`Palette`]).
    pub fn palette(self, clip: f32) -> Palette {
        let colours = (0..=PALETTE_STEPS).map(|i| self.at(i as f32 / PALETTE_STEPS as f32)).collect();
        // A zero clip draws everything in the mid colour, as `amplitude` does.
        let scale = if clip > 0.0 { 0.5 * PALETTE_STEPS as f32 / clip } else { 0.0 };
        Palette { colours, scale }
    }
}

impl Palette {
    /// The colour of `value`, as [`Colormap::amplitude`] gives it to within the table's step.
    pub fn colour(&self, value: f32) -> [u8; 3] {
        if !value.is_finite() {
            return NO_DATA;
        }
        let position = (value * self.scale + 0.5 * PALETTE_STEPS as f32).clamp(0.0, PALETTE_STEPS as f32);
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
    fn the_palette_gives_the_colour_of_each_amplitude_to_within_one_level() {
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
                let mut worst = 0;
                for i in 0..=20_000 {
                    let v = clip * (i as f32 / 10_000.0 - 1.0) * 1.0001;
                    let (a, b) = (palette.colour(v), map.amplitude(v, clip));
                    worst = worst.max((0..3).map(|k| a[k].abs_diff(b[k])).max().unwrap());
                }
                assert!(worst <= 1, "{map:?} clip {clip}: a channel differs by {worst}");
            }
            assert!(map.palette(0.0).colour(5.0) == map.at(0.5), "a zero clip draws the mid colour");
        }
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
    fn names_match_serde_and_clap() {
        use clap::ValueEnum;
        for map in Colormap::ALL {
            let json = serde_json::to_string(&map).unwrap();
            assert_eq!(json, format!("\"{}\"", map.name()));
            assert_eq!(Colormap::from_str(map.name(), false).unwrap(), map);
        }
        assert_eq!(serde_json::from_str::<Colormap>("\"grey\"").unwrap(), Colormap::Gray);
        assert_eq!(Colormap::from_str("grey", false).unwrap(), Colormap::Gray);
    }
}
