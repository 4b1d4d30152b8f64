//! The imaging plan: every size and number a migration needs, decided once, before any data is read.
//!
//! The plan fixes the padded grid, the tapers, the frequency band, the image depth axis, which depth levels
//! are imaged and how deep the depth loop must go, the velocity of every depth step, and how the levels are
//! grouped into blocks that bound the memory. Engines (CPU now, GPU later) follow it to the letter, so both
//! compute the same thing on the same layout.
//!
//! The plan's types are here; the files under `plan/` hold, each using only the types and the files listed
//! before it: `depth` (the image depth axis and how deep the record reaches), `build` (deciding a plan
//! from a job), `grid` (what the engines ask of a plan as they follow it), `memory` (what following it
//! costs) and `describe` (the plan in words).

use std::ops::Range;

use super::bands::Share;
use crate::method::MethodPlan;
use crate::window::{NonFinite, WindowPlan};
use seis_core::volume::{Geometry, SampleAxis};

mod build;
mod depth;
mod describe;
mod grid;
mod memory;
#[cfg(test)]
mod tests;

pub use crate::method::StoltGrid;
pub use build::INGEST_CHUNK_BYTES;
pub use depth::{image_geometry, CHECK_THE_VELOCITY, DEPTH_FROM_VELOCITY, MAX_LEVELS};

/// The frequency bins kept: `first .. first + len` of the padded time FFT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub first: usize,
    pub len: usize,
}

/// A depth level that is imaged, and the velocity at its depth (for the dip limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    pub index: usize,
    pub velocity: f64,
}

/// A stretch of depth steps of one velocity, continued as one phase shift. When `slot` is set, the level at
/// the bottom of the stretch is imaged into that slot of the block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub velocity: f64,
    pub thickness: f64,
    pub slot: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    /// The method, and what was planned for it.
    pub method: MethodPlan,
    /// The input grid (time axis in ms).
    pub input: Geometry,
    /// Sample interval and time of the first sample (s).
    pub dt: f64,
    pub t0: f64,
    /// Distance between inlines and between crosslines (m).
    pub bin: [f64; 2],
    /// Padded `[iline, xline, time]` lengths of the transforms.
    pub padded: [usize; 3],
    pub window: WindowPlan,
    pub band: Band,
    /// The share of the band's frequencies this process migrates (indices into the band): all of them,
    /// unless the job is split between processes ([`Plan::restrict_to`]).
    pub frequencies: Range<usize>,
    /// Which share that is.
    pub share: Share,
    /// The image depth axis (m), starting at 0.
    pub depth: SampleAxis,
    /// The imaged levels, ascending. The depth loop stops at the last one.
    pub levels: Vec<Level>,
    /// Velocity (m/s) of each depth step `j → j + 1`, sampled at mid-step; for a 3-D model the reference
    /// velocity (mean slowness) of the step.
    pub step_velocity: Vec<f64>,
    /// Ranges of `levels` imaged together.
    pub blocks: Vec<Range<usize>>,
    /// Dip limit (radians).
    pub dip_limit: Option<f64>,
    /// Whether the velocity changes laterally (split-step then applies its thin lens).
    pub lateral_velocity: bool,
    /// Inlines read, windowed and transformed together.
    pub ingest_inlines: usize,
    /// What the ingest does with NaN and infinite input samples (an input property: `Zero` unless the
    /// caller sets it).
    pub nonfinite: NonFinite,
    /// The deepest depth (m) the record can image, when it lies above the image's last level: where the
    /// vertical two-way time from the surface reaches the last input sample, through the fastest velocity
    /// at each depth (on a 3-D model the fastest trace, so that no trace reaches deeper). Below it an image
    /// holds only what the transforms wrap around, so the products are zero there.
    pub reach: Option<f64>,
    /// What the plan changed or doubts in the job, each a sentence led by the key it concerns: the run logs
    /// them as warnings and records them in the manifest.
    pub warnings: Vec<String>,
    image: Geometry,
    request_values: usize,
    velocity_values: usize,
}
