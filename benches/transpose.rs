//! The transpose of a padded wavenumber plane, the step between the two 1-D FFT passes of every 2-D FFT
//! of the CPU engine (`imaging::spectrum::Fft2`): the `transpose` crate it uses against the cache-tiled
//! loop it replaced, kept here as the baseline, run alternately.
//!
//! Each sample is a plane of Complex32 transposed and transposed back (as `Fft2` does), repeated over
//! about two million points; the samples of the two alternate, and the report gives the median time of each and
//! the median over rounds of the crate's time divided by the tiled loop's in the same round.
//!
//! Run with `cargo bench --bench transpose`. `SEISIMAGE_BENCH_ROUNDS` sets the rounds (default 15).

use std::hint::black_box;
use std::time::Instant;

use num_complex::Complex32;

/// Planes of `[il_pad][xl_pad]` points: the demo cut, then padded surveys from small to large.
const SHAPES: [[usize; 2]; 7] = [[36, 30], [160, 160], [250, 270], [512, 512], [540, 640], [1024, 1024], [2048, 2048]];

/// `dst[c][r] = src[r][c]` for a `rows × cols` matrix in 32 × 32 tiles: seisimage's transpose before
/// the crate's.
fn tiled<T: Copy>(src: &[T], dst: &mut [T], rows: usize, cols: usize) {
    const TILE: usize = 32;
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("SEISIMAGE_BENCH_ROUNDS").map_or(15, |r| r.parse().expect("a round count"));
    println!("{:<12} {:>14} {:>14} {:>13}", "plane", "tiled ns/point", "crate ns/point", "crate / tiled");
    for [rows, cols] in SHAPES {
        let plane: Vec<Complex32> = (0..rows * cols).map(|i| Complex32::new(i as f32, -(i as f32))).collect();
        let mut transposed = vec![Complex32::default(); plane.len()];
        let mut back = vec![Complex32::default(); plane.len()];
        let tiled_pair = |t: &mut [Complex32], b: &mut [Complex32]| {
            tiled(&plane, t, rows, cols);
            tiled(t, b, cols, rows);
        };
        let crate_pair = |t: &mut [Complex32], b: &mut [Complex32]| {
            transpose::transpose(&plane, t, cols, rows);
            transpose::transpose(t, b, rows, cols);
        };
        crate_pair(&mut transposed, &mut back);
        assert!(back == plane);
        tiled_pair(&mut transposed, &mut back);
        assert!(back == plane);
        let reps = (2_000_000 / plane.len()).max(1);
        let mut time = |f: &dyn Fn(&mut [Complex32], &mut [Complex32])| {
            let t = Instant::now();
            for _ in 0..reps {
                f(black_box(&mut transposed), black_box(&mut back));
            }
            t.elapsed().as_secs_f64() / (reps * plane.len()) as f64
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            if round % 2 == 0 {
                a.push(time(&tiled_pair));
                b.push(time(&crate_pair));
            } else {
                b.push(time(&crate_pair));
                a.push(time(&tiled_pair));
            }
        }
        let ratio = median(b.iter().zip(&a).map(|(b, a)| b / a).collect());
        println!(
            "{:<12} {:>14.2} {:>14.2} {:>13.2}",
            format!("{rows} × {cols}"),
            median(a) * 1e9,
            median(b) * 1e9,
            ratio
        );
    }
}
