//! SEG-Y decode throughput: `read_all` of an IEEE and an IBM file into a preallocated buffer, against a plain
//! sequential read of the same file into a byte buffer, in one run.
//!
//!     cargo bench --bench segy_decode
//!     SEISIMAGE_BENCH_MB=2048 cargo bench --bench segy_decode     (file size, default 256 MB)
//!
//! Both reads find the file in the page cache (it was just written, and each is repeated, best of five
//! kept), so the plain read measures a copy out of the cache: the floor a decoder that reads every byte
//! once can approach.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use seisimage::io::segy::{write_volume, SegyOptions, SegyReader, SegyWriteOptions, WriteFormat};
use seisimage::volume::{Domain, Geometry, LineAxis, SampleAxis, VolumeReader};

const SAMPLES: usize = 1000;
const REPEATS: usize = 5;

fn best_of(mut f: impl FnMut()) -> Duration {
    (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap()
}

fn plain_read(path: &Path, buffer: &mut [u8]) {
    let mut file = std::fs::File::open(path).unwrap();
    file.read_exact(buffer).unwrap();
}

fn main() {
    let megabytes: usize = std::env::var("SEISIMAGE_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let traces = megabytes * 1_000_000 / (240 + 4 * SAMPLES);
    let n_il = (traces as f64).sqrt() as usize;
    let n_xl = traces / n_il;
    let geometry = Geometry::regular(
        LineAxis::new(1, 1, n_il),
        LineAxis::new(1, 1, n_xl),
        SampleAxis { origin: 0.0, step: 4.0, len: SAMPLES, domain: Domain::Time },
    );
    let data: Vec<f32> = (0..geometry.n_values()).map(|k| ((k % 7919) as f32 * 0.01).sin() * 1000.0).collect();
    let dir = tempfile::tempdir().unwrap();
    let threads = rayon::current_num_threads();
    println!("segy_decode: {n_il} × {n_xl} traces × {SAMPLES} samples, {threads} rayon threads, best of {REPEATS}");
    println!(
        "{:<6} {:>8} {:>11} {:>11} {:>14} {:>14} {:>14} {:>7}",
        "format", "file MB", "plain GB/s", "open ms", "open+all GB/s", "read_all GB/s", "1 thread GB/s", "ratio"
    );
    for format in [WriteFormat::Ieee, WriteFormat::Ibm] {
        let path = dir.path().join(format!("{format:?}.sgy"));
        write_volume(&path, &geometry, &data, &SegyWriteOptions { format, ..Default::default() }).unwrap();
        let len = std::fs::metadata(&path).unwrap().len() as usize;

        let mut bytes = vec![1u8; len];
        let plain = best_of(|| plain_read(&path, &mut bytes));
        drop(bytes);

        let open = || SegyReader::open(&path, &SegyOptions::default()).unwrap();
        let scan = best_of(|| drop(open()));
        let mut out = vec![1.0f32; geometry.n_values()];
        // What a job does: map the file, scan the headers, decode everything.
        let whole = best_of(|| open().read_all(&mut out).unwrap());
        // Decoding alone, the pages already mapped.
        let reader = open();
        let all = best_of(|| reader.read_all(&mut out).unwrap());
        let k = SAMPLES + 7; // IBM keeps 21 to 24 bits
        assert!((out[k] - data[k]).abs() <= data[k].abs() * 1e-6, "{} read back as {}", data[k], out[k]);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let single = best_of(|| one.install(|| reader.read_all(&mut out).unwrap()));

        let gbps = |d: Duration| len as f64 / d.as_secs_f64() / 1e9;
        println!(
            "{:<6} {:>8.0} {:>11.2} {:>11.1} {:>14.2} {:>14.2} {:>14.2} {:>7.2}",
            format!("{format:?}"),
            len as f64 / 1e6,
            gbps(plain),
            scan.as_secs_f64() * 1e3,
            gbps(whole),
            gbps(all),
            gbps(single),
            whole.as_secs_f64() / plain.as_secs_f64()
        );
    }
    println!("GB/s of file bytes. open: map + header scan. ratio: (open + read_all) time / plain read time.");
}
