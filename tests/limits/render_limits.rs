//! Pictures: whatever the proportions of a slice and the vertical exaggeration, drawing one allocates
//! about what the picture itself takes, and the whole picture (frame, labels and colour bar included)
//! keeps to `max_pixels`.

use seisimage::render::{
    render_png, render_png_with, Display, PictureInfo, PlotAxis, Provenance, RenderOptions, Slice, MAX_TITLE_CHARS,
};

use crate::counting_allocator::{exclusive, peak_allocation};

/// `len` samples `spacing` metres apart.
fn axis(name: &str, unit: &str, len: usize, spacing: f64) -> PlotAxis {
    PlotAxis { name: name.into(), unit: unit.into(), origin: 0.0, step: spacing, len, spacing_m: Some(spacing) }
}

/// Draw `rows × cols` samples of a ramp; the picture's size and the bytes allocated at most meanwhile.
fn draw(rows: PlotAxis, cols: PlotAxis, opts: &RenderOptions) -> (u64, u64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<f32> = (0..rows.len * cols.len).map(|k| ((k % 97) as f32 - 48.0) / 48.0).collect();
    let slice = Slice { data: &data, rows, cols };
    let (image, peak) = peak_allocation(|| render_png(&dir.path().join("slice.png"), &slice, opts).unwrap());
    (image.width as u64, image.height as u64, peak)
}

/// 100 000 depth samples of 1 mm under 18 traces 25 m apart (a job with `dz = 0.001`): the picture is
/// wide and short, so the samples are first averaged down the traces, then spread across; the other
/// order held every depth sample at the picture's width (850 MB here).
#[test]
fn a_slice_of_fine_depth_steps_is_drawn_in_little_memory() {
    let _one_at_a_time = exclusive();
    let opts = RenderOptions { max_pixels: 1_000_000, ..Default::default() };
    let (w, h, peak) = draw(axis("depth", "m", 100_000, 0.001), axis("xline", "", 18, 25.0), &opts);
    assert!(w * h <= 1_000_000, "{w} × {h} pixels");
    assert!(peak <= 64 << 20, "{peak} bytes allocated for a picture of {w} × {h} pixels");
}

/// A vertical exaggeration of 10⁹ asks for a data area one pixel wide and as tall as `max_pixels`: the
/// frame around it (axis labels on the left, the colour bar on the right) made the picture 480 times
/// larger than `max_pixels`.
#[test]
fn the_frame_counts_against_max_pixels() {
    let _one_at_a_time = exclusive();
    for display in [Display::Density, Display::Wiggle, Display::Va] {
        for exaggeration in [1e9, 1e-9] {
            let opts = RenderOptions {
                max_pixels: 1_000_000,
                vertical_exaggeration: exaggeration,
                display,
                ..Default::default()
            };
            let (w, h, peak) = draw(axis("depth", "m", 100, 10.0), axis("xline", "", 12, 10.0), &opts);
            assert!(w * h <= 1_000_000, "{display:?}, exaggeration {exaggeration}: {w} × {h} pixels");
            assert!(peak <= 64 << 20, "{display:?}, exaggeration {exaggeration}: {peak} bytes for {w} × {h} pixels");
        }
    }
}

/// A title template is bounded as written, but its fields are filled in from what a run knows (the
/// product, the input's name, the velocity): the title drawn is cut to the same bound, and the picture
/// stays within `max_pixels`.
#[test]
fn a_title_filled_in_from_long_fields_is_cut() {
    let _one_at_a_time = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<f32> = (0..100 * 12).map(|k| ((k % 97) as f32 - 48.0) / 48.0).collect();
    let slice = Slice { data: &data, rows: axis("depth", "m", 100, 10.0), cols: axis("xline", "", 12, 10.0) };
    let opts =
        RenderOptions { max_pixels: 1_000_000, title: Some("{product} of {input}".into()), ..Default::default() };
    let mut info = PictureInfo::amplitude(&"P".repeat(100_000));
    info.provenance = Some(Provenance { input: "i".repeat(255), ..Default::default() });
    let path = dir.path().join("slice.png");
    let (image, peak) = peak_allocation(|| render_png_with(&path, &slice, &opts, &info).unwrap());
    assert!(u64::from(image.width) * u64::from(image.height) <= 1_000_000, "{} × {}", image.width, image.height);
    assert!(peak <= 64 << 20, "{peak} bytes allocated");
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("slice.json")).unwrap()).unwrap();
    let title = sidecar["title"].as_str().unwrap();
    assert_eq!(title.chars().count(), MAX_TITLE_CHARS, "{title}");
    assert!(title.starts_with("PPP") && title.ends_with('…'), "{title}");
}
