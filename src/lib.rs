//! seisimage: FFT-based depth migration of 3-D post-stack seismic volumes on the GPU or the CPU, with
//! SEG-Y / HDF5 input and interpretable outputs.
//!
//! The data flow, module by module: [`io`] reads a volume into the [`volume`] model; [`window`] tapers and
//! plans the padding; [`imaging`] migrates on the CPU (and [`gpu`] on a CUDA device) only what was asked;
//! [`render`] and [`io`] write the products. [`job`] turns a TOML job file into a validated job.
//! [`distributed`] splits one job between several processes (GPU ranks, or shards summed afterwards).

pub mod attributes;
pub mod bench;
pub mod cancel;
pub mod context;
pub mod distributed;
pub mod error;
pub mod gpu;
pub mod history;
pub mod imaging;
pub mod io;
pub mod job;
pub mod products;
pub mod progress;
pub mod render;
pub mod run;
pub mod scan;
pub mod simd;
pub mod stats;
pub mod synth;
pub mod threads;
pub mod time_domain;
pub mod velocity;
pub mod volume;
pub mod window;

pub use error::{Error, Result};
