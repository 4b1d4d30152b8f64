//! What the I/O benchmarks share: a synthetic volume, the median of a few runs, and the reads of whole
//! volumes, lines, slices and a box through the one reading interface the engines use.

use std::path::Path;
use std::time::Instant;

use seisimage::io::{self, InputOptions};
use seisimage::volume::{Domain, Geometry, IndexBox, LineAxis, SampleAxis};

pub const SHAPE: [usize; 3] = [256, 256, 512];
pub const RUNS: usize = 3;

/// Dipping events: a sum of cosines, no two samples alike, compressing about as poorly as real data do.
pub fn volume() -> (Geometry, Vec<f32>) {
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
pub fn median(mut f: impl FnMut()) -> f64 {
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

pub fn report(label: &str, values: usize, seconds: f64) {
    let mb = values as f64 * 4.0 / 1e6;
    println!("  {label:<34} {:>9.2} ms  {:>8.1} MB/s", seconds * 1e3, mb / seconds);
}

pub fn reads(path: &Path) {
    let reader = io::open(path, &InputOptions::default()).expect("the volume opens");
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
