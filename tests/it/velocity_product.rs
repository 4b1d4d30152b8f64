//! The velocity model as a product (`output.velocity`): the interval velocity a migration used, written on
//! the image's grid in depth and, with products in time, against two-way time. The model is a linear
//! gradient, v(z) = v0 + b z, whose two-way time and velocity at time are known in closed form:
//! t(z) = (2 / b) ln(v(z) / v0), so v(t) = v0 exp(b t / 2). The files are read back with the project's
//! readers here, and with segyio, h5py and numpy in the interop test.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli_common::{model, run, samples, write_job, write_segy};
use crate::python::python_json;
use seisimage::volume::{Domain, Geometry};

pub(crate) const V0: f64 = 1800.0;
/// The gradient, 1/s: 2600 m/s at 400 m.
const B: f64 = 2.0;

pub(crate) fn v_at_depth(z: f64) -> f64 {
    V0 + B * z.min(400.0)
}

/// The velocity at two-way time `t_ms` of the gradient, below which (400 m) 2600 m/s holds.
fn v_at_time(t_ms: f64) -> f64 {
    let t400 = 2.0 / B * (2600.0 / V0).ln();
    let t = t_ms / 1000.0;
    if t <= t400 {
        V0 * (B * t / 2.0).exp()
    } else {
        2600.0
    }
}

/// The geometry (none for NPY, which has only a shape) and values of a volume the run wrote.
fn read(path: &Path) -> (Option<Geometry>, Vec<f32>) {
    if path.extension().is_some_and(|e| e == "npy") {
        let (shape, data) = seisimage::io::npy::read(path).unwrap();
        assert_eq!(shape.iter().product::<usize>(), data.len());
        return (None, data);
    }
    let r = seisimage::io::open(path, &Default::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut data = vec![0.0; r.geometry().n_values()];
    r.read_all(&mut data).unwrap();
    (Some(r.geometry().clone()), data)
}

/// Run a job with the gradient and the velocity in every format (in depth and time), with a region of the
/// whole image in SEG-Y to compare grids with: the output folder.
pub(crate) fn run_gradient(dir: &Path) -> PathBuf {
    let m = model(8, 6, 100);
    let input = dir.join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"table\"\ndepths = [0.0, 400.0]\nvelocities = [{V0}, 2600.0]\n\n\
         [imaging]\ndz = 5.0\nnz = 60\n\n[compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\ninlines = [3]\n\
         domain = [\"depth\", \"time\"]\nvelocity = [\"segy\", \"hdf5\", \"npy\"]\n\n\
         [[output.roi]]\nname = \"all\"\nformats = [\"segy\"]\n"
    );
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("velocity_depth") && o.stdout.contains("velocity_time"), "{}", o.stdout);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    dir.join("out")
}

#[test]
fn the_velocity_product_is_the_model_on_the_image_grid_in_depth_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_gradient(dir.path());
    // In depth: on the grid of the depth products, the model at every level.
    let image = read(&out.join("roi_all.sgy")).0.unwrap();
    for ext in ["sgy", "h5", "npy"] {
        let path = out.join(format!("velocity_depth.{ext}"));
        let (g, v) = read(&path);
        if let Some(g) = g {
            assert_eq!((g.ilines, g.xlines, g.samples), (image.ilines, image.xlines, image.samples), "{ext}");
            assert_eq!(g.coords, image.coords, "{ext}");
        }
        assert_eq!(v.len(), 8 * 6 * 60, "{ext}");
        for (trace, column) in v.chunks(60).enumerate() {
            for (k, &value) in column.iter().enumerate() {
                let want = v_at_depth(5.0 * k as f64);
                assert!((value as f64 - want).abs() < 1e-3, "{ext} trace {trace} level {k}: {value} for {want}");
            }
        }
    }
    // In time: on the grid of the products in time, v(t) of the gradient.
    let image_time = read(&out.join("roi_all_time.sgy")).0.unwrap();
    for ext in ["sgy", "h5"] {
        let (g, v) = read(&out.join(format!("velocity_time.{ext}")));
        let g = g.unwrap();
        assert_eq!(g.samples.domain, Domain::Time, "{ext}");
        assert_eq!((g.ilines, g.xlines, g.samples), (image_time.ilines, image_time.xlines, image_time.samples));
        let ns = g.samples.len;
        for column in v.chunks(ns) {
            for (m, &value) in column.iter().enumerate() {
                let want = v_at_time(g.samples.value(m));
                assert!((value as f64 - want).abs() < 1.0, "{ext} {} ms: {value} for {want}", g.samples.value(m));
            }
        }
    }
    // The manifest lists them as velocity, with their axes.
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let velocity: Vec<&Value> =
        manifest["products"].as_array().unwrap().iter().filter(|p| p["kind"] == "velocity").collect();
    assert_eq!(velocity.len(), 2, "{manifest:#}");
    let depth = velocity.iter().find(|p| p["axes"]["depth"].is_object()).expect("velocity in depth");
    let time = velocity.iter().find(|p| p["axes"]["twt"].is_object()).expect("velocity in time");
    let formats = |p: &Value| -> Vec<String> {
        p["files"].as_array().unwrap().iter().map(|f| f["format"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(formats(depth), ["sgy", "h5", "npy"]);
    assert_eq!(depth["files"][0]["path"], "velocity_depth.sgy");
    assert_eq!(time["files"][0]["path"], "velocity_time.sgy");
    assert_eq!(depth["axes"]["depth"]["len"], 60);
}

#[test]
fn a_velocity_scan_writes_each_members_model() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 4, 80);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"table\"\ndepths = [0.0, 400.0]\nvelocities = [{V0}, 2600.0]\n\
         scale = [0.9, 1.1]\n\n[imaging]\ndz = 5.0\nnz = 40\n\n[compute]\nbackend = \"cpu\"\n\n[output]\ndir = \"out\"\n\
         inlines = [3]\nvelocity = [\"npy\"]\n"
    );
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let out = dir.path().join("out");
    for (suffix, factor) in [("_v090", 0.9), ("_v110", 1.1)] {
        let (_, v) = read(&out.join(format!("velocity_depth{suffix}.npy")));
        for (k, &value) in v[..40].iter().enumerate() {
            let want = factor * v_at_depth(5.0 * k as f64);
            assert!((value as f64 - want).abs() < 1e-2, "{suffix} level {k}: {value} for {want}");
        }
    }
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let scans: Vec<&Value> = manifest["products"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "velocity")
        .map(|p| &p["scan"])
        .collect();
    assert_eq!(scans.len(), 2, "{manifest:#}");
    assert!(scans.iter().all(|s| !s.is_null()), "{scans:?}");
}

#[test]
fn geotiff_is_refused_for_the_velocity_volume() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(4, 4, 50);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let text = crate::cli_common::job_text(
        &input,
        &dir.path().join("out"),
        "dz = 5.0",
        "inlines = [2]\nvelocity = [\"geotiff\"]",
    );
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("output.velocity"), "{}", o.stderr);
}

const READ_ALL: &str = r#"
import json, sys
import numpy, segyio, h5py
out = sys.argv[1]
with segyio.open(out + "/velocity_depth.sgy", "r") as f:
    segy = {"ilines": [int(i) for i in f.ilines], "xlines": [int(x) for x in f.xlines],
            "samples": [float(s) for s in f.samples], "trace": [float(v) for v in f.trace[0]]}
with h5py.File(out + "/velocity_depth.h5", "r") as f:
    h5 = {"shape": list(f["seismic"].shape), "trace": [float(v) for v in f["seismic"][2, 3, :]]}
a = numpy.load(out + "/velocity_depth.npy")
print(json.dumps({"segy": segy, "h5": h5, "npy": {"shape": list(a.shape), "trace": [float(v) for v in a[-1, -1, :]]}}))
"#;

#[test]
fn segyio_h5py_and_numpy_read_the_velocity_as_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_gradient(dir.path());
    let Some(v) = python_json("numpy, segyio, h5py", READ_ALL, &[out.as_os_str()]) else { return };
    let check = |what: &str, trace: &Value| {
        let trace = trace.as_array().unwrap();
        assert_eq!(trace.len(), 60, "{what}");
        for (k, value) in trace.iter().enumerate() {
            let (value, want) = (value.as_f64().unwrap(), v_at_depth(5.0 * k as f64));
            assert!((value - want).abs() < 1e-3, "{what} level {k}: {value} for {want}");
        }
    };
    check("segyio", &v["segy"]["trace"]);
    check("h5py", &v["h5"]["trace"]);
    check("numpy", &v["npy"]["trace"]);
    assert_eq!(v["segy"]["ilines"], serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(v["segy"]["xlines"].as_array().unwrap().len(), 6);
    let depths: Vec<f64> = v["segy"]["samples"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
    assert_eq!((depths[0], depths[1], depths.len()), (0.0, 5.0, 60));
    assert_eq!(v["h5"]["shape"], serde_json::json!([8, 6, 60]));
    assert_eq!(v["npy"]["shape"], serde_json::json!([8, 6, 60]));
}

#[test]
fn validate_prints_the_dix_table_of_rms_picks() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(4, 4, 200);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    // Two layers: 1600 m/s for 300 ms, 2400 m/s for the next 200 ms; RMS velocities from their definition.
    let (v1, v2, t1, t2) = (1600.0f64, 2400.0f64, 0.3f64, 0.5f64);
    let vrms2 = ((v1 * v1 * t1 + v2 * v2 * (t2 - t1)) / t2).sqrt();
    let text = format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"table\"\ntype = \"rms\"\ntimes = [300.0, 500.0]\n\
         velocities = [{v1}, {vrms2}]\n\n[imaging]\ndz = 5.0\n\n[compute]\nbackend = \"cpu\"\n\n[output]\n\
         dir = \"out\"\ninlines = [2]\n"
    );
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["validate", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let lines: Vec<&str> = o.stdout.lines().filter_map(|l| l.trim_start().strip_prefix("dix")).collect();
    assert!(lines[0].contains("twt (ms)") && lines[0].contains("interval (m/s)"), "{}", o.stdout);
    let rows: Vec<Vec<f64>> =
        lines[1..].iter().map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect()).collect();
    // Dix by hand: the interval velocity of each layer, its depth the sum of v Δt / 2.
    let dix2 = ((vrms2 * vrms2 * t2 - v1 * v1 * t1) / (t2 - t1)).sqrt();
    let want = [[300.0, v1, v1, v1 * t1 / 2.0], [500.0, vrms2, dix2, v1 * t1 / 2.0 + dix2 * (t2 - t1) / 2.0]];
    assert_eq!(rows.len(), 2, "{}", o.stdout);
    for (row, want) in rows.iter().zip(want) {
        for (got, want) in row.iter().zip(want) {
            assert!((got - want).abs() <= 0.05 + 1e-9, "{row:?} for {want:?}:\n{}", o.stdout);
        }
    }
}
