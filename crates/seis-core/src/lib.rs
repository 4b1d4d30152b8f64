//! What every layer of seisimage shares: the volume model ([`volume`]), typed errors that name the file
//! and place ([`error`]), cancellation ([`cancel`]), progress reporting ([`progress`]), the statistics a
//! run records ([`stats`]) and the context that carries them through a run ([`context`]).
//!
//! This crate reads no files and links no I/O or GPU library: it is the ground floor of the workspace.

pub mod alloc;
pub mod cancel;
pub mod choice;
pub mod context;
pub mod error;
pub mod host_pool;
pub mod number;
pub mod progress;
pub mod simd;
pub mod stats;
pub mod threads;
pub mod volume;

pub use error::{Error, Result};
