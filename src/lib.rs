//! seisimage: FFT-based depth migration of 3-D post-stack seismic volumes on the GPU or the CPU, with
//! SEG-Y / HDF5 input and interpretable outputs.
//!
//! This crate is the application: the job file ([`job`]), the planning of a job's migrations and products
//! ([`scan`], [`products`]), running it ([`run`]) in one process or several ([`distributed`]), and the
//! benchmark and synthetic data behind the `bench` and `synth` commands. The layers below are crates of
//! their own (docs/architecture.md), re-exported here under the names the application uses: [`io`] reads a
//! volume into the [`volume`] model; [`window`] tapers and plans the padding; [`imaging`] migrates on the
//! CPU (and [`gpu`] on a CUDA device) only what was asked; [`render`] and [`io`] write the products.

pub mod bench;
pub mod distributed;
pub mod embed;
pub mod history;
pub mod info;
pub mod job;
pub mod products;
pub mod run;
pub mod scan;
pub mod scan_focus;
pub mod scan_warnings;
pub mod synth;

pub use seis_core::{alloc, cancel, choice, context, error, number, progress, simd, stats, threads, volume};
pub use seis_core::{Error, Result};
pub use seis_cuda as gpu;
pub use seis_imaging as imaging;
pub use seis_imaging::{attributes, time_domain, window};
pub use seis_io as io;
pub use seis_render as render;
pub use seis_velocity as velocity;
