//! Time to write and read HDF5 volumes with the default chunking, with and without compression, and what
//! slices cost compared with the whole volume; NPY for comparison.
//!
//! Run with `cargo bench --bench hdf5_io`. Prints the median of several runs. Reads follow the writes, so
//! the file is in the operating system's page cache: the numbers measure HDF5 (chunk lookup, filters,
//! scatter into the caller's buffer), not the disk.

use std::path::Path;
use std::time::Instant;

use seisimage::io::hdf5::{write_volume, Hdf5Options, Hdf5Reader, Hdf5WriteOptions};
use seisimage::io::npy;
use seisimage::volume::{Domain, Geometry, IndexBox, LineAxis, SampleAxis, VolumeReader};

const SHAPE: [usize; 3] = [256, 256, 512];
const RUNS: usize = 3;

/// Dipping events: a sum of cosines, no two samples alike, compressing about as poorly as real data do.
fn volume() -> (Geometry, Vec<f32>) {
    let g = Geometry::regular(
        LineAxis::new(1000, 1, SHAPE[0]),
        LineAxis::new(2000, 1, SHAPE[1]),
        SampleAxis { origin: 0.0, step: 4.0, len: SHAPE[2], domain: Domain::Time },
    );
    let data = (0..g.n_values())
        .map(|n| {
            let k = (n % SHAPE[2]) as f32;
            let t = n / SHAPE[2];
            let (i, j) = ((t / SHAPE[1]) as f32, (t % SHAPE[1]) as f32);
            (0.21 * k + 0.03 * i - 0.05 * j).cos() * (0.013 * k * (1.0 + 0.001 * i)).sin() + 0.1 * (0.37 * k).cos()
        })
        .collect();
    (g, data)
}

/// Median wall time of `RUNS` runs of `f`, in seconds.
fn median(mut f: impl FnMut()) -> f64 {
    let mut seconds: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    seconds.sort_by(f64::total_cmp);
    seconds[RUNS / 2]
}

fn report(label: &str, values: usize, seconds: f64) {
    let mb = values as f64 * 4.0 / 1e6;
    println!("  {label:<34} {:>9.2} ms  {:>8.1} MB/s", seconds * 1e3, mb / seconds);
}

fn reads(path: &Path) {
    let reader = Hdf5Reader::open(path, &Hdf5Options::default()).expect("the volume opens");
    let [ni, nj, nk] = SHAPE;
    let boxes = [
        ("whole volume", IndexBox { il: 0..ni, xl: 0..nj, s: 0..nk }),
        ("one inline", IndexBox { il: ni / 2..ni / 2 + 1, xl: 0..nj, s: 0..nk }),
        ("one crossline", IndexBox { il: 0..ni, xl: nj / 2..nj / 2 + 1, s: 0..nk }),
        ("one time slice", IndexBox { il: 0..ni, xl: 0..nj, s: nk / 2..nk / 2 + 1 }),
        ("a 100 x 100 x 200 box", IndexBox { il: 30..130, xl: 70..170, s: 100..300 }),
    ];
    for (label, b) in boxes {
        let mut out = vec![0.0f32; b.len()];
        let seconds = median(|| reader.read_box(&b, &mut out).expect("the box reads"));
        report(&format!("read {label}"), b.len(), seconds);
    }
}

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
