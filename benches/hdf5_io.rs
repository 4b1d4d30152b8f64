//! Time to write and read HDF5 volumes with the default chunking, with and without compression, and what
//! slices cost compared with the whole volume; NPY for comparison.
//!
//! Run with `cargo bench --bench hdf5_io`. Prints the median of several runs. Reads follow the writes, so
//! the file is in the operating system's page cache: the numbers measure HDF5 (chunk lookup, filters,
//! scatter into the caller's buffer), not the disk.

#[path = "common/io_volume.rs"]
mod common;

use common::{median, reads, report, volume, SHAPE};
use seisimage::io::hdf5::{write_volume, Hdf5WriteOptions};
use seisimage::io::npy;

fn main() {
    let (geometry, data) = volume();
    let dir = tempfile::tempdir().expect("a temporary folder");
    println!("volume {SHAPE:?} float32, {:.0} MB", data.len() as f64 * 4.0 / 1e6);

    for compression in [None, Some(1), Some(4)] {
        let path = dir.path().join("bench.h5");
        let opts = Hdf5WriteOptions { compression, ..Default::default() };
        let seconds = median(|| {
            write_volume(&path, &geometry, &data, &opts).expect("the volume writes");
        });
        let size = std::fs::metadata(&path).expect("the file exists").len();
        println!(
            "HDF5, default 64³ chunks, {}: file {:.0} MB",
            compression.map_or("no compression".to_string(), |l| format!("shuffle + deflate {l}")),
            size as f64 / 1e6
        );
        report("write whole volume", data.len(), seconds);
        reads(&path);
    }

    let path = dir.path().join("bench.npy");
    println!("NPY");
    report("write", data.len(), median(|| drop(npy::write(&path, &SHAPE, &data).expect("the array writes"))));
    report("read", data.len(), median(|| drop(npy::read(&path).expect("the array reads"))));
}
