//! Time to read an MDIO dataset (Zarr v3, Blosc with zstd, 64³ chunks) against a SEG-Y file of the same
//! volume: the whole volume, an inline, a crossline and a time slice, through the one reading interface
//! the engines use.
//!
//! Run with `cargo bench --bench mdio_io`. Prints the median of several runs. Reads follow the writes, so
//! the files are in the operating system's page cache: the numbers measure decoding (SEG-Y's trace layout
//! against MDIO's chunk decompression), not the disk.

#[path = "common/io_volume.rs"]
mod common;

use common::{median, reads, report, volume, SHAPE};
use seisimage::io::{self, FileFormat, WriteOptions};

fn main() {
    let (geometry, data) = volume();
    let dir = tempfile::tempdir().expect("a temporary folder");
    println!("volume {SHAPE:?} float32, {:.0} MB", data.len() as f64 * 4.0 / 1e6);
    for (format, name) in [(FileFormat::Segy, "bench.sgy"), (FileFormat::Mdio, "bench.mdio")] {
        let path = dir.path().join(name);
        let seconds = median(|| {
            io::write_volume(format, &path, &geometry, &data, &WriteOptions::default()).expect("the volume writes");
        });
        println!("{format:?}");
        report("write whole volume", data.len(), seconds);
        reads(&path);
    }
}
