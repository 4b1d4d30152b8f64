//! The CRS a job names (`input.crs`) and the survey's coordinates reach every output that can hold them:
//! the manifest, HDF5 products (a CF `spatial_ref` grid mapping and 2-D `cdp_x`/`cdp_y` over the inline
//! and crossline dimension scales, read back with h5py and xarray) and SEG-Y text headers (segyio). A CRS
//! that is neither an EPSG code nor a readable WKT file is a mistake in the job (exit 2 at `input.crs`).

use std::path::Path;

use serde_json::Value;

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};
use crate::python::python_json;

const H5PY_READ: &str = r#"
import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    s, ref = f["seismic"], f["spatial_ref"]
    text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    print(json.dumps({
        "grid_mapping": text(s.attrs["grid_mapping"]),
        "coordinates": text(s.attrs["coordinates"]),
        "spatial_ref": text(ref.attrs["spatial_ref"]),
        "crs_wkt": text(ref.attrs["crs_wkt"]) if "crs_wkt" in ref.attrs else None,
        "epsg": int(ref.attrs["epsg"]),
        "cdp_x": f["cdp_x"][()].tolist(),
        "cdp_y": f["cdp_y"][()].tolist(),
        "cdp_x_dims": [d.label for d in f["cdp_x"].dims],
    }))
"#;

const XARRAY_READ: &str = r#"
import json, sys
import xarray
with xarray.open_dataset(sys.argv[1], engine="h5netcdf", phony_dims="sort") as ds:
    v = ds["seismic"]
    print(json.dumps({
        "dims": list(v.dims),
        "coords": sorted(v.coords),
        "cdp_x_dims": list(ds["cdp_x"].dims),
        "first_x": float(ds["cdp_x"].isel(iline=0, xline=0)),
        "grid_mapping": v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping"),
        "spatial_ref": ds["spatial_ref"].attrs["spatial_ref"],
    }))
"#;

const SEGYIO_TEXT: &str = r#"
import json, sys
import segyio
with segyio.open(sys.argv[1], "r", ignore_geometry=True) as f:
    print(json.dumps({"text": segyio.tools.wrap(f.text[0])}))
"#;

const WKT: &str = r#"PROJCS["ED50 / UTM zone 31N",GEOGCS["ED50",DATUM["European_Datum_1950",SPHEROID["International 1924",6378388,297]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4230"]],PROJECTION["Transverse_Mercator"],PARAMETER["central_meridian",3],PARAMETER["scale_factor",0.9996],PARAMETER["false_easting",500000],PARAMETER["false_northing",0],UNIT["metre",1],AUTHORITY["EPSG","23031"]]"#;

/// Run a job on a small survey with `crs` as `input.crs`: its output folder, and the survey's geometry.
fn run_with_crs(dir: &Path, crs: &str) -> (std::path::PathBuf, seisimage::volume::Geometry) {
    let m = model(8, 6, 100);
    let input = dir.join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let output = "inlines = [4]\nslice_formats = [\"hdf5\", \"segy\"]\npng = false";
    let text = job_text(&input, &out, "dz = 10.0", output).replace("[input]\n", &format!("[input]\ncrs = {crs:?}\n"));
    let job = write_job(&dir.join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    (out, m.geometry().clone())
}

#[test]
fn an_epsg_code_reaches_the_manifest_hdf5_and_segy() {
    let dir = tempfile::tempdir().unwrap();
    let (out, g) = run_with_crs(dir.path(), "EPSG:23031");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["input"]["crs"]["epsg"], 23031, "{}", manifest["input"]);
    assert_eq!(manifest["config"]["input"]["crs"], "EPSG:23031");

    let h5 = out.join("inline_4.h5");
    let coords = g.coords.expect("the model has coordinates");
    if let Some(v) = python_json("h5py", H5PY_READ, &[h5.as_os_str()]) {
        assert_eq!(v["grid_mapping"], "spatial_ref");
        assert_eq!(v["coordinates"], "cdp_x cdp_y");
        assert_eq!(
            (v["spatial_ref"].as_str(), v["epsg"].as_i64(), v["crs_wkt"].as_str()),
            (Some("EPSG:23031"), Some(23031), None)
        );
        assert_eq!(v["cdp_x_dims"], serde_json::json!(["iline", "xline"]));
        // Inline 4 is the fourth of the survey (inlines from 1): its bins are at index 3.
        for j in 0..g.xlines.len {
            let [x, y] = coords.xy(3.0, j as f64);
            assert_eq!(
                (v["cdp_x"][0][j].as_f64(), v["cdp_y"][0][j].as_f64()),
                (Some(x), Some(y)),
                "crossline index {j}"
            );
        }
    }
    if let Some(v) = python_json("xarray, h5netcdf", XARRAY_READ, &[h5.as_os_str()]) {
        assert_eq!(v["dims"], serde_json::json!(["iline", "xline", "depth"]));
        assert!(v["coords"].as_array().unwrap().iter().any(|c| c == "cdp_x"), "{v}");
        assert!(v["coords"].as_array().unwrap().iter().any(|c| c == "cdp_y"), "{v}");
        assert_eq!(v["cdp_x_dims"], serde_json::json!(["iline", "xline"]));
        assert_eq!(v["first_x"].as_f64(), Some(coords.xy(3.0, 0.0)[0]));
        assert_eq!((v["grid_mapping"].as_str(), v["spatial_ref"].as_str()), (Some("spatial_ref"), Some("EPSG:23031")));
    }
    let sgy = out.join("inline_4.sgy");
    if let Some(v) = python_json("segyio", SEGYIO_TEXT, &[sgy.as_os_str()]) {
        assert!(v["text"].as_str().unwrap().contains("CRS OF CDP X/Y: EPSG:23031"), "{}", v["text"]);
    }
}

#[test]
fn a_wkt_file_is_read_from_beside_the_job_and_its_code_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ed50.wkt"), WKT).unwrap();
    let (out, _) = run_with_crs(dir.path(), "ed50.wkt");
    let h5 = out.join("inline_4.h5");
    if let Some(v) = python_json("h5py", H5PY_READ, &[h5.as_os_str()]) {
        assert_eq!(
            (v["spatial_ref"].as_str(), v["crs_wkt"].as_str(), v["epsg"].as_i64()),
            (Some(WKT), Some(WKT), Some(23031))
        );
    }
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["input"]["crs"]["wkt"], WKT);
}

#[test]
fn a_crs_that_is_neither_a_code_nor_a_wkt_file_is_refused_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(4, 4, 50);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    std::fs::write(dir.path().join("notes.txt"), "UTM 31").unwrap();
    for (crs, why) in
        [("EPSG:utm", "not an EPSG code"), ("missing.wkt", "missing.wkt"), ("notes.txt", "does not start as")]
    {
        let text = job_text(&input, &dir.path().join("out"), "", "inlines = [2]")
            .replace("[input]\n", &format!("[input]\ncrs = {crs:?}\n"));
        let job = write_job(&dir.path().join("job.toml"), &text);
        for command in ["validate", "run"] {
            let o = run(&[command, job.to_str().unwrap()]);
            assert_eq!(o.code(), Some(2), "{command} {crs}: {o:?}");
            assert!(o.stderr.contains("input.crs") && o.stderr.contains(why), "{command} {crs}: {o:?}");
        }
    }
}
