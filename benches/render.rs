//! Time to draw slices to annotated PNGs with their sidecars: a typical section and a large map slice.
//!
//! Run with `cargo bench --bench render`. Prints the median of several runs and the sample throughput.

use std::time::Instant;

use seisimage::render::{render_png, PlotAxis, RenderOptions, Slice};

/// A section of dipping events: a sum of cosines with a few wavelengths per event, no two samples alike.
fn section(rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|k| {
            let (r, c) = ((k / cols) as f32, (k % cols) as f32);
            (0.21 * r + 0.03 * c).cos() * (0.002 * r * c).sin() + 0.1 * (0.37 * r - 0.11 * c).cos()
        })
        .collect()
}

fn axis(name: &str, unit: &str, len: usize, spacing_m: f64) -> PlotAxis {
    PlotAxis { name: name.into(), unit: unit.into(), origin: 0.0, step: spacing_m, len, spacing_m: Some(spacing_m) }
}

fn bench(label: &str, rows: PlotAxis, cols: PlotAxis, opts: &RenderOptions) {
    let data = section(rows.len, cols.len);
    let slice = Slice { data: &data, rows, cols };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("slice.png");
    let mut seconds: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let done = render_png(&path, &slice, opts).expect("rendering succeeds");
            std::hint::black_box(done);
            t.elapsed().as_secs_f64()
        })
        .collect();
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    let image = image::size(&path);
    println!(
        "{label}: {} × {} samples → {} × {} px: median {:.1} ms ({:.1} Msamples/s, {:.1} Mpixels/s)",
        slice.rows.len,
        slice.cols.len,
        image.0,
        image.1,
        median * 1e3,
        data.len() as f64 / median / 1e6,
        (image.0 as f64 * image.1 as f64) / median / 1e6
    );
}

mod image {
    /// Width and height of a PNG.
    pub fn size(path: &std::path::Path) -> (u32, u32) {
        let file = std::io::BufReader::new(std::fs::File::open(path).expect("the image exists"));
        let info = png::Decoder::new(file).read_info().expect("a PNG");
        (info.info().width, info.info().height)
    }
}

fn main() {
    let opts = RenderOptions::default();
    bench("section, 10 m × 12.5 m", axis("depth", "m", 1000, 10.0), axis("xline", "", 2000, 12.5), &opts);
    bench("map slice, 25 m bins", axis("iline", "", 4000, 25.0), axis("xline", "", 4000, 25.0), &opts);
    let small = RenderOptions { annotate: false, ..opts };
    bench("small section, enlarged", axis("depth", "m", 75, 10.0), axis("xline", "", 18, 25.0), &small);
}
