//! Any bytes as an NPY file: read, and what reads written and read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::{exercise, scratch_file, scratch_path};

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("input.npy", data);
    let _ = exercise::npy(&path, &scratch_path("written.npy"));
});
