//! The velocity model the engines use: true interval velocities of the medium, in m/s, as a function of
//! depth in metres. Every form a job may give (tables and files in time or depth, RMS or average
//! velocities, other units, other grids) is converted to one of these before planning (see the other
//! modules of [`crate`]).
//!
//! The exploding-reflector halving (`ve = v / 2`) is the imaging code's business, not the model's.

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Result};
use seis_core::number::number;
use seis_core::volume::Geometry;

mod grid;
mod mixed;
mod summary;
pub use grid::{SlownessSummary, VelocityGrid};
pub use mixed::GridMix;

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

    /// Find at once what [`VelocityModel::reference_velocity`] and the least slowness of each of `depths`
    /// take of a 3-D model, in one pass over it (see [`VelocityGrid::summarise_depths`]); asking for them
    /// then is free. Other models take nothing.
    pub fn summarise_depths(&self, depths: &[f64]) {
        if let VelocityModel::Grid(g) = self {
            g.summarise_depths(depths);
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
            VelocityModel::Grid(g) => g.held_values(),
            _ => 0,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            VelocityModel::Constant(v) => format!("constant {} m/s", number(*v)),
            VelocityModel::Table(t) => format!(
                "v(z) table of {} nodes ({:?} interpolation), {}..{} m/s",
                t.depths.len(),
                t.interpolation,
                number(t.range().0),
                number(t.range().1)
            ),
            VelocityModel::Grid(g) => {
                let (lo, hi) = g.range();
                let [ni, nx, nz] = g.geometry.shape();
                format!(
                    "3-D grid {ni} × {nx} × {nz} (depth step {} m), {}..{} m/s",
                    number(g.geometry.samples.step),
                    number(lo),
                    number(hi)
                )
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
mod tests;
