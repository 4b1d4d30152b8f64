//! The imaging plan: every size and number a migration needs, decided once, before any data is read.
//!
//! The plan fixes the padded grid, the tapers, the frequency band, the image depth axis, which depth levels
//! are imaged and how deep the depth loop must go, the velocity of every depth step, and how the levels are
//! grouped into blocks that bound the memory. Engines (CPU now, GPU later) follow it to the letter, so both
//! compute the same thing on the same layout.
//!
//! The plan's types, and what the engines read from a plan as they follow it, are in `planned.rs`,
//! below the methods, whose rules decide part of a plan and whose kernels follow it. The files under
//! `plan/` hold, each using only the types and the files listed before it: `depth` (the image depth axis
//! and how deep the record reaches), `build` (deciding a plan from a job), `grid` (the share of the
//! frequencies a plan migrates), `memory` (what following it costs) and `describe` (the plan in words).

mod build;
mod depth;
mod describe;
mod grid;
mod memory;
#[cfg(test)]
mod tests;

pub use crate::planned::{Band, Level, Plan, Segment, StoltGrid};
pub use build::INGEST_CHUNK_BYTES;
pub use depth::{image_geometry, CHECK_THE_VELOCITY, DEPTH_FROM_VELOCITY, MAX_LEVELS};
