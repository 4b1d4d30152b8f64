//! Rendering with bad input: clear errors that name what is wrong, no panic, and no file left behind that
//! looks finished.

use std::path::Path;

use seisimage::render::{render_png, sidecar_path, PlotAxis, RenderOptions, Slice};
use seisimage::Error;

fn axis(name: &str, len: usize) -> PlotAxis {
    PlotAxis { name: name.into(), unit: "m".into(), origin: 0.0, step: 10.0, len, spacing_m: Some(10.0) }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn an_unwritable_path_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-folder").join("inline.png");
    let data = vec![1.0f32; 6];
    let slice = Slice { data: &data, rows: axis("depth", 2), cols: axis("xline", 3) };
    let err = render_png(&path, &slice, &RenderOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn a_failed_sidecar_leaves_no_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inline.png");
    // A folder where the sidecar must go: the sidecar cannot be written, so neither may the image be.
    std::fs::create_dir(sidecar_path(&path)).unwrap();
    let data = vec![1.0f32; 6];
    let slice = Slice { data: &data, rows: axis("depth", 2), cols: axis("xline", 3) };
    let err = render_png(&path, &slice, &RenderOptions::default()).unwrap_err();
    assert!(err.to_string().contains("inline.json"), "{err}");
    assert_eq!(files_in(dir.path()), ["inline.json"]);
}

#[test]
fn empty_slices_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.png");
    for (rows, cols) in [(0, 5), (5, 0), (0, 0)] {
        let slice = Slice { data: &[], rows: axis("depth", rows), cols: axis("xline", cols) };
        let err = render_png(&path, &slice, &RenderOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Request(_)), "{err:?}");
        assert!(err.to_string().contains("no samples"), "{err}");
    }
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn data_that_does_not_fill_the_axes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![0.5f32; 11];
    let slice = Slice { data: &data, rows: axis("depth", 3), cols: axis("xline", 4) };
    let err = render_png(&dir.path().join("a.png"), &slice, &RenderOptions::default()).unwrap_err();
    assert!(err.to_string().contains("11 values as 3 rows × 4 columns"), "{err}");
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn nan_samples_render_as_no_data_and_stay_out_of_the_clip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gaps.png");
    let mut data = vec![2.0f32; 100];
    data[..10].fill(f32::NAN);
    data[55] = f32::INFINITY;
    let slice = Slice { data: &data, rows: axis("depth", 10), cols: axis("xline", 10) };
    let done = render_png(&path, &slice, &RenderOptions::default()).unwrap();
    assert_eq!(done.clip, 2.0);
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&done.sidecar).unwrap()).unwrap();
    assert_eq!(meta["nonfinite_samples"], 11);
    assert_eq!(meta["clip"]["value"], 2.0);

    let all_nan = vec![f32::NAN; 100];
    let slice = Slice { data: &all_nan, rows: axis("depth", 10), cols: axis("xline", 10) };
    let done = render_png(&path, &slice, &RenderOptions { annotate: false, ..Default::default() }).unwrap();
    assert_eq!(done.clip, 0.0);
    let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&done.sidecar).unwrap()).unwrap();
    let no_data: Vec<u8> = meta["no_data_rgb"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
    // A picture of one colour is a palette PNG: expanded to RGB as a viewer shows it.
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut rgb).unwrap();
    assert!(rgb.chunks(3).all(|c| c == no_data.as_slice()), "an all-NaN slice is all no-data");
}

#[test]
fn nan_axes_and_bad_options_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.png");
    let data = vec![1.0f32; 6];
    let mut rows = axis("depth", 2);
    rows.step = f64::NAN;
    let err =
        render_png(&path, &Slice { data: &data, rows, cols: axis("xline", 3) }, &RenderOptions::default()).unwrap_err();
    assert!(err.to_string().contains("`depth`") && err.to_string().contains("finite"), "{err}");
    let mut cols = axis("xline", 3);
    cols.spacing_m = Some(-12.5);
    let err =
        render_png(&path, &Slice { data: &data, rows: axis("depth", 2), cols }, &RenderOptions::default()).unwrap_err();
    assert!(err.to_string().contains("`xline`") && err.to_string().contains("spacing"), "{err}");

    let slice = Slice { data: &data, rows: axis("depth", 2), cols: axis("xline", 3) };
    let opts = RenderOptions { clip_percentile: 120.0, ..Default::default() };
    let err = render_png(&path, &slice, &opts).unwrap_err();
    assert!(err.to_string().contains("clip_percentile"), "{err}");
    let err = render_png(&dir.path().join("image.json"), &slice, &RenderOptions::default()).unwrap_err();
    assert!(err.to_string().contains("sidecar"), "{err}");
    assert!(files_in(dir.path()).is_empty());
}
