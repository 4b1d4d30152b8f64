//! Products written as MDIO (`"mdio"` among `output.slice_formats` and an ROI's `formats`), opened by the
//! MDIO Python package (`multidimio`): their values are those the same run wrote as NPY, their line
//! numbers, sample axis and coordinates those of the product's box of the survey, as HDF5 (read with
//! h5py) and the survey's coordinates say.

use std::path::Path;

use serde_json::Value;

use crate::cli_common::{job_text, model, names, run, samples, write_job, write_segy};

use crate::python::{python_json, python_json_from};

const MDIO_READ: &str = r#"
import json, sys
import numpy as np
import mdio
ds = mdio.open_mdio(sys.argv[1])
v = ds["amplitude"]
dims = list(v.dims)
ref = ds["spatial_ref"].attrs if "spatial_ref" in ds.variables else {}
print(json.dumps({
    "dims": dims,
    "shape": list(v.shape),
    "values": v.values.astype("<f8").ravel().tolist(),
    "npy": np.load(sys.argv[2]).astype("<f8").ravel().tolist(),
    "inline": [int(x) for x in ds["inline"].values],
    "crossline": [int(x) for x in ds["crossline"].values],
    "samples": [float(x) for x in ds[dims[2]].values],
    "sample_units": ds[dims[2]].attrs.get("unitsV1"),
    "cdp_x": ds["cdp_x"].values.ravel().tolist(),
    "cdp_y": ds["cdp_y"].values.ravel().tolist(),
    "grid_mapping": v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping"),
    "spatial_ref": ref.get("spatial_ref"),
    "epsg": ref.get("epsg"),
}))
"#;

const H5_AXES: &str = r#"
import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    name = next(n for n in ("depth", "twt", "time") if n in f)
    print(json.dumps({"samples": f[name][()].tolist(), "iline": f["iline"][()].tolist(), "xline": f["xline"][()].tolist()}))
"#;

/// Run a job on an 8 × 6 survey with an inline, a depth slice and an ROI (in depth and in time) written
/// as MDIO, NPY and HDF5: the output folder and the survey's geometry.
fn run_job(dir: &Path) -> (std::path::PathBuf, seisimage::volume::Geometry) {
    let m = model(8, 6, 100);
    let input = dir.join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let output = "domain = [\"depth\", \"time\"]\ninlines = [4]\ndepth_slices = [50.0]\n\
                  slice_formats = [\"mdio\", \"npy\", \"hdf5\"]\npng = false\n\n\
                  [[output.roi]]\nname = \"box\"\niline = [2, 6]\nxline = [3, 5]\ndepth = [50.0, 120.0]\n\
                  formats = [\"npy\", \"mdio\", \"hdf5\"]";
    let text = job_text(&input, &out, "dz = 10.0", output).replace("[input]\n", "[input]\ncrs = \"EPSG:23031\"\n");
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    (out, m.geometry().clone())
}

#[test]
fn mdio_opens_the_products_a_run_writes_as_mdio() {
    let dir = tempfile::tempdir().unwrap();
    let (out, g) = run_job(dir.path());
    let left = names(&out);
    assert!(!left.iter().any(|n| n.starts_with('.')), "hidden entries left: {left:?}");
    let coords = g.coords.expect("the model has coordinates");
    // (stem, inline numbers, crossline numbers, the sample dimension and its unit)
    type Expected = (&'static str, Vec<i64>, Vec<i64>, &'static str, Value);
    let products: [Expected; 5] = [
        ("inline_4", vec![4], (1..=6).collect(), "depth", serde_json::json!({"length": "m"})),
        ("inline_4_time", vec![4], (1..=6).collect(), "time", serde_json::json!({"time": "ms"})),
        ("depth_50m", (1..=8).collect(), (1..=6).collect(), "depth", serde_json::json!({"length": "m"})),
        ("roi_box", (2..=6).collect(), (3..=5).collect(), "depth", serde_json::json!({"length": "m"})),
        ("roi_box_time", (2..=6).collect(), (3..=5).collect(), "time", serde_json::json!({"time": "ms"})),
    ];
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let listed: Vec<&Value> =
        manifest["products"].as_array().unwrap().iter().flat_map(|p| p["files"].as_array().unwrap()).collect();
    for (stem, ilines, xlines, sample_dim, unit) in products {
        let (mdio, npy, h5) =
            (out.join(format!("{stem}.mdio")), out.join(format!("{stem}.npy")), out.join(format!("{stem}.h5")));
        assert!(mdio.join("zarr.json").is_file(), "{stem}.mdio is not a dataset: {left:?}");
        let record = listed.iter().find(|f| f["path"] == format!("{stem}.mdio")).expect("the manifest lists it");
        assert_eq!(record["format"], "mdio");
        // The folder's checksum is what the shell computes from its files, as docs/formats.md says.
        let mut sh = crate::cli_common::child("sh");
        sh.arg("-c")
            .arg("cd \"$1\" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum")
            .arg("sh")
            .arg(&mdio);
        let o = crate::cli_common::run_command(&mut sh);
        assert_eq!(o.code(), Some(0), "{o:?}");
        assert_eq!(o.stdout.split_whitespace().next(), record["sha256"].as_str(), "{stem}: sha256");
        let Some(v) =
            python_json_from("SEISIMAGE_MDIO_PYTHONPATH", "mdio", MDIO_READ, &[mdio.as_os_str(), npy.as_os_str()])
        else {
            return;
        };
        assert_eq!(v["dims"], serde_json::json!(["inline", "crossline", sample_dim]), "{stem}");
        assert_eq!(v["values"], v["npy"], "{stem}: the values differ from the NPY file's");
        assert!(v["values"].as_array().unwrap().iter().any(|x| x.as_f64() != Some(0.0)), "{stem} is all zeros");
        assert_eq!(
            (v["inline"].clone(), v["crossline"].clone()),
            (serde_json::json!(ilines), serde_json::json!(xlines))
        );
        assert_eq!(v["sample_units"], unit, "{stem}");
        if let Some(h) = python_json("h5py", H5_AXES, &[h5.as_os_str()]) {
            assert_eq!(v["samples"], h["samples"], "{stem}: the sample axis differs from the HDF5 file's");
            assert_eq!((h["iline"].clone(), h["xline"].clone()), (v["inline"].clone(), v["crossline"].clone()));
        }
        if stem.starts_with("roi_box") {
            let depths: Vec<f64> = (5..=12).map(|k| k as f64 * 10.0).collect();
            if sample_dim == "depth" {
                assert_eq!(v["samples"], serde_json::json!(depths));
            }
        }
        let nx = xlines.len();
        for (i, il) in ilines.iter().enumerate() {
            for (j, xl) in xlines.iter().enumerate() {
                // Inline and crossline numbers start at 1: the survey's indices are one less.
                let [x, y] = coords.xy((il - 1) as f64, (xl - 1) as f64);
                let k = i * nx + j;
                assert_eq!((v["cdp_x"][k].as_f64(), v["cdp_y"][k].as_f64()), (Some(x), Some(y)), "{stem} ({il}, {xl})");
            }
        }
        assert_eq!((v["grid_mapping"].as_str(), v["spatial_ref"].as_str()), (Some("spatial_ref"), Some("EPSG:23031")));
        assert_eq!(v["epsg"].as_i64(), Some(23031));
    }
}
