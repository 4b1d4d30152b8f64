//! Depth and time slices as GeoTIFF: tifffile (an independent reader) finds float32 maps whose
//! georeferencing puts the pixel of each trace at that trace's coordinates, for a rotated survey
//! (ModelTransformation) and a north-up one (ModelPixelScale and ModelTiepoint), with the job's EPSG code
//! as the projected CRS GeoKey.

use std::path::Path;

use seisimage::io::{write_volume, FileFormat, WriteOptions};
use seisimage::volume::CoordTransform;
use serde_json::Value;

use crate::cli_common::{job_text, model, run, samples, write_job};
use crate::python::python_json;

const TIFFFILE_READ: &str = r#"
import json, sys
import tifffile
with tifffile.TiffFile(sys.argv[1]) as t:
    page = t.pages[0]
    tags = {tag.name: tag.value for tag in page.tags.values()}
    keys = tags["GeoKeyDirectoryTag"]
    keys = {int(keys[k]): int(keys[k + 3]) for k in range(4, len(keys), 4)}
    print(json.dumps({
        "dtype": str(page.dtype),
        "shape": list(page.shape),
        "values": page.asarray().astype(float).tolist(),
        "transformation": list(tags.get("ModelTransformationTag", [])),
        "scale": list(tags.get("ModelPixelScaleTag", [])),
        "tiepoint": list(tags.get("ModelTiepointTag", [])),
        "geokeys": keys,
    }))
"#;

/// Migrate a survey on the grid `coords` with a depth and a time slice as GeoTIFF and NPY: tifffile's view
/// of each GeoTIFF beside the NPY values of the same slice.
fn slices(dir: &Path, coords: CoordTransform) -> Option<Vec<(Value, Vec<f32>)>> {
    let m = model(10, 7, 100);
    let mut g = m.geometry().clone();
    g.coords = Some(coords);
    let input = dir.join("survey.sgy");
    write_volume(FileFormat::Segy, &input, &g, &samples(&m), &WriteOptions::default()).unwrap();
    let out = dir.join("out");
    let output = "depth_slices = [150.0]\ntime_slices = [150.0]\ndomain = [\"depth\", \"time\"]\n\
                  inlines = [3]\nslice_formats = [\"geotiff\", \"npy\"]\npng = false";
    let text = job_text(&input, &out, "dz = 5.0", output).replace("[input]\n", "[input]\ncrs = \"EPSG:23031\"\n");
    let o = run(&["run", write_job(&dir.join("job.toml"), &text).to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(!out.join("inline_3.tif").exists(), "sections are not maps");
    let mut found = Vec::new();
    for stem in ["depth_150m", "time_150ms"] {
        let tif = out.join(format!("{stem}.tif"));
        let view = python_json("tifffile, numpy", TIFFFILE_READ, &[tif.as_os_str()])?;
        found.push((view, seisimage::io::npy::read(&out.join(format!("{stem}.npy"))).unwrap().1));
    }
    Some(found)
}

fn check_values_and_keys(view: &Value, npy: &[f32]) {
    assert_eq!(view["dtype"], "float32");
    assert_eq!(view["shape"], serde_json::json!([10, 7]), "a row per inline, a column per crossline");
    let values: Vec<f32> = view["values"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().clone())
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(values, npy);
    assert!(values.iter().any(|&v| v != 0.0));
    let keys = &view["geokeys"];
    assert_eq!(
        (keys["1024"].as_i64(), keys["1025"].as_i64(), keys["3072"].as_i64()),
        (Some(1), Some(2), Some(23031)),
        "{keys}"
    );
}

#[test]
fn rotated_maps_place_each_trace_at_its_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let coords = CoordTransform { origin: [612_345.5, 6_071_234.25], per_iline: [6.0, 8.0], per_xline: [-8.0, 6.0] };
    let Some(found) = slices(dir.path(), coords) else { return };
    for (view, npy) in &found {
        check_values_and_keys(view, npy);
        let m: Vec<f64> = view["transformation"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(m.len(), 16, "{view}");
        for (i, j) in [(0, 0), (9, 0), (0, 6), (4, 3)] {
            let (col, row) = (j as f64, i as f64);
            let at = [m[0] * col + m[1] * row + m[3], m[4] * col + m[5] * row + m[7]];
            let [x, y] = coords.xy(i as f64, j as f64);
            assert!(
                (at[0] - x).abs() < 1e-6 && (at[1] - y).abs() < 1e-6,
                "pixel ({row}, {col}) at {at:?}, trace at {x}, {y}"
            );
        }
    }
}

#[test]
fn north_up_maps_use_pixel_scale_and_tiepoint() {
    let dir = tempfile::tempdir().unwrap();
    let coords = CoordTransform { origin: [500_000.0, 6_100_000.0], per_iline: [0.0, -25.0], per_xline: [12.5, 0.0] };
    let Some(found) = slices(dir.path(), coords) else { return };
    for (view, npy) in &found {
        check_values_and_keys(view, npy);
        assert_eq!(view["transformation"], serde_json::json!([]));
        let scale: Vec<f64> = view["scale"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let tie: Vec<f64> = view["tiepoint"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        for (i, j) in [(0, 0), (9, 6), (3, 2)] {
            let at = [tie[3] + (j as f64 - tie[0]) * scale[0], tie[4] - (i as f64 - tie[1]) * scale[1]];
            assert_eq!(at, coords.xy(i as f64, j as f64), "pixel ({i}, {j})");
        }
    }
}

#[test]
fn geotiff_is_refused_for_regions() {
    let dir = tempfile::tempdir().unwrap();
    let text = job_text(
        &dir.path().join("in.sgy"),
        &dir.path().join("out"),
        "",
        "[[output.roi]]\nname = \"a\"\nformats = [\"geotiff\"]",
    );
    let o = run(&["validate", write_job(&dir.path().join("job.toml"), &text).to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("output.roi.0.formats") && o.stderr.contains("GeoTIFF holds maps"), "{o:?}");
}

#[test]
fn geotiff_maps_of_a_survey_without_coordinates_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 6, 60);
    let mut g = m.geometry().clone();
    g.coords = None;
    let input = dir.path().join("plain.sgy");
    write_volume(FileFormat::Segy, &input, &g, &samples(&m), &WriteOptions::default()).unwrap();
    let output = "depth_slices = [100.0]\nslice_formats = [\"geotiff\"]\npng = false";
    let text = job_text(&input, &dir.path().join("out"), "", output)
        .replace("[input]\n", "[input]\nbin_size = [10.0, 10.0]\n");
    let job = write_job(&dir.path().join("job.toml"), &text);
    for command in ["validate", "run"] {
        let o = run(&[command, job.to_str().unwrap()]);
        assert_eq!(o.code(), Some(2), "{command}: {o:?}");
        assert!(o.stderr.contains("output.slice_formats") && o.stderr.contains("has none"), "{command}: {o:?}");
    }
    assert!(!dir.path().join("out").join("depth_100m.tif").exists());
}
