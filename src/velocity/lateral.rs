//! Velocity models on other lateral grids than the seismic's, brought onto the seismic's traces.
//!
//! - A cube on a larger, coarser or shifted grid ([`cube_taps`]): each seismic trace is placed on the
//!   model's grid by its line numbers (`velocity.locate = "lines"`) or by its map coordinates
//!   (`"coordinates"`, through both files' coordinate transforms), and takes the bilinear mix of the four
//!   model traces around it. Only the model's lines that some seismic trace needs are read. A seismic trace
//!   outside the model is an error that says which lines (or where) the model does not cover.
//! - Functions at a few locations ([`function_weights`]): when the locations form a full grid (every
//!   listed inline with every listed crossline, however unevenly spaced) a seismic trace takes the
//!   bilinear mix of the four around it, and outside the grid the nearest edge holds; scattered locations
//!   are mixed by inverse squared distance on the ground.

use crate::volume::{CoordTransform, Geometry, IndexBox, LineAxis};

/// Two neighbouring samples of an axis and the weight of the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tap {
    pub lo: usize,
    pub hi: usize,
    pub w: f64,
}

impl Tap {
    /// The taps around fractional index `f` of an axis of `len` samples.
    fn at(f: f64, len: usize) -> Tap {
        let f = f.clamp(0.0, (len - 1) as f64);
        let lo = (f.floor() as usize).min(len - 1);
        let hi = (lo + 1).min(len - 1);
        Tap { lo, hi, w: if hi == lo { 0.0 } else { f - lo as f64 } }
    }

    fn shifted(self, by: usize) -> Tap {
        Tap { lo: self.lo - by, hi: self.hi - by, w: self.w }
    }

    fn used(&self) -> impl Iterator<Item = usize> {
        let (lo, hi, w) = (self.lo, self.hi, self.w);
        [(lo, w < 1.0), (hi, w > 0.0)].into_iter().filter(|(_, u)| *u).map(|(i, _)| i)
    }
}

/// Where every seismic trace (in `[il][xl]` order) takes its velocity from a cube: the box of the model to
/// read, and per trace the inline and crossline taps in that box.
#[derive(Clone, Debug, PartialEq)]
pub struct CubeTaps {
    pub read: IndexBox,
    pub taps: Vec<[Tap; 2]>,
}

/// Tolerance (in model traces) for a seismic trace on the model's edge.
const EDGE: f64 = 1e-6;

/// How a model cube is laid on the seismic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Locate {
    /// By inline and crossline numbers.
    #[default]
    Lines,
    /// By map coordinates (both files need them).
    Coordinates,
}

/// The taps of every seismic trace in the cube `model`, or what the model does not cover.
pub fn cube_taps(model: &Geometry, seismic: &Geometry, locate: Locate) -> Result<CubeTaps, String> {
    let [mi, mx, ns] = model.shape();
    let fractional: Vec<[f64; 2]> = match locate {
        Locate::Lines => {
            check_lines("inlines", &model.ilines, &seismic.ilines)?;
            check_lines("crosslines", &model.xlines, &seismic.xlines)?;
            let il: Vec<f64> =
                (0..seismic.ilines.len).map(|i| index_of(&model.ilines, seismic.ilines.value(i))).collect();
            let xl: Vec<f64> =
                (0..seismic.xlines.len).map(|j| index_of(&model.xlines, seismic.xlines.value(j))).collect();
            il.iter().flat_map(|&i| xl.iter().map(move |&j| [i, j])).collect()
        }
        Locate::Coordinates => by_coordinates(model, seismic)?,
    };
    let taps: Vec<[Tap; 2]> = fractional.iter().map(|[i, j]| [Tap::at(*i, mi), Tap::at(*j, mx)]).collect();
    let il = taps.iter().map(|t| t[0].lo).min().unwrap_or(0)..taps.iter().map(|t| t[0].hi + 1).max().unwrap_or(0);
    let xl = taps.iter().map(|t| t[1].lo).min().unwrap_or(0)..taps.iter().map(|t| t[1].hi + 1).max().unwrap_or(0);
    // Every model trace a seismic trace leans on must hold data.
    for (t, [ti, tx]) in taps.iter().enumerate() {
        for i in ti.used() {
            for j in tx.used() {
                if !model.live[i * mx + j] {
                    let nx = seismic.xlines.len;
                    return Err(format!(
                        "the model has no trace at inline {}, crossline {}, which the seismic's inline {}, crossline \
                         {} needs: fill the model's missing traces",
                        model.ilines.value(i),
                        model.xlines.value(j),
                        seismic.ilines.value(t / nx),
                        seismic.xlines.value(t % nx)
                    ));
                }
            }
        }
    }
    let taps = taps.into_iter().map(|[a, b]| [a.shifted(il.start), b.shifted(xl.start)]).collect();
    Ok(CubeTaps { read: IndexBox { il, xl, s: 0..ns }, taps })
}

/// Fractional index of line number `value` on `axis`.
fn index_of(axis: &LineAxis, value: i64) -> f64 {
    (value - axis.first) as f64 / axis.step as f64
}

/// Refuse seismic lines outside the model's, naming them.
fn check_lines(what: &str, model: &LineAxis, seismic: &LineAxis) -> Result<(), String> {
    let outside = |v: i64| {
        let f = index_of(model, v);
        f < -EDGE || f > (model.len - 1) as f64 + EDGE
    };
    let values: Vec<i64> = (0..seismic.len).map(|i| seismic.value(i)).filter(|&v| outside(v)).collect();
    if values.is_empty() {
        return Ok(());
    }
    let (below, above): (Vec<i64>, Vec<i64>) = values.iter().partition(|&&v| v < model.first);
    let span = |v: &[i64]| match v {
        [] => None,
        [one] => Some(one.to_string()),
        [first, .., last] => Some(format!("{first}..={last}")),
    };
    let missing: Vec<String> = [span(&below), span(&above)].into_iter().flatten().collect();
    Err(format!(
        "the model covers {what} {}..={} (step {}), and the seismic's {what} {} are outside it",
        model.first,
        model.last(),
        model.step,
        missing.join(" and ")
    ))
}

/// Fractional model indices of every seismic trace, through the coordinate transforms.
fn by_coordinates(model: &Geometry, seismic: &Geometry) -> Result<Vec<[f64; 2]>, String> {
    let (Some(m), Some(s)) = (model.coords, seismic.coords) else {
        let which = if model.coords.is_none() { "the model" } else { "the seismic" };
        return Err(format!("velocity.locate = \"coordinates\" needs map coordinates, and {which} has none"));
    };
    let inverse = Inverse::of(&m).ok_or("the model's coordinates do not span an area (all traces on a line)")?;
    let [ni, nx, _] = seismic.shape();
    let [mi, mx, _] = model.shape();
    let mut out = Vec::with_capacity(ni * nx);
    let mut outside = (0, None);
    for i in 0..ni {
        for j in 0..nx {
            let xy = s.xy(i as f64, j as f64);
            let f = inverse.apply(xy);
            let inside = |f: f64, n: usize| f >= -EDGE && f <= (n - 1) as f64 + EDGE;
            if !(inside(f[0], mi) && inside(f[1], mx)) {
                outside.0 += 1;
                outside.1.get_or_insert((i, j, xy));
            }
            out.push(f);
        }
    }
    if let (n, Some((i, j, [x, y]))) = outside {
        return Err(format!(
            "{n} of the seismic's {} traces lie outside the model's area, the first at inline {}, crossline {} (x \
             {x:.1}, y {y:.1}); the model covers inlines {}..={}, crosslines {}..={}",
            ni * nx,
            seismic.ilines.value(i),
            seismic.xlines.value(j),
            model.ilines.first,
            model.ilines.last(),
            model.xlines.first,
            model.xlines.last()
        ));
    }
    Ok(out)
}

/// The inverse of a coordinate transform: map coordinates to fractional grid indices.
struct Inverse {
    origin: [f64; 2],
    /// Rows of the inverse of the 2 × 2 matrix whose columns are `per_iline` and `per_xline`.
    rows: [[f64; 2]; 2],
}

impl Inverse {
    fn of(c: &CoordTransform) -> Option<Inverse> {
        let [a, b] = c.per_iline;
        let [p, q] = c.per_xline;
        // Columns (a, b) and (p, q): det = a q − p b.
        let det = a * q - p * b;
        let scale = (a.hypot(b) * p.hypot(q)).max(f64::MIN_POSITIVE);
        // NaN included: a transform of non-numbers has no inverse.
        if det.is_nan() || det.abs() <= 1e-9 * scale {
            return None;
        }
        Some(Inverse { origin: c.origin, rows: [[q / det, -p / det], [-b / det, a / det]] })
    }

    fn apply(&self, xy: [f64; 2]) -> [f64; 2] {
        let (dx, dy) = (xy[0] - self.origin[0], xy[1] - self.origin[1]);
        [self.rows[0][0] * dx + self.rows[0][1] * dy, self.rows[1][0] * dx + self.rows[1][1] * dy]
    }
}

/// Traces of the read box mixed onto the seismic: `values` holds the box `[il][xl][s]`, `ns` samples per
/// trace; the result is one trace per seismic trace.
pub fn apply_cube_taps(values: &[f32], taps: &CubeTaps, ns: usize) -> Vec<f32> {
    use rayon::prelude::*;
    let nx = taps.read.xl.len();
    let mut out = vec![0.0f32; taps.taps.len() * ns];
    out.par_chunks_mut(ns.max(1)).zip(&taps.taps).for_each(|(trace, [ti, tx])| {
        let tr = |i: usize, j: usize| &values[(i * nx + j) * ns..(i * nx + j + 1) * ns];
        let corners = [
            (tr(ti.lo, tx.lo), (1.0 - ti.w) * (1.0 - tx.w)),
            (tr(ti.lo, tx.hi), (1.0 - ti.w) * tx.w),
            (tr(ti.hi, tx.lo), ti.w * (1.0 - tx.w)),
            (tr(ti.hi, tx.hi), ti.w * tx.w),
        ];
        for (k, o) in trace.iter_mut().enumerate() {
            *o = corners.iter().filter(|(_, w)| *w > 0.0).map(|(t, w)| t[k] as f64 * w).sum::<f64>() as f32;
        }
    });
    out
}

/// How a seismic trace mixes the located functions: `(function, weight)` pairs, weights summing to 1.
pub type Mix = Vec<(usize, f64)>;

/// The mix of functions at `locations` (inline, crossline) for every seismic trace (`[il][xl]` order).
/// `bin` is the distance between inlines and between crosslines (m), for scattered locations.
pub fn function_weights(locations: &[(i64, i64)], seismic: &Geometry, bin: [f64; 2]) -> (Vec<Mix>, &'static str) {
    let mut ils: Vec<i64> = locations.iter().map(|l| l.0).collect();
    let mut xls: Vec<i64> = locations.iter().map(|l| l.1).collect();
    ils.sort_unstable();
    ils.dedup();
    xls.sort_unstable();
    xls.dedup();
    let (ni, nx) = (seismic.ilines.len, seismic.xlines.len);
    let grid = ils.len() * xls.len() == locations.len();
    let traces = (0..ni).flat_map(|i| (0..nx).map(move |j| (i, j)));
    if grid {
        let at = |il: i64, xl: i64| locations.iter().position(|&l| l == (il, xl)).expect("a full grid");
        let table: Vec<Vec<usize>> = ils.iter().map(|&il| xls.iter().map(|&xl| at(il, xl)).collect()).collect();
        let mixes = traces
            .map(|(i, j)| {
                let ti = irregular_tap(&ils, seismic.ilines.value(i));
                let tx = irregular_tap(&xls, seismic.xlines.value(j));
                let mut mix: Mix = Vec::with_capacity(4);
                for (a, wa) in [(ti.lo, 1.0 - ti.w), (ti.hi, ti.w)] {
                    for (b, wb) in [(tx.lo, 1.0 - tx.w), (tx.hi, tx.w)] {
                        if wa * wb > 0.0 {
                            mix.push((table[a][b], wa * wb));
                        }
                    }
                }
                mix
            })
            .collect();
        return (mixes, "bilinear between the functions (a full grid of locations), the nearest edge held outside it");
    }
    let ground = |il: i64, xl: i64, i: usize, j: usize| {
        let di = (il - seismic.ilines.value(i)) as f64 / seismic.ilines.step as f64 * bin[0];
        let dj = (xl - seismic.xlines.value(j)) as f64 / seismic.xlines.step as f64 * bin[1];
        di * di + dj * dj
    };
    let mixes = traces
        .map(|(i, j)| {
            let d2: Vec<f64> = locations.iter().map(|&(il, xl)| ground(il, xl, i, j)).collect();
            if let Some(k) = d2.iter().position(|&d| d == 0.0) {
                return vec![(k, 1.0)];
            }
            let total: f64 = d2.iter().map(|d| 1.0 / d).sum();
            d2.iter().enumerate().map(|(k, d)| (k, 1.0 / d / total)).collect()
        })
        .collect();
    (mixes, "inverse squared distance between the functions (scattered locations)")
}

/// The taps around line number `value` among sorted, distinct `lines`, the end held beyond them.
fn irregular_tap(lines: &[i64], value: i64) -> Tap {
    let k = lines.partition_point(|&l| l <= value);
    if k == 0 {
        return Tap { lo: 0, hi: 0, w: 0.0 };
    }
    if k == lines.len() {
        return Tap { lo: k - 1, hi: k - 1, w: 0.0 };
    }
    let (a, b) = (lines[k - 1], lines[k]);
    Tap { lo: k - 1, hi: k, w: (value - a) as f64 / (b - a) as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::{Domain, SampleAxis};

    fn grid(il: LineAxis, xl: LineAxis) -> Geometry {
        Geometry::regular(il, xl, SampleAxis { origin: 0.0, step: 4.0, len: 2, domain: Domain::Time })
    }

    #[test]
    fn a_coarser_larger_model_is_read_in_part_and_mixed_bilinearly() {
        // Model every 4th line over 100..=140 and 200..=240; seismic every line over 110..=117, 205..=210.
        let model = grid(LineAxis::new(100, 4, 11), LineAxis::new(200, 4, 11));
        let seismic = grid(LineAxis::new(110, 1, 8), LineAxis::new(205, 1, 6));
        let taps = cube_taps(&model, &seismic, Locate::Lines).unwrap();
        // Lines 108..=120 and 204..=212 are read.
        assert_eq!((taps.read.il.clone(), taps.read.xl.clone()), (2..6, 1..4));
        // A model linear in line numbers comes back exactly: v = 1000 + 3 il + 5 xl, two samples (v, 2v).
        let (ri, rx) = (taps.read.il.clone(), taps.read.xl.clone());
        let v = |il: i64, xl: i64| 1000.0 + 3.0 * il as f64 + 5.0 * xl as f64;
        let values: Vec<f32> = ri
            .flat_map(|i| rx.clone().map(move |j| (i, j)))
            .flat_map(|(i, j)| {
                let x = v(model.ilines.value(i), model.xlines.value(j)) as f32;
                [x, 2.0 * x]
            })
            .collect();
        let out = apply_cube_taps(&values, &taps, 2);
        for i in 0..8 {
            for j in 0..6 {
                let t = i * 6 + j;
                let expect = v(seismic.ilines.value(i), seismic.xlines.value(j));
                assert!(
                    (out[2 * t] as f64 - expect).abs() < 1e-3 && (out[2 * t + 1] as f64 - 2.0 * expect).abs() < 1e-2
                );
            }
        }
    }

    #[test]
    fn a_model_that_does_not_cover_the_seismic_says_which_lines_are_missing() {
        let model = grid(LineAxis::new(100, 2, 6), LineAxis::new(200, 1, 20));
        let seismic = grid(LineAxis::new(96, 1, 20), LineAxis::new(205, 1, 5));
        let e = cube_taps(&model, &seismic, Locate::Lines).unwrap_err();
        assert!(e.contains("inlines 100..=110") && e.contains("96..=99 and 111..=115"), "{e}");
        let mut dead = grid(LineAxis::new(100, 1, 3), LineAxis::new(200, 1, 3));
        dead.live[4] = false;
        let e = cube_taps(&dead, &grid(LineAxis::new(101, 1, 1), LineAxis::new(201, 1, 1)), Locate::Lines).unwrap_err();
        assert!(e.contains("no trace at inline 101, crossline 201"), "{e}");
    }

    #[test]
    fn by_coordinates_a_rotated_model_lands_where_the_map_says() {
        // The model: 25 m bins rotated by 30°; the seismic: 12.5 m bins on the same axes, offset by half a bin.
        let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
        let mut model = grid(LineAxis::new(1, 1, 10), LineAxis::new(1, 1, 10));
        model.coords = Some(CoordTransform {
            origin: [1000.0, 2000.0],
            per_iline: [25.0 * c, 25.0 * s],
            per_xline: [-25.0 * s, 25.0 * c],
        });
        let mut seismic = grid(LineAxis::new(500, 1, 4), LineAxis::new(800, 1, 4));
        let o = model.coords.unwrap().xy(2.5, 3.0);
        seismic.coords =
            Some(CoordTransform { origin: o, per_iline: [12.5 * c, 12.5 * s], per_xline: [-12.5 * s, 12.5 * c] });
        let taps = cube_taps(&model, &seismic, Locate::Coordinates).unwrap();
        // Seismic trace (1, 2) is at model index (2.5 + 0.5, 3 + 1) = (3, 4).
        let t = taps.taps[4 + 2];
        let (fi, fj) = ((t[0].lo + taps.read.il.start) as f64 + t[0].w, (t[1].lo + taps.read.xl.start) as f64 + t[1].w);
        assert!((fi - 3.0).abs() < 1e-9 && (fj - 4.0).abs() < 1e-9, "{fi} {fj}");
        seismic.coords.as_mut().unwrap().origin = [0.0, 0.0];
        assert!(cube_taps(&model, &seismic, Locate::Coordinates)
            .unwrap_err()
            .contains("16 of the seismic's 16 traces"));
        seismic.coords = None;
        assert!(cube_taps(&model, &seismic, Locate::Coordinates).unwrap_err().contains("the seismic has none"));
    }

    #[test]
    fn functions_on_a_grid_mix_bilinearly_and_scattered_ones_by_distance() {
        let seismic = grid(LineAxis::new(100, 1, 21), LineAxis::new(200, 1, 11));
        let locations = [(100, 200), (120, 200), (100, 210), (120, 210)];
        let (mixes, how) = function_weights(&locations, &seismic, [10.0, 10.0]);
        assert!(how.starts_with("bilinear"));
        // inline 105, crossline 208: 3/4 · 1/5 from (100, 200), ...
        let m = &mixes[5 * 11 + 8];
        let weight = |k: usize| m.iter().find(|(f, _)| *f == k).map_or(0.0, |(_, w)| *w);
        assert!((weight(0) - 0.75 * 0.2).abs() < 1e-12 && (weight(3) - 0.25 * 0.8).abs() < 1e-12, "{m:?}");
        let (mixes, how) = function_weights(&[(100, 200), (120, 210), (110, 205)], &seismic, [10.0, 10.0]);
        assert!(how.starts_with("inverse"));
        assert_eq!(mixes[10 * 11 + 5], vec![(2, 1.0)]);
        assert!((mixes[0].iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
