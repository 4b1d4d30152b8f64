//! The integration tests, as one test binary: each module was once a test crate of its own, and linking
//! the static HDF5 build into each of them was most of the build time of the suite.
//!
//! `common` holds what the numerical tests share (the backends every test body runs on, measurements on
//! images); `cli_common` what the command-line tests share. The GPU tests (`gpu_*` and every test that runs
//! `for_each_backend`) run on the CUDA device too when `SEISIMAGE_GPU_TESTS=1`.

mod architecture;
mod cli_common;
mod cli_config;
mod cli_distributed;
mod cli_info_convert;
mod common;
mod convert_crs_text;
mod faults_bounds;
mod faults_nonfinite;
mod faults_output;
mod faults_security;
mod faults_signals;
mod geography;
mod geotiff_slices;
mod golden;
mod gpu_kernels;
mod gpu_parity;
mod hdf5_axis_order;
mod hdf5_interop;
mod hdf5_io;
mod headers_range;
mod imaging_attributes;
mod imaging_bands;
mod imaging_cancel;
mod imaging_correctness;
mod imaging_jobs;
mod job_folder;
mod job_manifest;
mod job_products;
mod mdio_cli;
mod mdio_crs;
mod mdio_interop;
mod mdio_products;
mod npy_io;
mod png_encoding;
mod python;
mod render_errors;
mod render_png;
mod render_report;
mod run_warnings;
mod scan_decisions;
mod segy_encoded;
mod segy_fixtures;
mod segy_history;
mod segy_interop;
mod segy_roundtrip;
mod segysak_interop;
mod su_input;
mod time_products;
mod velocity_cards;
mod velocity_forms;
mod velocity_plot;
mod velocity_product;
mod velocity_scan;
mod velocity_units;
mod wording;
