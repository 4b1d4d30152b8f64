//! Map slices in map orientation: a horizontal slice is turned and flipped (in quarter turns and mirror
//! images, which move no sample) so that north is as near to up and east as near to right as the survey
//! grid allows, from the survey coordinates. What is left of the grid's rotation is shown by a north arrow
//! and stated on the picture.
//!
//! Surveys are commonly laid out with inlines growing to the north (F3 in the North Sea) or to the south,
//! crosslines to the east or west, and either axis may be the first of the files' grid: drawing inlines
//! downwards whatever the coordinates say gives a mirror image of the base map in half of them.

use serde::{Deserialize, Serialize};

use seis_core::volume::CoordTransform;

/// How the rows and columns of a horizontal slice (inlines down, crosslines across, as cut from the grid)
/// are arranged on the picture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapView {
    /// Crosslines down and inlines across, instead of inlines down.
    pub transposed: bool,
    /// The picture's rows run against the axis drawn down (its numbers decrease downwards).
    pub rows_reversed: bool,
    /// The picture's columns run against the axis drawn across (its numbers decrease to the right).
    pub cols_reversed: bool,
    /// Direction of north on the picture, in degrees clockwise from up; `None` without coordinates.
    pub north_deg: Option<f64>,
    /// What the picture's orientation is, in words (drawn under the picture).
    pub note: String,
}

/// Residual rotations below this are "north up" without qualification.
const NORTH_UP_EXACT_DEG: f64 = 0.5;
/// Residual rotations below this are still "north up", with the angle stated.
const NORTH_UP_NEARLY_DEG: f64 = 10.0;

/// The arrangement of a horizontal slice of a grid with map coordinates `coords` (`None`: the grid's own
/// arrangement, said to be such).
pub fn map_view(coords: Option<&CoordTransform>) -> MapView {
    let Some(c) = coords else {
        return MapView {
            transposed: false,
            rows_reversed: false,
            cols_reversed: false,
            north_deg: None,
            note: "Grid view (the survey has no coordinates): inlines increase downwards, crosslines to the right; \
                   not a map orientation."
                .into(),
        };
    };
    let (il, xl) = (c.per_iline, c.per_xline);
    // For each arrangement, the map step of one picture column to the right and of one row down.
    let mut best: Option<(f64, MapView, [f64; 2], [f64; 2])> = None;
    for transposed in [false, true] {
        for rows_reversed in [false, true] {
            for cols_reversed in [false, true] {
                let (down, across) = if transposed { (xl, il) } else { (il, xl) };
                let down = scaled(down, if rows_reversed { -1.0 } else { 1.0 });
                let right = scaled(across, if cols_reversed { -1.0 } else { 1.0 });
                // Right should point east (+x), down should point south (−y).
                let miss = angle_between(right, [1.0, 0.0]) + angle_between(down, [0.0, -1.0]);
                let view = MapView { transposed, rows_reversed, cols_reversed, north_deg: None, note: String::new() };
                if best.as_ref().is_none_or(|b| miss < b.0 - 1e-12) {
                    best = Some((miss, view, right, down));
                }
            }
        }
    }
    let (_, mut view, right, down) = best.expect("eight arrangements");
    // North on the picture: the picture direction (u right, v down, in metres) whose map step is (0, 1).
    let (ur, vd) = (unit(right), unit(down));
    let det = ur[0] * vd[1] - ur[1] * vd[0];
    let (u, v) = if det.abs() > 1e-12 { (-vd[0] / det, ur[0] / det) } else { (0.0, -1.0) };
    let north = u.atan2(-v).to_degrees();
    view.north_deg = Some(north);
    let (down_name, across_name) = if view.transposed { ("crosslines", "inlines") } else { ("inlines", "crosslines") };
    let vertical = if view.rows_reversed { "upwards" } else { "downwards" };
    let horizontal = if view.cols_reversed { "to the left" } else { "to the right" };
    let lines = format!("{down_name} increase {vertical}, {across_name} {horizontal}");
    let way = if north > 0.0 { "clockwise" } else { "anticlockwise" };
    view.note = if north.abs() < NORTH_UP_EXACT_DEG {
        format!("Map view from the survey coordinates: north up, east right; {lines}.")
    } else if north.abs() < NORTH_UP_NEARLY_DEG {
        format!(
            "Map view from the survey coordinates: north up, east right, to within {:.1}° (true north is the \
             arrow, {way} from up); {lines}.",
            north.abs()
        )
    } else {
        format!(
            "Map view from the survey coordinates, turned to the grid: north is {:.1}° {way} from up (arrow); {lines}.",
            north.abs()
        )
    };
    view
}

fn scaled(v: [f64; 2], s: f64) -> [f64; 2] {
    [v[0] * s, v[1] * s]
}

fn unit(v: [f64; 2]) -> [f64; 2] {
    let n = v[0].hypot(v[1]);
    if n > 0.0 {
        [v[0] / n, v[1] / n]
    } else {
        v
    }
}

fn angle_between(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (a, b) = (unit(a), unit(b));
    (a[0] * b[0] + a[1] * b[1]).clamp(-1.0, 1.0).acos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(per_iline: [f64; 2], per_xline: [f64; 2]) -> CoordTransform {
        CoordTransform { origin: [1000.0, 5000.0], per_iline, per_xline }
    }

    #[test]
    fn inlines_growing_north_are_drawn_upwards() {
        // F3: inlines grow to the north (and 1.6° west of it), crosslines to the east.
        let v = map_view(Some(&grid([-0.698, 24.99], [24.99, 0.698])));
        assert_eq!((v.transposed, v.rows_reversed, v.cols_reversed), (false, true, false));
        let north = v.north_deg.unwrap();
        assert!((north - 1.6).abs() < 0.05, "{north}");
        assert!(v.note.contains("north up") && v.note.contains("within 1.6°"), "{}", v.note);
        assert!(v.note.contains("clockwise") && v.note.contains("inlines increase upwards"), "{}", v.note);
    }

    #[test]
    fn every_layout_of_an_axis_aligned_grid_comes_out_north_up() {
        let steps = [[25.0, 0.0], [-25.0, 0.0], [0.0, 12.5], [0.0, -12.5]];
        for a in steps {
            for b in steps {
                if a[0] * b[0] + a[1] * b[1] != 0.0 {
                    continue;
                }
                let v = map_view(Some(&grid(a, b)));
                assert_eq!(v.north_deg, Some(0.0), "{a:?} {b:?}");
                assert!(v.note.contains("north up, east right"), "{}", v.note);
                // The axis that runs north-south is drawn down the picture.
                let inlines_north_south = a[0] == 0.0;
                assert_eq!(v.transposed, !inlines_north_south, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_grid_turned_thirty_degrees_keeps_the_arrow_at_thirty() {
        let t = 30f64.to_radians();
        // Inlines grow 30° east of north, crosslines 30° south of east.
        let v = map_view(Some(&grid([25.0 * t.sin(), 25.0 * t.cos()], [25.0 * t.cos(), -25.0 * t.sin()])));
        let north = v.north_deg.unwrap();
        assert!((north.abs() - 30.0).abs() < 1e-6, "{north}");
        assert!(v.note.contains("30.0°"), "{}", v.note);
    }

    #[test]
    fn without_coordinates_the_grid_is_drawn_as_it_is_and_says_so() {
        let v = map_view(None);
        assert!(!v.transposed && !v.rows_reversed && !v.cols_reversed && v.north_deg.is_none());
        assert!(v.note.contains("not a map orientation"));
    }
}
