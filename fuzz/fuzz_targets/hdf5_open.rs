//! HDF5 files built from a structured description (see `seisimage_fuzz::hdf5_file`), opened as volumes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::hdf5_file::{build, FileSpec};
use seisimage_fuzz::{exercise, keep, scratch_path};

fuzz_target!(|spec: FileSpec| {
    let path = scratch_path("volume.h5");
    let _ = std::fs::remove_file(&path);
    let Some(dataset) = build(&spec, &path) else { return };
    keep(&path);
    let _ = exercise::hdf5(&path, &dataset);
});
