//! Support for the fuzz targets in `fuzz_targets/`: what each input is put through ([`exercise`], shared with
//! the regression tests of the main crate), a scratch file per process, and the structured HDF5 files of the
//! `hdf5_open` target ([`hdf5_file`]).

pub mod exercise;
pub mod hdf5_file;

use std::path::PathBuf;

/// The path of this process's scratch file `name`. libFuzzer runs the inputs of one process one after
/// another, so one file per process and name, overwritten by each input, is enough. Its folder is
/// `SEISIMAGE_FUZZ_SCRATCH` when set (a RAM disk spares the disk), else the system's temporary folder.
pub fn scratch_path(name: &str) -> PathBuf {
    let dir = std::env::var_os("SEISIMAGE_FUZZ_SCRATCH").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    dir.join(format!("seisimage-fuzz-{}-{name}", std::process::id()))
}

/// Write `bytes` to the scratch file `name` and return its path.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch_path(name);
    std::fs::write(&path, bytes).expect("the scratch file can be written");
    path
}

/// Keep a copy of the file an input produced when `SEISIMAGE_FUZZ_KEEP` names a folder: how an input of a
/// structured target (an HDF5 file built from the fuzzer's bytes) becomes a file for the regression tests.
pub fn keep(path: &std::path::Path) {
    if let Some(dir) = std::env::var_os("SEISIMAGE_FUZZ_KEEP") {
        let name = path.file_name().expect("a file name").to_string_lossy();
        let kept = PathBuf::from(dir).join(name.rsplit_once('-').map_or(name.as_ref(), |(_, n)| n));
        std::fs::copy(path, &kept).expect("the kept copy can be written");
        eprintln!("kept {}", kept.display());
    }
}
