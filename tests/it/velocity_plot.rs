//! `plot` of a velocity cube (a min-max scale, a sequential map, its unit and its name), and `--domain
//! depth` of `plot`, `info` and `convert` for SEG-Y files that keep depths in the time fields.

use std::path::Path;

use serde_json::Value;

use crate::cli_common::run;
use crate::velocity_product::{v_at_depth, V0};
use seisimage::io::{write_volume, FileFormat, WriteOptions};
use seisimage::volume::{Domain, Geometry, LineAxis, SampleAxis};

/// A cube of 5 × 4 traces of 50 samples every 10 (ms as written) whose value is 1500 + 2 × (sample
/// value) + 10 × (inline index): a velocity increasing downwards, different on each inline.
fn velocity_cube(path: &Path, format: FileFormat) -> (Geometry, Vec<f32>) {
    let samples = SampleAxis { origin: 0.0, step: 10.0, len: 50, domain: Domain::Time };
    let g = Geometry::regular(LineAxis::new(1, 1, 5), LineAxis::new(1, 1, 4), samples);
    let mut data = Vec::with_capacity(g.n_values());
    for i in 0..5 {
        for _ in 0..4 {
            data.extend((0..50).map(|k| (1500.0 + 2.0 * samples.value(k) + 10.0 * i as f64) as f32));
        }
    }
    write_volume(format, path, &g, &data, &WriteOptions::default()).unwrap();
    (g, data)
}

fn sidecar(png: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(png.with_extension("json")).unwrap()).unwrap()
}

#[test]
fn a_velocity_cube_plots_from_its_smallest_to_its_largest_value_with_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("v.h5");
    velocity_cube(&cube, FileFormat::Hdf5);
    let png = dir.path().join("v.png");
    let o = run(&[
        "plot",
        cube.to_str().unwrap(),
        "--inline",
        "3",
        "--quantity",
        "velocity",
        "--bin-size",
        "25,25",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let s = sidecar(&png);
    // Inline 3 (index 2): 1520 at the top to 1520 + 2 × 490 at the bottom.
    assert_eq!(s["scale"], serde_json::json!([1520.0, 2500.0]), "{s:#}");
    assert_eq!(s["clip"]["method"], "min_max", "{s:#}");
    assert_eq!((s["quantity"]["name"].as_str(), s["quantity"]["unit"].as_str()), (Some("velocity"), Some("m/s")));
    assert_eq!(s["colormap"], "heat", "{s:#}");
    assert!(s["title"].as_str().unwrap().contains("velocity"), "{s:#}");
    // As amplitudes (the default for a file no manifest lists), the same inline is clipped symmetrically.
    let o = run(&["plot", cube.to_str().unwrap(), "--inline", "3", "--bin-size", "25,25", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let s = sidecar(&png);
    let scale = s["scale"].as_array().unwrap();
    assert_eq!(scale[0].as_f64().unwrap(), -scale[1].as_f64().unwrap(), "{s:#}");
    assert_eq!(s["quantity"]["name"], "amplitude");
}

#[test]
fn domain_depth_reads_depths_from_the_time_fields_in_info_plot_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let sgy = dir.path().join("petrel_depth.sgy");
    velocity_cube(&sgy, FileFormat::Segy);
    let file = sgy.to_str().unwrap();
    // info: read as written, time; with --domain depth, depth in m.
    let o = run(&["info", file, "--json", "--no-stats"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let info: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(info["geometry"]["samples"]["domain"], "time");
    let o = run(&["info", file, "--json", "--no-stats", "--domain", "depth"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let info: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(info["geometry"]["samples"]["domain"], "depth", "{info:#}");
    assert_eq!(info["geometry"]["samples"]["unit"], "m");
    assert_eq!(info["geometry"]["samples"]["last"], 490.0);
    // plot: a depth slice needs the depth axis; the section's vertical axis is depth in m.
    let png = dir.path().join("d.png");
    let o = run(&["plot", file, "--depth", "200", "--bin-size", "25,25", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    let o =
        run(&["plot", file, "--depth", "200", "--domain", "depth", "--bin-size", "25,25", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let o =
        run(&["plot", file, "--inline", "2", "--domain", "depth", "--bin-size", "25,25", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let rows = &sidecar(&png)["rows"];
    assert_eq!((rows["name"].as_str(), rows["unit"].as_str()), (Some("depth"), Some("m")), "{rows:#}");
    assert_eq!(rows["last"], 490.0);
    // convert: the copy declares depth.
    let h5 = dir.path().join("depth.h5");
    let o = run(&["convert", file, h5.to_str().unwrap(), "--domain", "depth"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let r = seisimage::io::open(&h5, &Default::default()).unwrap();
    assert_eq!(r.geometry().samples.domain, Domain::Depth);
    assert_eq!((r.geometry().samples.step, r.geometry().samples.len), (10.0, 50));
}

#[test]
fn a_velocity_product_plots_as_velocity_by_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::velocity_product::run_gradient(dir.path());
    let png = dir.path().join("v.png");
    let o =
        run(&["plot", out.join("velocity_depth.sgy").to_str().unwrap(), "--inline", "3", "-o", png.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(png.with_extension("json")).unwrap()).unwrap();
    assert_eq!(s["quantity"]["name"], "velocity", "{s:#}");
    // From the top level's velocity to the deepest level's (295 m).
    let scale: Vec<f64> = s["scale"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(scale, [V0, v_at_depth(295.0)], "{s:#}");
}
