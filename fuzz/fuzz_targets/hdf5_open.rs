//! HDF5 files built from a structured description (see `seisimage_fuzz::hdf5_file`), opened as volumes. A file
//! that asks the reader to leave it (values stored elsewhere, a virtual dataset, an external link where the
//! reader looks) or to load a filter plugin must be refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seisimage_fuzz::hdf5_file::{build, FileSpec};
use seisimage_fuzz::{exercise, keep, scratch_path};

fuzz_target!(|spec: FileSpec| {
    let path = scratch_path("volume.h5");
    let _ = std::fs::remove_file(&path);
    let Some(built) = build(&spec, &path) else { return };
    keep(&path);
    let opened = exercise::hdf5(&path, &built.dataset);
    assert!(opened.is_err() || !built.leaves_file, "a file that leaves itself was read: {spec:?}");
});
