//! Velocity models on other lateral grids than the seismic's, brought onto the seismic's traces.
//!
//! - A cube on a larger, coarser or shifted grid ([`cube_taps`]): each seismic trace is placed on the
//!   model's grid by its line numbers (`velocity.locate = "lines"`) or by its map coordinates
//!   (`"coordinates"`, through both files' coordinate transforms), and takes the bilinear mix of the four
//!   model traces around it. Only the model's lines that some seismic trace needs are read. A seismic trace
//!   outside the model is an error that says which lines (or where) the model does not cover, or, with
//!   [`Outside::Hold`], takes the model's nearest edge with a warning that says the same.
//! - Functions at a few locations ([`function_weights`]): when the locations form a full grid (every
//!   listed inline with every listed crossline, however unevenly spaced) a seismic trace takes the
//!   bilinear mix of the four around it, and outside the grid the nearest edge holds; scattered locations
//!   are mixed by inverse squared distance on the ground, the [`NEAREST`] locations to each trace, found
//!   in a grid of buckets.
//!
//! The cost of functions grows with the traces, not with the product of traces and locations: the grid's
//! functions are found by a hash of their location, and a scattered trace searches the buckets around it.
//! `seisimage validate` on a 1000 × 1000-trace survey of 10 samples: a full grid of 1000 × 1000
//! functions (36 MB) takes 18 s and 2.8 GB, 100 000 and 300 000 scattered locations 4.3 s and 5.0 s
//! (0.6 GB); before, a 300 × 300 grid on as many traces took 5.8 s (0.8 s now) and 1000 scattered
//! locations on 300 × 300 traces 10.3 s and 1.4 GB (0.2 s and 64 MB now), the cost growing with the
//! product of locations and traces.

use std::collections::HashMap;

use seis_core::cancel::CancelToken;
use seis_core::volume::{CoordTransform, Geometry, IndexBox, LineAxis};

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

/// What happens to seismic traces outside a velocity cube (`velocity.outside`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outside {
    /// They are an error naming the lines (or the place) the model does not cover.
    #[default]
    Refuse,
    /// They take the velocity of the model's nearest edge, with a warning naming them.
    Hold,
}

/// The taps of every seismic trace in the cube `model`, or what the model does not cover; with
/// [`Outside::Hold`], traces outside take the model's nearest edge and the second value says which.
pub fn cube_taps(
    model: &Geometry,
    seismic: &Geometry,
    locate: Locate,
    outside: Outside,
) -> Result<(CubeTaps, Option<String>), String> {
    let [mi, mx, ns] = model.shape();
    let (fractional, uncovered): (Vec<[f64; 2]>, Option<String>) = match locate {
        Locate::Lines => {
            let uncovered =
                [("inlines", &model.ilines, &seismic.ilines), ("crosslines", &model.xlines, &seismic.xlines)]
                    .into_iter()
                    .filter_map(|(what, m, s)| check_lines(what, m, s).err())
                    .reduce(|a, b| format!("{a}; {b}"));
            let il: Vec<f64> =
                (0..seismic.ilines.len).map(|i| index_of(&model.ilines, seismic.ilines.value(i))).collect();
            let xl: Vec<f64> =
                (0..seismic.xlines.len).map(|j| index_of(&model.xlines, seismic.xlines.value(j))).collect();
            (il.iter().flat_map(|&i| xl.iter().map(move |&j| [i, j])).collect(), uncovered)
        }
        Locate::Coordinates => by_coordinates(model, seismic)?,
    };
    let held = match (uncovered, outside) {
        (Some(why), Outside::Refuse) => return Err(why),
        (Some(why), Outside::Hold) => {
            Some(format!("{why}: they take the velocity of the model's nearest edge (velocity.outside = \"hold\")"))
        }
        (None, _) => None,
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
    Ok((CubeTaps { read: IndexBox { il, xl, s: 0..ns }, taps }, held))
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

/// Fractional model indices of every seismic trace, through the coordinate transforms, and where the
/// model does not cover the seismic.
#[allow(clippy::type_complexity)]
fn by_coordinates(model: &Geometry, seismic: &Geometry) -> Result<(Vec<[f64; 2]>, Option<String>), String> {
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
    let uncovered = outside.1.map(|(i, j, [x, y])| {
        let n = outside.0;
        format!(
            "{n} of the seismic's {} traces lie outside the model's area, the first at inline {}, crossline {} (x \
             {x:.1}, y {y:.1}); the model covers inlines {}..={}, crosslines {}..={}",
            ni * nx,
            seismic.ilines.value(i),
            seismic.xlines.value(j),
            model.ilines.first,
            model.ilines.last(),
            model.xlines.first,
            model.xlines.last()
        )
    });
    Ok((out, uncovered))
}

/// The inverse of a coordinate transform: map coordinates to fractional grid indices.
pub(crate) struct Inverse {
    origin: [f64; 2],
    /// Rows of the inverse of the 2 × 2 matrix whose columns are `per_iline` and `per_xline`.
    rows: [[f64; 2]; 2],
}

impl Inverse {
    pub(crate) fn of(c: &CoordTransform) -> Option<Inverse> {
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

    pub(crate) fn apply(&self, xy: [f64; 2]) -> [f64; 2] {
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

/// How many of the nearest scattered locations a trace mixes: beyond a few rings of neighbours the
/// inverse squared distance gives weights too small to matter, and mixing every location made the cost
/// grow with the product of traces and locations.
pub const NEAREST: usize = 16;

/// The mix of functions at `locations` (inline, crossline) for every seismic trace (`[il][xl]` order).
/// `bin` is the distance between inlines and between crosslines (m), for scattered locations. `cancel` is
/// polled between blocks of traces.
pub fn function_weights(
    locations: &[(i64, i64)],
    seismic: &Geometry,
    bin: [f64; 2],
    cancel: &CancelToken,
) -> seis_core::error::Result<(Vec<Mix>, &'static str)> {
    if let Some(taps) = grid_taps(locations, seismic) {
        let mixes = per_trace(seismic, cancel, |il, xl| {
            let (ti, tx) = (irregular_tap(&taps.ils, il), irregular_tap(&taps.xls, xl));
            let mut mix: Mix = Vec::with_capacity(4);
            for (a, wa) in [(ti.lo, 1.0 - ti.w), (ti.hi, ti.w)] {
                for (b, wb) in [(tx.lo, 1.0 - tx.w), (tx.hi, tx.w)] {
                    if wa * wb > 0.0 {
                        mix.push((taps.function(a, b), wa * wb));
                    }
                }
            }
            mix
        })?;
        return Ok((mixes, GRID_MIX));
    }
    let ground = Ground { seismic, bin };
    let points: Vec<[f64; 2]> = locations.iter().map(|&(il, xl)| ground.at(il, xl)).collect();
    let buckets = Buckets::new(&points);
    let mixes = per_trace(seismic, cancel, |il, xl| {
        // The distances again from the line numbers, and the functions in the order of the file, so that
        // the weights round as they did when every location was mixed.
        let mut nearest: Vec<usize> = buckets.nearest(ground.at(il, xl), NEAREST).into_iter().map(|(_, k)| k).collect();
        nearest.sort_unstable();
        let d2: Vec<f64> = nearest.iter().map(|&k| ground.squared_distance(locations[k], (il, xl))).collect();
        if let Some(at) = d2.iter().position(|&d| d == 0.0) {
            return vec![(nearest[at], 1.0)];
        }
        let total: f64 = d2.iter().map(|d| 1.0 / d).sum();
        nearest.iter().zip(&d2).map(|(&k, d)| (k, 1.0 / d / total)).collect()
    })?;
    Ok((mixes, "inverse squared distance between the nearest functions (scattered locations)"))
}

/// How functions on a full grid of locations are mixed, in words.
pub const GRID_MIX: &str =
    "bilinear between the functions (a full grid of locations), the nearest edge held outside it";

/// Functions whose locations form a full grid: every listed inline with every listed crossline, however
/// unevenly spaced. A seismic trace mixes the four functions around it, bilinearly in line numbers, so that
/// its mix is the product of one tap along the inlines and one along the crosslines.
#[derive(Clone, Debug, PartialEq)]
pub struct GridTaps {
    /// The locations' inlines and crosslines, sorted.
    pub ils: Vec<i64>,
    pub xls: Vec<i64>,
    /// `table[a * xls.len() + b]`: the function at the a-th inline and the b-th crossline.
    table: Vec<usize>,
    /// Per seismic inline, its taps between `ils`; per seismic crossline, between `xls`.
    pub rows: Vec<Tap>,
    pub cols: Vec<Tap>,
}

impl GridTaps {
    /// The function at the `a`-th listed inline and the `b`-th listed crossline.
    pub fn function(&self, a: usize, b: usize) -> usize {
        self.table[a * self.xls.len() + b]
    }
}

/// The taps of `locations` for the seismic's lines when they form a full grid (see [`GridTaps`]).
pub fn grid_taps(locations: &[(i64, i64)], seismic: &Geometry) -> Option<GridTaps> {
    let mut ils: Vec<i64> = locations.iter().map(|l| l.0).collect();
    let mut xls: Vec<i64> = locations.iter().map(|l| l.1).collect();
    ils.sort_unstable();
    ils.dedup();
    xls.sort_unstable();
    xls.dedup();
    if ils.len() * xls.len() != locations.len() {
        return None;
    }
    let index: HashMap<(i64, i64), usize> = locations.iter().enumerate().map(|(k, &l)| (l, k)).collect();
    let table = ils.iter().flat_map(|&il| xls.iter().map(move |&xl| (il, xl))).map(|l| index.get(&l).copied());
    let table: Vec<usize> = table.collect::<Option<_>>()?; // a location given twice leaves a hole
    let rows = (0..seismic.ilines.len).map(|i| irregular_tap(&ils, seismic.ilines.value(i))).collect();
    let cols = (0..seismic.xlines.len).map(|j| irregular_tap(&xls, seismic.xlines.value(j))).collect();
    Some(GridTaps { ils, xls, table, rows, cols })
}

/// `mix(inline, crossline)` for every seismic trace, in parallel, polling `cancel` between blocks.
fn per_trace(
    seismic: &Geometry,
    cancel: &CancelToken,
    mix: impl Fn(i64, i64) -> Mix + Sync,
) -> seis_core::error::Result<Vec<Mix>> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let nx = seismic.xlines.len;
    let traces = seismic.ilines.len * nx;
    let mut out: Vec<Mix> = Vec::new();
    for first in (0..traces).step_by(BLOCK) {
        cancel.check()?;
        let block = (first..(first + BLOCK).min(traces)).into_par_iter();
        out.par_extend(block.map(|t| mix(seismic.ilines.value(t / nx), seismic.xlines.value(t % nx))));
    }
    Ok(out)
}

/// Positions on the ground (m), from the first seismic trace, of inline and crossline numbers.
struct Ground<'a> {
    seismic: &'a Geometry,
    bin: [f64; 2],
}

impl Ground<'_> {
    fn at(&self, il: i64, xl: i64) -> [f64; 2] {
        let (s, b) = (self.seismic, self.bin);
        [
            (il - s.ilines.first) as f64 / s.ilines.step as f64 * b[0],
            (xl - s.xlines.first) as f64 / s.xlines.step as f64 * b[1],
        ]
    }

    /// The squared distance between two locations, from the difference of their line numbers.
    fn squared_distance(&self, (il, xl): (i64, i64), (to_il, to_xl): (i64, i64)) -> f64 {
        let (s, b) = (self.seismic, self.bin);
        let di = (il - to_il) as f64 / s.ilines.step as f64 * b[0];
        let dj = (xl - to_xl) as f64 / s.xlines.step as f64 * b[1];
        di * di + dj * dj
    }
}

/// Points sorted into a grid of square-ish buckets, about one point per bucket, for nearest-neighbour
/// searches ring by ring around a bucket.
struct Buckets<'a> {
    points: &'a [[f64; 2]],
    origin: [f64; 2],
    cell: [f64; 2],
    n: [usize; 2],
    /// Indices of the points of bucket `b` are `order[start[b]..start[b + 1]]`.
    start: Vec<usize>,
    order: Vec<usize>,
}

impl<'a> Buckets<'a> {
    fn new(points: &'a [[f64; 2]]) -> Self {
        let lo = |a: usize| points.iter().map(|p| p[a]).fold(f64::INFINITY, f64::min);
        let hi = |a: usize| points.iter().map(|p| p[a]).fold(f64::NEG_INFINITY, f64::max);
        let origin = [lo(0), lo(1)];
        let side = (points.len() as f64).sqrt().ceil().max(1.0) as usize;
        let extent = [hi(0) - origin[0], hi(1) - origin[1]];
        let n = extent.map(|e| if e > 0.0 { side } else { 1 });
        let cell = [0, 1].map(|a| if extent[a] > 0.0 { extent[a] / n[a] as f64 } else { 1.0 });
        let mut buckets = Buckets { points, origin, cell, n, start: vec![0; n[0] * n[1] + 1], order: Vec::new() };
        let of: Vec<usize> = points.iter().map(|p| buckets.bucket(*p)).map(|[i, j]| i * n[1] + j).collect();
        for &b in &of {
            buckets.start[b + 1] += 1;
        }
        for b in 0..n[0] * n[1] {
            buckets.start[b + 1] += buckets.start[b];
        }
        let mut fill = buckets.start.clone();
        buckets.order = vec![0; points.len()];
        for (k, &b) in of.iter().enumerate() {
            buckets.order[fill[b]] = k;
            fill[b] += 1;
        }
        buckets
    }

    /// The bucket of `p`, the nearest one for a point outside them all.
    fn bucket(&self, p: [f64; 2]) -> [usize; 2] {
        [0, 1].map(|a| (((p[a] - self.origin[a]) / self.cell[a]).floor().max(0.0) as usize).min(self.n[a] - 1))
    }

    /// The `k` points nearest `q` as `(squared distance, index)`, nearest first; of points equally far, the
    /// first ones.
    fn nearest(&self, q: [f64; 2], k: usize) -> Vec<(f64, usize)> {
        let [bi, bj] = self.bucket(q);
        let mut best: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
        let by_distance = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        for r in 0.. {
            let (i0, i1) = (bi.saturating_sub(r), (bi + r).min(self.n[0] - 1));
            let (j0, j1) = (bj.saturating_sub(r), (bj + r).min(self.n[1] - 1));
            for i in i0..=i1 {
                for j in j0..=j1 {
                    if i.abs_diff(bi).max(j.abs_diff(bj)) != r {
                        continue;
                    }
                    let b = i * self.n[1] + j;
                    for &p in &self.order[self.start[b]..self.start[b + 1]] {
                        let [x, y] = self.points[p];
                        let candidate = ((x - q[0]).powi(2) + (y - q[1]).powi(2), p);
                        if best.len() < k || by_distance(&candidate, &best[k - 1]).is_lt() {
                            let at = best.partition_point(|e| by_distance(e, &candidate).is_lt());
                            best.insert(at, candidate);
                            best.truncate(k);
                        }
                    }
                }
            }
            let covered = i0 == 0 && j0 == 0 && i1 == self.n[0] - 1 && j1 == self.n[1] - 1;
            if covered || (best.len() == k && self.beyond(q, [i0, i1, j0, j1]).powi(2) > best[k - 1].0) {
                return best;
            }
        }
        unreachable!("the rings reach every bucket")
    }

    /// The least distance from `q` to a bucket outside the buckets `i0..=i1` × `j0..=j1`.
    fn beyond(&self, q: [f64; 2], [i0, i1, j0, j1]: [usize; 4]) -> f64 {
        let edge = |a: usize, i: usize| self.origin[a] + i as f64 * self.cell[a];
        let mut least = f64::INFINITY;
        if i0 > 0 {
            least = least.min(q[0] - edge(0, i0));
        }
        if i1 + 1 < self.n[0] {
            least = least.min(edge(0, i1 + 1) - q[0]);
        }
        if j0 > 0 {
            least = least.min(q[1] - edge(1, j0));
        }
        if j1 + 1 < self.n[1] {
            least = least.min(edge(1, j1 + 1) - q[1]);
        }
        least.max(0.0)
    }
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
mod tests;
