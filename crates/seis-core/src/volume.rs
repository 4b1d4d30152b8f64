//! The in-memory model of a post-stack volume: its axes, its survey coordinates, which traces are live, and
//! selections of it by header value.
//!
//! Memory order is always `[iline][xline][sample]` with samples contiguous, and both line axes ascending,
//! whatever the order of the traces in the file: readers reorder at load.

//!
//! Each file under `volume/` uses only those listed before it: `axes`, `geometry` (the shape of a volume
//! and boxes of it), `reader` (the interface to volume data), `memory` (a volume in memory) and `stats`.

mod axes;
mod geometry;
mod memory;
mod reader;
mod stats;
#[cfg(test)]
mod tests;

pub use axes::{CoordTransform, Domain, LineAxis, SampleAxis};
pub use geometry::{Geometry, IndexBox, ValueBox};
pub use memory::Volume;
pub use reader::{check_box_buffer, digest_sampled_traces, TraceHook, VolumeReader, WriteMode};
pub use stats::AmplitudeStats;
