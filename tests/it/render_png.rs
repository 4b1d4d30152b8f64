//! Slices drawn to PNG, decoded again with the `png` crate, and checked pixel by pixel against what a
//! geophysicist expects to see. Inputs are simple analytic patterns; expected colours come from the
//! documented colour conventions, not from the renderer.

use std::path::{Path, PathBuf};

use seisimage::render::{
    render_png, sidecar_path, ClipSetting, Colormap, PlotAxis, RenderOptions, Sampling, Slice, SliceData,
};
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis, Volume};
use serde_json::Value;

struct Image {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn read(path: &Path) -> Image {
        let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        // Palette pictures are expanded to RGB, as any viewer shows them.
        let mut decoder = png::Decoder::new(file);
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgb, png::BitDepth::Eight));
        rgb.truncate(info.buffer_size());
        Image { width: info.width as usize, height: info.height as usize, rgb }
    }

    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

fn is_red(c: [u8; 3]) -> bool {
    c[0] >= 100 && c[1] <= 40 && c[2] <= 40
}

fn is_blue(c: [u8; 3]) -> bool {
    c[2] >= 90 && c[0] <= 40 && c[1] <= 60
}

fn is_white(c: [u8; 3]) -> bool {
    c.iter().all(|&v| v >= 250)
}

fn depth(len: usize, dz: f64) -> PlotAxis {
    PlotAxis { name: "depth".into(), unit: "m".into(), origin: 0.0, step: dz, len, spacing_m: Some(dz) }
}

fn xlines(len: usize, dx: f64) -> PlotAxis {
    PlotAxis { name: "xline".into(), unit: String::new(), origin: 1000.0, step: 1.0, len, spacing_m: Some(dx) }
}

fn plain() -> RenderOptions {
    RenderOptions { annotate: false, ..RenderOptions::default() }
}

fn sidecar(png: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(sidecar_path(png)).unwrap()).unwrap()
}

/// `rows × cols` values from `f(row, col)`.
fn grid(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| f(r, c)).collect()
}

fn out(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn positive_and_negative_halves_take_the_colours_of_their_sign() {
    let dir = tempfile::tempdir().unwrap();
    let data = grid(20, 40, |_, c| if c < 20 { 1.0 } else { -1.0 });
    let slice = Slice { data: &data, rows: depth(20, 10.0), cols: xlines(40, 10.0) };
    let look = |colormap: Colormap| {
        let path = out(&dir, &format!("{colormap:?}.png"));
        render_png(&path, &slice, &RenderOptions { colormap, ..plain() }).unwrap();
        let img = Image::read(&path);
        (img.at(img.width / 4, img.height / 2), img.at(3 * img.width / 4, img.height / 2))
    };
    let (left, right) = look(Colormap::Seismic);
    assert!(is_red(left), "positive must be red: {left:?}");
    assert!(is_blue(right), "negative must be blue: {right:?}");
    let (left, right) = look(Colormap::Gray);
    assert_eq!((left, right), ([255; 3], [0; 3]), "gray: positive white, negative black");
    let (left, right) = look(Colormap::Binary);
    assert_eq!((left, right), ([0; 3], [255; 3]), "binary: positive black, negative white");
}

#[test]
fn an_all_zero_slice_renders_in_the_mid_colour() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![0.0f32; 12 * 9];
    let slice = Slice { data: &data, rows: depth(12, 5.0), cols: xlines(9, 5.0) };
    let path = out(&dir, "zero.png");
    let done = render_png(&path, &slice, &plain()).unwrap();
    assert_eq!(done.clip, 0.0);
    assert!(Image::read(&path).rgb.chunks(3).all(|c| c == [255, 255, 255]), "seismic zero is white");
    render_png(&path, &slice, &RenderOptions { colormap: Colormap::Gray, ..plain() }).unwrap();
    let img = Image::read(&path);
    assert!(img.rgb.iter().all(|&v| v.abs_diff(128) <= 1), "gray zero is mid-gray");
    assert_eq!(sidecar(&path)["clip"]["value"], 0.0);
}

#[test]
fn one_outlier_does_not_wash_out_the_section() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = grid(50, 50, |_, c| if c < 25 { 1.0 } else { -1.0 });
    data[0] = 1.0e6;
    let slice = Slice { data: &data, rows: depth(50, 10.0), cols: xlines(50, 10.0) };
    let path = out(&dir, "spike.png");
    let done = render_png(&path, &slice, &plain()).unwrap();
    assert_eq!(done.clip, 1.0, "99th percentile of |amplitude|");
    let img = Image::read(&path);
    let (left, right) = (img.at(img.width / 4, 3 * img.height / 4), img.at(3 * img.width / 4, 3 * img.height / 4));
    assert!(is_red(left) && is_blue(right), "±1 saturate: {left:?} {right:?}");
    // Clipping at the maximum instead shows what the percentile avoids: everything but the spike is white.
    render_png(&path, &slice, &RenderOptions { clip_percentile: 100.0, ..plain() }).unwrap();
    let img = Image::read(&path);
    assert!(is_white(img.at(img.width / 4, 3 * img.height / 4)));
    assert!(is_white(img.at(3 * img.width / 4, 3 * img.height / 4)));
}

#[test]
fn the_aspect_follows_the_true_spacing() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![0.5f32; 40 * 60];
    let ratio = |dz: f64, dx: f64, ve: f64| {
        let slice = Slice { data: &data, rows: depth(40, dz), cols: xlines(60, dx) };
        let path = out(&dir, "aspect.png");
        render_png(&path, &slice, &RenderOptions { vertical_exaggeration: ve, ..plain() }).unwrap();
        let img = Image::read(&path);
        img.height as f64 / img.width as f64
    };
    // 40 samples of dz = 2·dx over 60 traces: 80 dx deep, 60 dx wide.
    let r = ratio(20.0, 10.0, 1.0);
    assert!((r - 80.0 / 60.0).abs() < 0.01, "{r}");
    let r = ratio(10.0, 10.0, 1.0);
    assert!((r - 40.0 / 60.0).abs() < 0.01, "{r}");
    let r = ratio(20.0, 10.0, 3.0);
    assert!((r - 240.0 / 60.0).abs() < 0.01, "{r}");
}

#[test]
fn the_shallowest_sample_is_drawn_at_the_top() {
    let dir = tempfile::tempdir().unwrap();
    let data = grid(30, 20, |r, _| if r == 0 { 1.0 } else { 0.0 });
    let slice = Slice { data: &data, rows: depth(30, 10.0), cols: xlines(20, 25.0) };
    let path = out(&dir, "top.png");
    render_png(&path, &slice, &plain()).unwrap();
    let img = Image::read(&path);
    let x = img.width / 2;
    assert!(is_red(img.at(x, 0)), "depth index 0 is the top row: {:?}", img.at(x, 0));
    assert!(is_white(img.at(x, img.height - 1)));
    assert!(is_white(img.at(x, img.height / 2)));
}

#[test]
fn the_sidecar_maps_pixels_to_lines_and_depths() {
    let dir = tempfile::tempdir().unwrap();
    // One positive sample at depth index 12 (120 m), crossline 1030, in a 50 × 60 zero section.
    let data = grid(50, 60, |r, c| if (r, c) == (12, 30) { 1.0 } else { 0.0 });
    let rows = depth(50, 10.0);
    let slice = Slice { data: &data, rows, cols: xlines(60, 12.5) };
    let title = "Inline 1234: migrated (PSDM)";
    let path = out(&dir, "mapped.png");
    let done = render_png(&path, &slice, &RenderOptions { title: Some(title.into()), ..Default::default() }).unwrap();
    let img = Image::read(&path);
    let meta = sidecar(&path);
    assert_eq!(meta["image"], "mapped.png");
    assert_eq!(
        (meta["width"].as_u64().unwrap(), meta["height"].as_u64().unwrap()),
        (img.width as u64, img.height as u64)
    );
    assert_eq!((done.width as usize, done.height as usize), (img.width, img.height));
    assert_eq!(meta["title"], title);
    assert_eq!(meta["colormap"], "seismic");
    assert_eq!(meta["clip"]["value"], 1.0);
    assert_eq!(meta["clip"]["method"], "max_abs", "one spike among zeros: the percentile is zero");
    assert_eq!(meta["aspect"]["basis"], "true_spacing");
    let r = &meta["rows"];
    assert_eq!((r["name"].as_str(), r["unit"].as_str()), (Some("depth"), Some("m")));
    assert_eq!(
        (r["first"].as_f64(), r["last"].as_f64(), r["step"].as_f64(), r["n"].as_u64()),
        (Some(0.0), Some(490.0), Some(10.0), Some(50))
    );
    let c = &meta["cols"];
    assert_eq!((c["name"].as_str(), c["unit"].as_str()), (Some("xline"), Some("")));
    assert_eq!((c["first"].as_f64(), c["last"].as_f64(), c["n"].as_u64()), (Some(1000.0), Some(1059.0), Some(60)));

    let pixel = |axis: &Value, value: f64| {
        ((value - axis["value_at_pixel_zero"].as_f64().unwrap()) / axis["value_per_pixel"].as_f64().unwrap()).round()
            as usize
    };
    let (x, y) = (pixel(c, 1030.0), pixel(r, 120.0));
    assert!(is_red(img.at(x, y)), "the spike is where the sidecar says: {:?}", img.at(x, y));
    // The data area is where the sidecar says, and the spike is nowhere else in it.
    let (left, top) = (c["pixel_first"].as_u64().unwrap() as usize, r["pixel_first"].as_u64().unwrap() as usize);
    let (w, h) = (c["pixel_count"].as_u64().unwrap() as usize, r["pixel_count"].as_u64().unwrap() as usize);
    assert!(is_white(img.at(left, top)) && is_white(img.at(left + w - 1, top + h - 1)));
    assert!(is_white(img.at(pixel(c, 1010.0), y)) && is_white(img.at(x, pixel(r, 300.0))));
}

#[test]
fn annotation_fills_the_margins_and_plain_images_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let data = grid(60, 80, |r, c| (r as f32 / 5.0).sin() * (c as f32 / 7.0).cos());
    let slice = Slice { data: &data, rows: depth(60, 10.0), cols: xlines(80, 10.0) };

    let bare = out(&dir, "bare.png");
    render_png(&bare, &slice, &plain()).unwrap();
    let bare_img = Image::read(&bare);
    let bare_meta = sidecar(&bare);
    assert_eq!(bare_meta["cols"]["pixel_first"], 0);
    assert_eq!(bare_meta["rows"]["pixel_first"], 0);
    assert_eq!(bare_meta["cols"]["pixel_count"].as_u64(), Some(bare_img.width as u64));
    assert_eq!(bare_meta["rows"]["pixel_count"].as_u64(), Some(bare_img.height as u64));

    let framed = out(&dir, "framed.png");
    render_png(&framed, &slice, &RenderOptions::default()).unwrap();
    let img = Image::read(&framed);
    let meta = sidecar(&framed);
    let left = meta["cols"]["pixel_first"].as_u64().unwrap() as usize;
    let top = meta["rows"]["pixel_first"].as_u64().unwrap() as usize;
    let (w, h) = (bare_img.width, bare_img.height);
    assert_eq!(meta["cols"]["pixel_count"].as_u64(), Some(w as u64), "annotation does not shrink the data");
    assert!(left > 0 && top > 0 && img.width > left + w && img.height > top + h);
    // The data area is the plain image, pixel for pixel.
    for y in (0..h).step_by(7) {
        for x in (0..w).step_by(5) {
            assert_eq!(img.at(left + x, top + y), bare_img.at(x, y), "({x}, {y})");
        }
    }
    let inked = |xs: std::ops::Range<usize>, ys: std::ops::Range<usize>| {
        ys.flat_map(|y| xs.clone().map(move |x| (x, y))).filter(|&(x, y)| !is_white(img.at(x, y))).count()
    };
    assert!(inked(0..left - 2, top..top + h) > 100, "left margin: depth labels and title");
    assert!(inked(left..left + w, 0..top - 2) > 100, "top margin: crossline labels and title");
    let bar = inked(left + w + 2..img.width, top..top + h);
    assert!(bar > h, "right margin: colour bar");
    let red = (top..top + h).any(|y| (left + w..img.width).any(|x| is_red(img.at(x, y))));
    let blue = (top..top + h).any(|y| (left + w..img.width).any(|x| is_blue(img.at(x, y))));
    assert!(red && blue, "the colour bar spans the map");
    // A frame: the ring of pixels just outside the data area is black.
    assert_eq!(img.at(left - 1, top + h / 2), [0, 0, 0]);
    assert_eq!(img.at(left + w / 2, top + h), [0, 0, 0]);
}

#[test]
fn small_slices_are_enlarged_as_cells_into_a_small_palette_file() {
    let dir = tempfile::tempdir().unwrap();
    // 23 × 18 samples (the F3 cut's depth slice), amplitude rising linearly across.
    let data = grid(23, 18, |_, c| c as f32 / 17.0 * 2.0 - 1.0);
    let slice = Slice { data: &data, rows: xlines(23, 25.0), cols: xlines(18, 25.0) };
    let path = out(&dir, "small.png");
    let opts = RenderOptions { colormap: Colormap::Gray, clip: ClipSetting::Fixed(1.0), ..plain() };
    render_png(&path, &slice, &opts).unwrap();
    let img = Image::read(&path);
    assert!(img.width >= 800, "{} pixels wide", img.width);
    // Each sample is a cell of one colour: 18 grey levels across, no interpolated diamonds in between.
    let row: Vec<u8> = (0..img.width).map(|x| img.at(x, img.height / 2)[0]).collect();
    let mut levels = row.clone();
    levels.dedup();
    assert_eq!(levels.len(), 18, "{levels:?}");
    assert!(row.windows(2).all(|w| w[0] <= w[1]), "the ramp must rise monotonically");
    assert_eq!(sidecar(&path)["sampling"]["cols"], "cells");
    // A palette PNG: the picture is tens of kilobytes, not the megabyte and more of an RGB one.
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert!(bytes < 100_000, "{bytes} bytes");
    let annotated = out(&dir, "annotated.png");
    render_png(&annotated, &slice, &RenderOptions { clip: ClipSetting::Fixed(1.0), ..Default::default() }).unwrap();
    let bytes = std::fs::metadata(&annotated).unwrap().len();
    assert!(bytes < 100_000, "{bytes} bytes");
}

#[test]
fn fine_sections_are_interpolated_along_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    // 75 depth samples of 4 m under 18 traces 25 m apart: the traces become cells, depth is smooth.
    let data = grid(75, 18, |r, _| r as f32 / 74.0 * 2.0 - 1.0);
    let slice = Slice { data: &data, rows: depth(75, 4.0), cols: xlines(18, 25.0) };
    let path = out(&dir, "section.png");
    let opts = RenderOptions {
        colormap: Colormap::Gray,
        clip: ClipSetting::Fixed(1.0),
        sampling: Sampling::Linear,
        ..plain()
    };
    render_png(&path, &slice, &opts).unwrap();
    let img = Image::read(&path);
    let column: Vec<u8> = (0..img.height).map(|y| img.at(img.width / 2, y)[0]).collect();
    let mut levels = column.clone();
    levels.dedup();
    assert!(levels.len() > 75, "{} grey levels down the section", levels.len());
    assert_eq!(sidecar(&path)["sampling"]["rows"], "interpolated");
}

#[test]
fn huge_slices_are_capped_and_averaged() {
    let dir = tempfile::tempdir().unwrap();
    // A ±1 checkerboard at the sample scale: averaged down it is pale, aliased it would be saturated.
    let data = grid(600, 500, |r, c| if (r + c) % 2 == 0 { 1.0 } else { -1.0 });
    let slice = Slice { data: &data, rows: depth(600, 10.0), cols: xlines(500, 10.0) };
    let path = out(&dir, "huge.png");
    let opts = RenderOptions { max_pixels: 40_000, ..plain() };
    render_png(&path, &slice, &opts).unwrap();
    let img = Image::read(&path);
    assert!(img.width * img.height <= 40_000, "{} × {}", img.width, img.height);
    assert!((img.height as f64 / img.width as f64 - 1.2).abs() < 0.02);
    let pale = img.rgb.chunks(3).filter(|c| c.iter().all(|&v| v >= 200)).count();
    assert!(pale as f64 > 0.95 * (img.width * img.height) as f64, "{pale} pale pixels");
}

#[test]
fn missing_traces_of_a_volume_show_as_no_data() {
    let dir = tempfile::tempdir().unwrap();
    // 2 inlines × 30 crosslines × 40 time samples of 4 ms, 12.5 m bins; crossline 110 of inline 21 missing.
    let mut g = Geometry::regular(
        LineAxis::new(20, 1, 2),
        LineAxis::new(100, 1, 30),
        SampleAxis { origin: 0.0, step: 4.0, len: 40, domain: Domain::Time },
    );
    g.coords = Some(CoordTransform { origin: [0.0, 0.0], per_iline: [0.0, 12.5], per_xline: [12.5, 0.0] });
    g.live[30 + 10] = false;
    let mut vol = Volume::zeros(g);
    for xl in 0..30 {
        vol.trace_mut(1, xl).iter_mut().enumerate().for_each(|(s, v)| *v = if s < 20 { 1.0 } else { -1.0 });
    }
    let section = SliceData::inline(&vol, 1).unwrap();
    let path = out(&dir, "inline21.png");
    render_png(&path, &section.as_slice(), &plain()).unwrap();
    let img = Image::read(&path);
    let meta = sidecar(&path);
    assert_eq!(meta["nonfinite_samples"], 40);
    assert_eq!(meta["aspect"]["basis"], "time_at_velocity");
    assert_eq!(meta["rows"]["name"], "twt");
    assert_eq!(meta["rows"]["unit"], "ms");
    let no_data: Vec<u8> = meta["no_data_rgb"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
    let cols = &meta["cols"];
    let x_of = |xline: f64| {
        ((xline - cols["value_at_pixel_zero"].as_f64().unwrap()) / cols["value_per_pixel"].as_f64().unwrap()).round()
            as usize
    };
    assert_eq!(img.at(x_of(110.0), img.height / 4).to_vec(), no_data);
    assert_eq!(img.at(x_of(110.0), 3 * img.height / 4).to_vec(), no_data);
    assert!(is_red(img.at(x_of(105.0), img.height / 4)), "early times positive");
    assert!(is_blue(img.at(x_of(120.0), 3 * img.height / 4)), "late times negative");
}
