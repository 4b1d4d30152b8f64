//! A model that varies laterally: interval velocity on every trace of the seismic grid, depth-major, with
//! what planning needs of it summarised once per depth level and scale.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry};

use super::mixed::GridMix;

/// A 3-D velocity model on the input's lateral grid, sampled in depth on its own axis. Between depth
/// samples it is interpolated linearly; above and below the axis the first and last samples hold.
///
/// The values are kept depth slice after depth slice (`[depth][il][xl]`), or, for functions on a full grid
/// of locations, as the functions and their taps, mixed where a slice is asked for (`GridMix`): the plan
/// and every split-step level read whole slices, which are then one contiguous run each. Kept trace after trace, a slice of a
/// 2048 × 2048-trace model was a scattered read per trace, and planning a 600-level job took 35 s on two
/// cores instead of 9 s.
///
/// The values are shared: a scaled copy ([`super::VelocityModel::scaled`], one per member of a velocity scan)
/// holds the same values and its own factor.
#[derive(Clone, PartialEq)]
pub struct VelocityGrid {
    pub(super) geometry: Geometry,
    /// Shared with the grid's scaled copies (the members of a velocity scan).
    pub(super) data: Arc<GridValues>,
    /// Every value is multiplied by this.
    pub(super) scale: f64,
}

impl VelocityGrid {
    /// A grid from values in `[il][xl][depth]` order (trace after trace, as files hold them). `name` says
    /// where they came from, for errors.
    pub fn new(geometry: Geometry, data: Vec<f32>, name: &str) -> Result<Self> {
        check_shape(&geometry, data.len(), name)?;
        let ns = geometry.samples.len;
        let bad = data
            .par_chunks(ns)
            .enumerate()
            .find_map_first(|(t, tr)| tr.iter().position(|v| !usable(*v)).map(|s| (t, s, tr[s])));
        if let Some(bad) = bad {
            return Err(not_usable(&geometry, name, bad));
        }
        let by_depth = depth_major(geometry.n_traces(), ns, name, |t| {
            let trace = &data[t * ns..(t + 1) * ns];
            move |k| trace[k]
        })?;
        drop(data);
        Ok(Self::depth_major_unchecked(geometry, by_depth))
    }

    /// A grid whose velocity at trace `t` (`[il][xl]` order) and depth sample `k` is `trace(t)(k)`: for
    /// models computed here, made straight into the order the grid keeps, without a copy to transpose.
    pub fn from_fn<T: Fn(usize) -> f32>(
        geometry: Geometry,
        name: &str,
        trace: impl Fn(usize) -> T + Sync,
    ) -> Result<Self> {
        check_shape(&geometry, geometry.n_values(), name)?; // only its domain can be wrong
        let by_depth = depth_major(geometry.n_traces(), geometry.samples.len, name, trace)?;
        let bad = by_depth
            .par_chunks(geometry.n_traces())
            .enumerate()
            .find_map_first(|(s, slice)| slice.iter().position(|v| !usable(*v)).map(|t| (t, s, slice[t])));
        if let Some(bad) = bad {
            return Err(not_usable(&geometry, name, bad));
        }
        Ok(Self::depth_major_unchecked(geometry, by_depth))
    }

    /// A grid of functions on a full grid of locations, mixed onto `geometry`'s traces where asked for; its
    /// depth axis is `geometry`'s samples, on which the functions were sampled.
    pub fn mixed(geometry: Geometry, mix: GridMix, name: &str) -> Result<Self> {
        check_shape(&geometry, geometry.n_values(), name)?;
        if mix.n_levels() != geometry.samples.len {
            return Err(Error::Internal(format!(
                "{name}: functions of {} levels on a {:?} grid",
                mix.n_levels(),
                geometry.shape()
            )));
        }
        if let Some((f, k, v)) = mix.first_unusable() {
            return Err(Error::Request(format!(
                "velocity model {name}: velocity {v} m/s of function {} at depth {} m is not a positive number",
                f + 1,
                geometry.samples.value(k)
            )));
        }
        Ok(Self::with_values(geometry, Values::Mixed(mix)))
    }

    pub(super) fn depth_major_unchecked(geometry: Geometry, by_depth: Vec<f32>) -> Self {
        Self::with_values(geometry, Values::Stored(by_depth))
    }

    fn with_values(geometry: Geometry, values: Values) -> Self {
        let data = GridValues { values, digest: OnceLock::new(), summaries: Mutex::default(), range: OnceLock::new() };
        VelocityGrid { geometry, data: Arc::new(data), scale: 1.0 }
    }

    /// The values, depth slice after depth slice, of a grid that stores them.
    #[cfg(test)]
    pub(super) fn stored(&self) -> Option<&[f32]> {
        match &self.data.values {
            Values::Stored(v) => Some(v),
            Values::Mixed(_) => None,
        }
    }

    /// Values held in memory.
    pub(super) fn held_values(&self) -> usize {
        match &self.data.values {
            Values::Stored(v) => v.len(),
            Values::Mixed(m) => m.held_values(),
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// SHA-256 of the values as stored (f32, little-endian, depth slice after depth slice), taken in pieces
    /// of `DIGEST_PIECE` values side by side and then over the pieces' digests in order, so that a model of
    /// gigabytes is identified in a fraction of a second. Taken once for the grid and its scaled copies.
    pub fn values_digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        *self.data.digest.get_or_init(|| {
            let values = match &self.data.values {
                Values::Stored(values) => values,
                Values::Mixed(mix) => return mixed_digest(mix),
            };
            let pieces: Vec<[u8; 32]> = values
                .par_chunks(DIGEST_PIECE)
                .map(|piece| {
                    let bytes: Vec<u8> = piece.iter().flat_map(|v| v.to_le_bytes()).collect();
                    Sha256::digest(&bytes).into()
                })
                .collect();
            let mut all = Sha256::new();
            for piece in &pieces {
                all.update(piece);
            }
            all.finalize().into()
        })
    }

    /// The two depth samples around `z` and the weight of the deeper one; on a sample, that sample twice
    /// (a mixed grid then mixes one row, not two).
    pub(super) fn bracket(&self, z: f64) -> (usize, usize, f32) {
        let a = &self.geometry.samples;
        let f = ((z - a.origin) / a.step).clamp(0.0, (a.len - 1) as f64);
        let i = f.floor() as usize;
        let w = (f - i as f64) as f32;
        (i, if w == 0.0 { i } else { (i + 1).min(a.len - 1) }, w)
    }

    /// Depth sample `k` of seismic inline `i`: every crossline's value.
    pub(super) fn row(&self, k: usize, i: usize) -> Cow<'_, [f32]> {
        match &self.data.values {
            Values::Stored(values) => {
                let (traces, nx) = (self.geometry.n_traces(), self.geometry.xlines.len);
                Cow::Borrowed(&values[k * traces + i * nx..k * traces + (i + 1) * nx])
            }
            Values::Mixed(mix) => mix.row(k, i),
        }
    }

    /// Depth sample `k` of trace `t` (`[il][xl]` order).
    pub(super) fn value(&self, k: usize, t: usize) -> f32 {
        match &self.data.values {
            Values::Stored(values) => values[k * self.geometry.n_traces() + t],
            Values::Mixed(mix) => mix.value(k, t / self.geometry.xlines.len, t % self.geometry.xlines.len),
        }
    }

    /// Velocity at depth `z` of trace `t` (`[il][xl]` order).
    pub(super) fn at(&self, t: usize, z: f64) -> f64 {
        let (i0, i1, w) = self.bracket(z);
        let (a, b) = (self.value(i0, t), self.value(i1, t));
        self.scale * (a + w * (b - a)) as f64
    }

    /// Slowness `1 / v` at depth `z` of every trace, in `[il][xl]` order.
    pub fn slowness_slice(&self, z: f64, out: &mut [f32]) {
        let (i0, i1, w) = self.bracket(z);
        let scale = self.scale as f32;
        let nx = self.geometry.xlines.len.max(1);
        out.par_chunks_mut(nx).enumerate().for_each_init(MixedRows::default, |rows, (i, out)| {
            self.with_rows(rows, [i0, i1], i, |a, b| {
                for (s, (&a, &b)) in out.iter_mut().zip(a.iter().zip(b)) {
                    *s = 1.0 / (scale * (a + w * (b - a)));
                }
            })
        });
    }

    /// `f` of depth samples `k0` and `k1` of seismic inline `i`: rows of a stored grid as they are, rows
    /// of a mixed grid mixed into `rows` unless they are there from the bracket before.
    pub(super) fn with_rows<R>(
        &self,
        rows: &mut MixedRows,
        [k0, k1]: [usize; 2],
        i: usize,
        f: impl FnOnce(&[f32], &[f32]) -> R,
    ) -> R {
        match &self.data.values {
            Values::Stored(_) => f(&self.row(k0, i), &self.row(k1, i)),
            Values::Mixed(mix) => {
                let nx = self.geometry.xlines.len;
                let first = rows.slot(k0, i, None, |out| {
                    out.resize(nx, 0.0);
                    mix.fill_row(k0, i, out)
                });
                let second = rows.slot(k1, i, Some(first), |out| {
                    out.resize(nx, 0.0);
                    mix.fill_row(k1, i, out)
                });
                f(&rows.rows[first], &rows.rows[second])
            }
        }
    }

    /// The least and the mean of [`VelocityGrid::slowness_slice`] at depth `z`, in one pass over the two
    /// depth samples around `z` and without making the slice; kept, so that asking again is free (a plan's
    /// depths are found together by [`VelocityGrid::summarise_depths`]).
    ///
    /// The same on any number of threads: the least is, and the f32 slownesses add up exactly in f64 in
    /// any order (their exponents span a few octaves, far below f64's 53 bits with 2^24 bits each).
    pub fn slowness_summary(&self, z: f64) -> SlownessSummary {
        let key = self.summary_key(z);
        let summaries = || self.data.summaries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(summary) = summaries().get(&key) {
            return *summary;
        }
        self.summarise_depths(&[z]);
        *summaries().get(&key).expect("a depth just summarised")
    }

    pub(super) fn laterally_constant(&self) -> bool {
        let [ni, _, levels] = self.geometry.shape();
        (0..levels).into_par_iter().all(|k| {
            let first = self.value(k, 0);
            (0..ni).all(|i| self.row(k, i).iter().all(|a| (a - first).abs() <= 1e-6 * first))
        })
    }

    /// Slowest and fastest velocity of the grid, found once for it and its scaled copies.
    pub(super) fn range(&self) -> (f64, f64) {
        let [ni, _, levels] = self.geometry.shape();
        let (lo, hi) = *self.data.range.get_or_init(|| {
            let rows = (0..levels).into_par_iter().flat_map(|k| (0..ni).into_par_iter().map(move |i| (k, i)));
            rows.map(|(k, i)| match &self.data.values {
                Values::Mixed(mix) => mix.row_range(k, i),
                Values::Stored(_) => {
                    self.row(k, i).iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)))
                }
            })
            .reduce(|| (f32::INFINITY, 0.0), |a, b| (a.0.min(b.0), a.1.max(b.1)))
        });
        (self.scale * lo as f64, self.scale * hi as f64)
    }
}

/// The least and the sum of the slownesses `1 / (scale · (a + w · (b - a)))` of two depth samples `a`, `b`
/// of the same traces: eight side by side, so that the divisions, minima and additions vectorise instead
/// of waiting on one another.
pub(super) fn summarise_slowness(a: &[f32], b: &[f32], w: f32, scale: f32) -> (f32, f64) {
    const LANES: usize = 8;
    let slowness = |a: f32, b: f32| 1.0 / (scale * (a + w * (b - a)));
    let (mut least, mut sum) = ([f32::INFINITY; LANES], [0.0f64; LANES]);
    let (a8, b8) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (a_rest, b_rest) = (a8.remainder(), b8.remainder());
    for (a, b) in a8.zip(b8) {
        for k in 0..LANES {
            let s = slowness(a[k], b[k]);
            least[k] = least[k].min(s);
            sum[k] += s as f64;
        }
    }
    for (&a, &b) in a_rest.iter().zip(b_rest) {
        let s = slowness(a, b);
        least[0] = least[0].min(s);
        sum[0] += s as f64;
    }
    (least.into_iter().fold(f32::INFINITY, f32::min), sum.into_iter().sum())
}

/// A grid of `geometry` must be in depth and hold `len` values.
fn check_shape(geometry: &Geometry, len: usize, name: &str) -> Result<()> {
    if geometry.samples.domain != Domain::Depth {
        return Err(Error::Request(format!(
            "velocity model {name}: its trace axis is {} in {}; a depth model (m) is needed",
            geometry.samples.domain.axis_name(),
            geometry.samples.domain.unit()
        )));
    }
    if len != geometry.n_values() {
        return Err(Error::Request(format!("velocity model {name}: {len} values for a {:?} grid", geometry.shape())));
    }
    Ok(())
}

fn usable(v: f32) -> bool {
    v.is_finite() && v > 0.0
}

/// The error for velocity `v` of trace `t` (`[il][xl]` order) at depth sample `s`.
fn not_usable(geometry: &Geometry, name: &str, (t, s, v): (usize, usize, f32)) -> Error {
    let nx = geometry.xlines.len;
    Error::Request(format!(
        "velocity model {name}: velocity {v} m/s at inline {}, crossline {}, depth {} m is not a positive number \
         (missing traces must be filled in the model)",
        geometry.ilines.value(t / nx),
        geometry.xlines.value(t % nx),
        geometry.samples.value(s)
    ))
}

/// Sample `k` of trace `t`, `trace(t)(k)`, of `traces` traces of `ns` samples each, laid out
/// `[sample][trace]`.
fn depth_major<T: Fn(usize) -> f32>(
    traces: usize,
    ns: usize,
    name: &str,
    trace: impl Fn(usize) -> T + Sync,
) -> Result<Vec<f32>> {
    // Sixteen slices at a time, trace by trace: sixteen samples of a trace are one cache line of values
    // kept trace after trace, and what `trace` looks up (a mix of functions, a table) is found once for
    // all sixteen; each block writes its sixteen slices front to back. Computing a model from 1024 x 1024
    // functions one whole slice at a time instead took 1.5 x as long in `seisimage validate`.
    //
    // A block is cut again into tiles of traces, so that a model of a few hundred levels, a few dozen
    // blocks, keeps every core of a large host busy.
    const SLICES: usize = 16;
    const TILE: usize = 1 << 14;
    let mut out: Vec<f32> = seis_core::alloc::try_vec(traces * ns, std::path::Path::new(name), "the velocity model")?;
    if traces == 0 {
        return Ok(out);
    }
    // A model of millions of traces takes seconds to compute: a signal stops it between blocks (the root's
    // token, as the readers poll it: the model serves whichever run reads it).
    let cancel = seis_core::cancel::CancelToken::process();
    out.par_chunks_mut(SLICES * traces).enumerate().try_for_each(|(b, block)| {
        cancel.check()?;
        let first = b * SLICES;
        // tiles[i][j]: the traces of tile i in slice `first + j`.
        let mut tiles: Vec<Vec<&mut [f32]>> = (0..traces.div_ceil(TILE)).map(|_| Vec::with_capacity(SLICES)).collect();
        for slice in block.chunks_mut(traces) {
            for (tile, piece) in tiles.iter_mut().zip(slice.chunks_mut(TILE)) {
                tile.push(piece);
            }
        }
        tiles.into_par_iter().enumerate().for_each(|(i, mut pieces)| {
            for t in 0..pieces[0].len() {
                let sample = trace(i * TILE + t);
                for (j, piece) in pieces.iter_mut().enumerate() {
                    piece[t] = sample(first + j);
                }
            }
        });
        Ok(())
    })?;
    Ok(out)
}

/// A grid's values and their digest once taken.
pub(super) struct GridValues {
    pub(super) values: Values,
    pub(super) digest: OnceLock<[u8; 32]>,
    /// [`VelocityGrid::range`] before scaling, once found.
    range: OnceLock<(f32, f32)>,
    /// [`VelocityGrid::slowness_summary`] of each depth and scale asked for, by the depth samples around
    /// the depth and their weights: planning asks for every level several times (the record's reach, the
    /// reference velocities of levels and steps, for each member of a velocity scan), and each answer is a
    /// pass over a whole depth slice.
    pub(super) summaries: Mutex<HashMap<SummaryKey, SlownessSummary>>,
}

/// A summary's key: the two depth samples around the depth, the deeper one's weight (its bits) and the
/// grid's scale (its bits). Depths with the same key have the same slownesses.
pub(super) type SummaryKey = (usize, usize, u32, u64);

/// The two rows of a mixed grid last mixed by a worker, each with its depth sample and inline.
#[derive(Default)]
pub(super) struct MixedRows {
    held: [Option<(usize, usize)>; 2],
    rows: [Vec<f32>; 2],
    /// The slot to fill next: the one filled less recently.
    next: usize,
}

impl MixedRows {
    /// The slot holding depth sample `k` of inline `i`, mixed by `fill` into a slot other than `keep` when
    /// it is not there.
    fn slot(&mut self, k: usize, i: usize, keep: Option<usize>, fill: impl FnOnce(&mut Vec<f32>)) -> usize {
        if let Some(s) = self.held.iter().position(|h| *h == Some((k, i))) {
            return s;
        }
        let s = if keep == Some(self.next) { 1 - self.next } else { self.next };
        fill(&mut self.rows[s]);
        self.held[s] = Some((k, i));
        self.next = 1 - s;
        s
    }
}

/// The slowness of every trace at one depth, summarised: what planning needs of a 3-D model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlownessSummary {
    /// The least slowness (of the fastest trace), 1/(m/s).
    pub least: f64,
    /// The mean slowness over the traces, 1/(m/s).
    pub mean: f64,
}

/// How a grid holds its values.
#[derive(Clone, PartialEq)]
pub(super) enum Values {
    /// Every value, depth slice after depth slice (`[depth][il][xl]`). A `Vec` rather than a slice in the
    /// `Arc`, which would copy the values once more.
    Stored(Vec<f32>),
    /// Functions and their taps, mixed where asked for.
    Mixed(GridMix),
}

/// SHA-256 of a mixed grid's functions and taps: what its values are made of.
fn mixed_digest(mix: &GridMix) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut all = Sha256::new();
    for v in mix.sampled() {
        all.update(v.to_le_bytes());
    }
    let taps = mix.taps();
    for t in taps.rows.iter().chain(&taps.cols) {
        all.update((t.lo as u64).to_le_bytes());
        all.update((t.hi as u64).to_le_bytes());
        all.update(t.w.to_le_bytes());
    }
    for l in taps.ils.iter().chain(&taps.xls) {
        all.update(l.to_le_bytes());
    }
    all.finalize().into()
}

/// Values alike are alike, whether or not their digest has been taken.
impl PartialEq for GridValues {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

/// Values per piece of [`VelocityGrid::values_digest`]: 16 MiB.
const DIGEST_PIECE: usize = 1 << 22;

/// The values are summarised: a model can hold billions of them.
impl std::fmt::Debug for VelocityGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VelocityGrid")
            .field("geometry", &self.geometry)
            .field("values", &self.held_values())
            .field("scale", &self.scale)
            .finish_non_exhaustive()
    }
}
