//! The velocity model the engines use: true interval velocities of the medium, in m/s, as a function of
//! depth in metres. Every form a job may give (tables and files in time or depth, RMS or average
//! velocities, other units, other grids) is converted to one of these before planning (see the other
//! modules of [`crate`]).
//!
//! The exploding-reflector halving (`ve = v / 2`) is the imaging code's business, not the model's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Result};
use seis_core::volume::{Domain, Geometry};

/// How a v(z) table is read between its nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    /// Straight lines between nodes (a smooth gradient model).
    #[default]
    Linear,
    /// Each node's velocity holds from its depth down to the next node (a layered model).
    Step,
}

/// A velocity that depends on depth only, given at nodes. Above the first node the first velocity holds,
/// below the last node the last.
#[derive(Clone, Debug, PartialEq)]
pub struct VelocityTable {
    depths: Vec<f64>,
    velocities: Vec<f64>,
    interpolation: Interpolation,
}

impl VelocityTable {
    pub fn new(depths: Vec<f64>, velocities: Vec<f64>, interpolation: Interpolation) -> Result<Self> {
        let (depths_key, velocities_key) = ("velocity.depths", "velocity.velocities");
        if depths.is_empty() || depths.len() != velocities.len() {
            let message = format!(
                "a velocity table needs as many depths as velocities, at least one ({} depths, {} velocities)",
                depths.len(),
                velocities.len()
            );
            return Err(Error::at_key(depths_key, message).or_key(velocities_key));
        }
        if let Some(w) = depths.windows(2).find(|w| !(w[0] < w[1] && w[1].is_finite())) {
            let message = format!("table depths must increase strictly ({} m is followed by {} m)", w[0], w[1]);
            return Err(Error::at_key(depths_key, message));
        }
        if let Some(z) = depths.iter().find(|z| !z.is_finite()) {
            return Err(Error::at_key(depths_key, format!("table depth {z} is not a number")));
        }
        if let Some(v) = velocities.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(Error::at_key(velocities_key, format!("table velocity {v} m/s is not a positive number")));
        }
        Ok(VelocityTable { depths, velocities, interpolation })
    }

    /// A table from nodes a conversion made and checked (increasing depths, positive velocities).
    pub(crate) fn from_nodes(depths: Vec<f64>, velocities: Vec<f64>, interpolation: Interpolation) -> Self {
        debug_assert!(!depths.is_empty() && depths.len() == velocities.len());
        VelocityTable { depths, velocities, interpolation }
    }

    pub fn depths(&self) -> &[f64] {
        &self.depths
    }

    pub fn velocities(&self) -> &[f64] {
        &self.velocities
    }

    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    pub fn at(&self, z: f64) -> f64 {
        let (d, v) = (&self.depths, &self.velocities);
        // index of the first node deeper than z
        let i = d.partition_point(|&node| node <= z);
        if i == 0 {
            return v[0];
        }
        if i == d.len() {
            return v[d.len() - 1];
        }
        match self.interpolation {
            Interpolation::Step => v[i - 1],
            Interpolation::Linear => {
                let f = (z - d[i - 1]) / (d[i] - d[i - 1]);
                v[i - 1] + f * (v[i] - v[i - 1])
            }
        }
    }

    pub fn range(&self) -> (f64, f64) {
        let lo = self.velocities.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = self.velocities.iter().cloned().fold(0.0, f64::max);
        (lo, hi)
    }
}

/// A 3-D velocity model on the input's lateral grid, sampled in depth on its own axis. Between depth
/// samples it is interpolated linearly; above and below the axis the first and last samples hold.
///
/// The values are kept depth slice after depth slice (`[depth][il][xl]`): the plan and every split-step
/// level read whole slices, which are then one contiguous run each. Kept trace after trace, a slice of a
/// 2048 × 2048-trace model was a scattered read per trace, and planning a 600-level job took 35 s on two
/// cores instead of 9 s.
///
/// The values are shared: a scaled copy ([`VelocityModel::scaled`], one per member of a velocity scan)
/// holds the same values and its own factor.
#[derive(Clone, PartialEq)]
pub struct VelocityGrid {
    geometry: Geometry,
    /// Shared with the grid's scaled copies (the members of a velocity scan).
    data: Arc<GridValues>,
    /// Every value is multiplied by this.
    scale: f64,
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

    fn depth_major_unchecked(geometry: Geometry, by_depth: Vec<f32>) -> Self {
        let data = GridValues { values: by_depth, digest: OnceLock::new(), summaries: Mutex::default() };
        VelocityGrid { geometry, data: Arc::new(data), scale: 1.0 }
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
            let pieces: Vec<[u8; 32]> = self
                .data
                .values
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

    /// The two depth samples around `z` and the weight of the deeper one.
    fn bracket(&self, z: f64) -> (usize, usize, f32) {
        let a = &self.geometry.samples;
        let f = ((z - a.origin) / a.step).clamp(0.0, (a.len - 1) as f64);
        let i = f.floor() as usize;
        (i, (i + 1).min(a.len - 1), (f - i as f64) as f32)
    }

    /// Depth slice `k`: every trace's value at depth sample `k`, in `[il][xl]` order.
    fn slice(&self, k: usize) -> &[f32] {
        let traces = self.geometry.n_traces();
        &self.data.values[k * traces..(k + 1) * traces]
    }

    /// Velocity at depth `z` of trace `t` (`[il][xl]` order).
    fn at(&self, t: usize, z: f64) -> f64 {
        let (i0, i1, w) = self.bracket(z);
        let (a, b) = (self.slice(i0)[t], self.slice(i1)[t]);
        self.scale * (a + w * (b - a)) as f64
    }

    /// Slowness `1 / v` at depth `z` of every trace, in `[il][xl]` order.
    pub fn slowness_slice(&self, z: f64, out: &mut [f32]) {
        let (i0, i1, w) = self.bracket(z);
        let scale = self.scale as f32;
        out.par_iter_mut()
            .zip(self.slice(i0).par_iter().zip(self.slice(i1)))
            .for_each(|(s, (&a, &b))| *s = 1.0 / (scale * (a + w * (b - a))));
    }

    /// The least and the mean of [`VelocityGrid::slowness_slice`] at depth `z`, in one pass over the two
    /// depth samples around `z` and without making the slice; kept, so that asking again is free.
    ///
    /// The same on any number of threads: the least is, and the f32 slownesses add up exactly in f64 in
    /// any order (their exponents span a few octaves, far below f64's 53 bits with 2^24 bits each).
    pub fn slowness_summary(&self, z: f64) -> SlownessSummary {
        let key = (z.to_bits(), self.scale.to_bits());
        let summaries = || self.data.summaries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(summary) = summaries().get(&key) {
            return *summary;
        }
        let (i0, i1, w) = self.bracket(z);
        let scale = self.scale as f32;
        const PIECE: usize = 1 << 14;
        let (least, sum) = self
            .slice(i0)
            .par_chunks(PIECE)
            .zip(self.slice(i1).par_chunks(PIECE))
            .map(|(a, b)| summarise_slowness(a, b, w, scale))
            .reduce(|| (f32::INFINITY, 0.0), |(l1, s1), (l2, s2)| (l1.min(l2), s1 + s2));
        let summary = SlownessSummary { least: least as f64, mean: sum / self.geometry.n_traces() as f64 };
        summaries().insert(key, summary);
        summary
    }

    fn laterally_constant(&self) -> bool {
        let traces = self.geometry.n_traces();
        self.data.values.par_chunks(traces).all(|slice| slice.iter().all(|a| (a - slice[0]).abs() <= 1e-6 * slice[0]))
    }

    fn range(&self) -> (f64, f64) {
        let lo = self.data.values.par_iter().cloned().reduce(|| f32::INFINITY, f32::min);
        let hi = self.data.values.par_iter().cloned().reduce(|| 0.0, f32::max);
        (self.scale * lo as f64, self.scale * hi as f64)
    }
}

/// The least and the sum of the slownesses `1 / (scale · (a + w · (b - a)))` of two depth samples `a`, `b`
/// of the same traces: eight side by side, so that the divisions, minima and additions vectorise instead
/// of waiting on one another.
fn summarise_slowness(a: &[f32], b: &[f32], w: f32, scale: f32) -> (f32, f64) {
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

/// A grid's values (`[depth][il][xl]`) and their digest once taken. A `Vec` rather than a slice in the
/// `Arc`, which would copy the values once more.
struct GridValues {
    values: Vec<f32>,
    digest: OnceLock<[u8; 32]>,
    /// [`VelocityGrid::slowness_summary`] of each depth and scale asked for: planning asks for every level
    /// several times (the record's reach, the reference velocities of levels and steps, for each member of
    /// a velocity scan), and each answer is a pass over a whole depth slice.
    summaries: Mutex<HashMap<(u64, u64), SlownessSummary>>,
}

/// The slowness of every trace at one depth, summarised: what planning needs of a 3-D model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlownessSummary {
    /// The least slowness (of the fastest trace), 1/(m/s).
    pub least: f64,
    /// The mean slowness over the traces, 1/(m/s).
    pub mean: f64,
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
            .field("values", &self.data.values.len())
            .field("scale", &self.scale)
            .finish_non_exhaustive()
    }
}

/// The medium the migration propagates through.
#[derive(Clone, Debug, PartialEq)]
pub enum VelocityModel {
    /// One velocity everywhere (m/s).
    Constant(f64),
    /// v(z).
    Table(VelocityTable),
    /// v(x, y, z) on the input's lateral grid.
    Grid(VelocityGrid),
}

impl VelocityModel {
    /// What tells this model from any other, for matching the processes of one job: the model's form and
    /// numbers, with a grid's values given by their digest ([`VelocityGrid::values_digest`]).
    pub fn identity(&self) -> String {
        match self {
            VelocityModel::Grid(g) => {
                format!("{g:?} sha256 {}", seis_io::output::hex(&g.values_digest()))
            }
            other => format!("{other:?}"),
        }
    }

    pub fn constant(v: f64) -> Result<Self> {
        if !(v.is_finite() && v > 0.0) {
            return Err(Error::at_key("velocity.velocity", format!("velocity {v} m/s is not a positive number")));
        }
        Ok(VelocityModel::Constant(v))
    }

    /// The same medium with every velocity multiplied by `factor` (a member of a velocity scan). A 3-D
    /// model shares its values with this one.
    pub fn scaled(&self, factor: f64) -> VelocityModel {
        match self {
            VelocityModel::Constant(v) => VelocityModel::Constant(v * factor),
            VelocityModel::Table(t) => VelocityModel::Table(VelocityTable {
                velocities: t.velocities.iter().map(|v| v * factor).collect(),
                ..t.clone()
            }),
            VelocityModel::Grid(g) => VelocityModel::Grid(VelocityGrid { scale: g.scale * factor, ..g.clone() }),
        }
    }

    /// Check that a 3-D model lies on the input's lateral grid (other models fit any grid).
    pub fn check_grid(&self, input: &Geometry) -> Result<()> {
        match self {
            VelocityModel::Grid(g) => check_lateral_grid(&g.geometry, input, "grid"),
            _ => Ok(()),
        }
    }

    /// The velocity when the model is the same everywhere (a table whose nodes all agree counts).
    pub fn constant_velocity(&self) -> Option<f64> {
        match self {
            VelocityModel::Constant(v) => Some(*v),
            VelocityModel::Table(t) => {
                let (lo, hi) = t.range();
                (lo == hi).then_some(lo)
            }
            VelocityModel::Grid(_) => None,
        }
    }

    /// Whether the velocity changes from trace to trace at some depth.
    pub fn varies_laterally(&self) -> bool {
        match self {
            VelocityModel::Grid(g) => !g.laterally_constant(),
            _ => false,
        }
    }

    /// The velocity that represents depth `z` across the survey: v(z) itself, or for a grid the velocity of
    /// the mean slowness over the traces at that depth.
    pub fn reference_velocity(&self, z: f64) -> f64 {
        match self {
            VelocityModel::Constant(v) => *v,
            VelocityModel::Table(t) => t.at(z),
            VelocityModel::Grid(g) => 1.0 / g.slowness_summary(z).mean,
        }
    }

    /// Velocity at depth `z` of trace `trace` of the lateral grid (`[il][xl]` order).
    pub fn trace_velocity(&self, trace: usize, z: f64) -> f64 {
        match self {
            VelocityModel::Grid(g) => g.at(trace, z),
            _ => self.reference_velocity(z),
        }
    }

    /// Slowness `1 / v` at depth `z` of every trace of the lateral grid `[n_iline, n_xline]`, in
    /// `[il][xl]` order.
    pub fn slowness_slice(&self, z: f64, out: &mut [f32]) {
        match self {
            VelocityModel::Grid(g) => g.slowness_slice(z, out),
            _ => out.fill((1.0 / self.reference_velocity(z)) as f32),
        }
    }

    /// Slowest and fastest velocity anywhere in the model.
    pub fn range(&self) -> (f64, f64) {
        match self {
            VelocityModel::Constant(v) => (*v, *v),
            VelocityModel::Table(t) => t.range(),
            VelocityModel::Grid(g) => g.range(),
        }
    }

    /// Values in memory (for the memory estimate).
    pub fn n_values(&self) -> usize {
        match self {
            VelocityModel::Grid(g) => g.data.values.len(),
            _ => 0,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            VelocityModel::Constant(v) => format!("constant {v} m/s"),
            VelocityModel::Table(t) => format!(
                "v(z) table of {} nodes ({:?} interpolation), {}..{} m/s",
                t.depths.len(),
                t.interpolation,
                t.range().0,
                t.range().1
            ),
            VelocityModel::Grid(g) => {
                let (lo, hi) = g.range();
                let [ni, nx, nz] = g.geometry.shape();
                format!("3-D grid {ni} × {nx} × {nz} (depth step {} m), {lo}..{hi} m/s", g.geometry.samples.step)
            }
        }
    }
}

fn check_lateral_grid(model: &Geometry, input: &Geometry, name: &str) -> Result<()> {
    if model.ilines == input.ilines && model.xlines == input.xlines {
        return Ok(());
    }
    let axes = |g: &Geometry| {
        format!(
            "inlines {}..={} step {}, crosslines {}..={} step {}",
            g.ilines.first,
            g.ilines.last(),
            g.ilines.step,
            g.xlines.first,
            g.xlines.last(),
            g.xlines.step
        )
    };
    Err(Error::Request(format!(
        "velocity model {name} is on a different lateral grid than the input: the model has {}, the input has {}",
        axes(model),
        axes(input)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolation_by_hand() {
        let d = vec![0.0, 100.0, 300.0];
        let v = vec![1500.0, 2000.0, 3000.0];
        let lin = VelocityTable::new(d.clone(), v.clone(), Interpolation::Linear).unwrap();
        assert_eq!(lin.at(-10.0), 1500.0);
        assert_eq!(lin.at(0.0), 1500.0);
        assert_eq!(lin.at(50.0), 1750.0);
        assert_eq!(lin.at(100.0), 2000.0);
        assert_eq!(lin.at(250.0), 2750.0);
        assert_eq!(lin.at(1000.0), 3000.0);
        let step = VelocityTable::new(d, v, Interpolation::Step).unwrap();
        assert_eq!(step.at(50.0), 1500.0);
        assert_eq!(step.at(99.999), 1500.0);
        assert_eq!(step.at(100.0), 2000.0);
        assert_eq!(step.at(299.0), 2000.0);
        assert_eq!(step.at(300.0), 3000.0);
        assert_eq!(step.at(5000.0), 3000.0);
    }

    #[test]
    fn table_errors() {
        assert!(VelocityTable::new(vec![0.0, 0.0], vec![1.0, 2.0], Interpolation::Linear).is_err());
        assert!(VelocityTable::new(vec![0.0], vec![1.0, 2.0], Interpolation::Linear).is_err());
        assert!(VelocityTable::new(vec![0.0], vec![-1.0], Interpolation::Linear).is_err());
        assert!(VelocityModel::constant(0.0).is_err());
        let flat = VelocityTable::new(vec![0.0, 10.0], vec![2000.0, 2000.0], Interpolation::Step).unwrap();
        assert_eq!(VelocityModel::Table(flat).constant_velocity(), Some(2000.0));
    }

    /// Values given trace after trace land where the depth slices read them, over several blocks of slices
    /// and a last block that is not full.
    #[test]
    fn a_grid_of_many_samples_reads_every_trace_at_every_depth() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let ns = 37;
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: ns, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(1, 1, 5), LineAxis::new(1, 1, 7), depth);
        let value = |t: usize, k: usize| 1500.0 + 10.0 * t as f32 + k as f32;
        let data: Vec<f32> = (0..35).flat_map(|t| (0..ns).map(move |k| value(t, k))).collect();
        let m = VelocityModel::Grid(VelocityGrid::new(g.clone(), data, "test").unwrap());
        let mut s = vec![0.0; 35];
        for k in [0, 15, 16, 17, 33, 36] {
            m.slowness_slice(k as f64 * 10.0, &mut s);
            for (t, &slowness) in s.iter().enumerate() {
                assert_eq!(m.trace_velocity(t, k as f64 * 10.0), value(t, k) as f64, "trace {t}, sample {k}");
                assert_eq!(slowness, 1.0 / value(t, k), "trace {t}, sample {k}");
            }
        }
        assert!(m.varies_laterally());
        let layered: Vec<f32> = (0..35).flat_map(|_| (0..ns).map(|k| value(0, k))).collect();
        assert!(!VelocityModel::Grid(VelocityGrid::new(g, layered, "test").unwrap()).varies_laterally());
    }

    #[test]
    fn a_computed_grid_equals_the_grid_read_trace_by_trace() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let (ni, nx, nz) = (3, 4, 5);
        let depth = SampleAxis { origin: 0.0, step: 25.0, len: nz, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(10, 1, ni), LineAxis::new(100, 2, nx), depth);
        let value = |t: usize, k: usize| 1500.0 + 100.0 * t as f32 + 7.0 * k as f32;
        let by_trace: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
        let by_depth: Vec<f32> = (0..nz).flat_map(|k| (0..ni * nx).map(move |t| value(t, k))).collect();
        let a = VelocityGrid::new(g.clone(), by_trace, "traces").unwrap();
        let b = VelocityGrid::from_fn(g.clone(), "computed", |t| move |k| value(t, k)).unwrap();
        assert!(a == b && a.values_digest() == b.values_digest());
        assert_eq!(a.data.values, by_depth);

        // depth 50 m, trace 5: inline 11, crossline 102
        let bad = |t| move |k| if (t, k) == (5, 2) { f32::NAN } else { value(t, k) };
        let e = VelocityGrid::from_fn(g.clone(), "computed", bad).unwrap_err().to_string();
        assert!(e.contains("computed") && e.contains("inline 11, crossline 102, depth 50 m"), "{e}");
        let e = VelocityGrid::new(g, vec![2000.0; 7], "short").unwrap_err().to_string();
        assert!(e.contains("7 values for a [3, 4, 5] grid"), "{e}");
    }

    /// Models wider than a tile of traces and deeper than a block of slices, with neither a multiple of the
    /// other, are laid out as a plain transpose of their traces.
    #[test]
    fn a_computed_grid_of_many_tiles_and_blocks_is_the_transpose_of_its_traces() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let (ni, nx, nz) = (7, 5003, 37);
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: nz, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
        let value = |t: usize, k: usize| 1500.0 + (t % 1009) as f32 + 0.5 * k as f32;
        let grid = VelocityGrid::from_fn(g, "computed", |t| move |k| value(t, k)).unwrap();
        let by_depth: Vec<f32> = (0..nz).flat_map(|k| (0..ni * nx).map(move |t| value(t, k))).collect();
        assert!(grid.data.values == by_depth);
    }

    /// What planning asks of every level, the least and the mean slowness of a depth, is that of the slice
    /// the engines use, bit for bit, on any number of threads and for scaled copies too; asked again, it is
    /// remembered per scale.
    #[test]
    fn a_slowness_summary_is_that_of_the_slice() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let (ni, nx, nz) = (123, 457, 4);
        let depth = SampleAxis { origin: 0.0, step: 100.0, len: nz, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
        let value = |t: usize, k: usize| 1500.0 + ((t * 7919 + k * 104729) % 100003) as f32 * 0.0137;
        let grid = VelocityGrid::from_fn(g, "test", |t| move |k| value(t, k)).unwrap();
        let mut slice = vec![0.0f32; ni * nx];
        for g in [grid.clone(), VelocityGrid { scale: 1.07, ..grid.clone() }] {
            for z in [0.0, 50.0, 137.5, 300.0] {
                g.slowness_slice(z, &mut slice);
                let least = slice.iter().fold(f32::INFINITY, |m, &s| m.min(s)) as f64;
                let mean = slice.iter().map(|&s| s as f64).sum::<f64>() / slice.len() as f64;
                for threads in [1, 3] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let fresh = VelocityGrid {
                        data: Arc::new(GridValues {
                            values: g.data.values.clone(),
                            digest: OnceLock::new(),
                            summaries: Mutex::default(),
                        }),
                        ..g.clone()
                    };
                    assert_eq!(pool.install(|| fresh.slowness_summary(z)), SlownessSummary { least, mean }, "z {z}");
                }
                assert_eq!(g.slowness_summary(z), SlownessSummary { least, mean }, "z {z}, scale {}", g.scale);
            }
        }
        assert_eq!(grid.data.summaries.lock().unwrap().len(), 8, "four depths at two scales");
    }

    /// Shards of one job compare their models by identity: any value, the scale or the grid changes it,
    /// and the form printed stays short whatever the size (it once listed every value, minutes for a
    /// model of billions).
    #[test]
    fn a_grid_is_identified_by_a_digest_of_its_values() {
        use seis_core::volume::{LineAxis, SampleAxis};
        use sha2::{Digest, Sha256};
        let (ni, nx, nz) = (40, 50, 600);
        let depth = SampleAxis { origin: 0.0, step: 10.0, len: nz, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
        let value = |t: usize, k: usize| 1500.0 + (t % 7) as f32 + 0.5 * k as f32;
        let data: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
        let grid = VelocityGrid::new(g.clone(), data.clone(), "test").unwrap();

        // One piece: the digest of the digest of the depth slices' bytes, slice after slice.
        let bytes: Vec<u8> = (0..nz).flat_map(|k| (0..ni * nx).flat_map(move |t| value(t, k).to_le_bytes())).collect();
        let expected: [u8; 32] = Sha256::digest(Sha256::digest(&bytes)).into();
        assert_eq!(grid.values_digest(), expected);

        let model = VelocityModel::Grid(grid);
        let same = VelocityModel::Grid(VelocityGrid::new(g.clone(), data.clone(), "again").unwrap());
        assert_eq!(model.identity(), same.identity());
        let mut changed = data.clone();
        changed[ni * nx * nz / 2] += 0.25;
        assert_ne!(model.identity(), VelocityModel::Grid(VelocityGrid::new(g, changed, "test").unwrap()).identity());
        assert_ne!(model.identity(), model.scaled(1.05).identity());
        // The members of a velocity scan are scaled copies: their values are digested once, not per member.
        let VelocityModel::Grid(member) = model.scaled(0.95) else { unreachable!() };
        assert_eq!(member.data.digest.get(), Some(&expected));
        let shifted = SampleAxis { origin: 5.0, step: 10.0, len: nz, domain: Domain::Depth };
        let moved = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), shifted);
        assert_ne!(model.identity(), VelocityModel::Grid(VelocityGrid::new(moved, data, "test").unwrap()).identity());

        // 1.2 million values, summarised.
        assert!(model.identity().len() < 2000, "{} characters", model.identity().len());
        assert!(format!("{model:?}").len() < 2000, "{} characters", format!("{model:?}").len());
    }

    /// The reference velocity of a 3-D grid enters the plan and so the fingerprint that the shards of one
    /// job compare: it must not depend on how many threads the machine has. (The f32 slownesses add up
    /// exactly in f64, in any order, as long as the sum is taken in f64.)
    #[test]
    fn a_grids_reference_velocity_is_the_same_on_any_number_of_threads() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let (ni, nx, nz) = (300, 301, 3);
        let depth = SampleAxis { origin: 0.0, step: 100.0, len: nz, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(1, 1, ni), LineAxis::new(1, 1, nx), depth);
        // Irregular values, so that the order of the additions shows in the last bits.
        let value = |t: usize, k: usize| 1500.0 + ((t * 7919 + k * 104729) % 100003) as f32 * 0.0137;
        let data: Vec<f32> = (0..ni * nx).flat_map(|t| (0..nz).map(move |k| value(t, k))).collect();
        let m = VelocityModel::Grid(VelocityGrid::new(g, data, "test").unwrap());
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| [0.0, 37.0, 150.0, 199.0].map(|z| m.reference_velocity(z).to_bits()))
        };
        let one = on(1);
        for threads in [2, 3, 5, 8] {
            assert_eq!(on(threads), one, "{threads} threads");
        }
        // And it is the mean slowness's inverse.
        let mean: f64 = (0..ni * nx).map(|t| 1.0 / value(t, 1) as f64).sum::<f64>() / (ni * nx) as f64;
        assert!((m.reference_velocity(100.0) - 1.0 / mean).abs() < 1e-6 * m.reference_velocity(100.0));
    }

    #[test]
    fn a_grid_interpolates_in_depth_and_scales_without_copying() {
        use seis_core::volume::{LineAxis, SampleAxis};
        let depth = SampleAxis { origin: 0.0, step: 100.0, len: 3, domain: Domain::Depth };
        let g = Geometry::regular(LineAxis::new(10, 1, 2), LineAxis::new(100, 2, 3), depth);
        let data: Vec<f32> = (0..6).flat_map(|t| [1000.0 + t as f32, 2000.0, 3000.0]).collect();
        let m = VelocityModel::Grid(VelocityGrid::new(g.clone(), data, "test").unwrap());
        assert!(m.varies_laterally());
        assert_eq!(m.range(), (1000.0, 3000.0));
        let mut s = vec![0.0; 6];
        m.slowness_slice(150.0, &mut s);
        assert!((s[0] - 1.0 / 2500.0).abs() < 1e-9);
        m.slowness_slice(-50.0, &mut s);
        assert!((s[5] - 1.0 / 1005.0).abs() < 1e-9);
        assert_eq!(m.trace_velocity(5, 50.0), 0.5 * (1005.0 + 2000.0));
        // reference velocity: the mean slowness at 0 m of 1000..1005 m/s
        let mean: f64 = (0..6).map(|t| 1.0 / (1000.0 + t as f64)).sum::<f64>() / 6.0;
        assert!((m.reference_velocity(0.0) - 1.0 / mean).abs() < 1e-3);

        let fast = m.scaled(1.1);
        let (lo, hi) = fast.range();
        assert!((lo - 1100.0).abs() < 1e-9 && (hi - 3300.0).abs() < 1e-9, "{lo} {hi}");
        assert!((fast.trace_velocity(5, 50.0) - 1.1 * 0.5 * (1005.0 + 2000.0)).abs() < 1e-3);
        let (VelocityModel::Grid(a), VelocityModel::Grid(b)) = (&m, &fast) else { unreachable!() };
        assert!(Arc::ptr_eq(&a.data, &b.data), "a scaled grid shares the values");
        assert_eq!(VelocityModel::Constant(2000.0).scaled(0.9), VelocityModel::Constant(1800.0));

        let time = SampleAxis { origin: 0.0, step: 4.0, len: 3, domain: Domain::Time };
        let in_time = Geometry::regular(LineAxis::new(10, 1, 2), LineAxis::new(100, 2, 3), time);
        assert!(VelocityGrid::new(in_time, vec![2000.0; 18], "t").unwrap_err().to_string().contains("depth model"));
        let mut zero: Vec<f32> = vec![2000.0; 18];
        zero[4] = 0.0; // trace 1 (inline 10, crossline 102), depth 100 m
        let e = VelocityGrid::new(g, zero, "test").unwrap_err().to_string();
        assert!(e.contains("crossline 102") && e.contains("depth 100 m"), "{e}");
    }
}
