//! The CRS of an MDIO dataset: `convert --crs` records one in what it writes (MDIO read back with
//! multidimio, HDF5 with h5py, SEG-Y's text header with segyio), a `convert` from MDIO carries it on, and a
//! job on an MDIO input takes it as its CRS when `input.crs` is not given, with a warning when it is and
//! differs.

use std::path::Path;

use serde_json::Value;

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};
use crate::python::{python_json, python_json_from};

const MDIO_CRS: &str = r#"
import json, sys
import mdio
ds = mdio.open_mdio(sys.argv[1])
v = ds["amplitude"]
print(json.dumps({
    "grid_mapping": v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping"),
    "attrs": {k: (int(x) if k == "epsg" else str(x)) for k, x in ds["spatial_ref"].attrs.items()},
}))
"#;

const H5_CRS: &str = r#"
import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    print(json.dumps({"grid_mapping": text(f["seismic"].attrs["grid_mapping"]),
                      "spatial_ref": text(f["spatial_ref"].attrs["spatial_ref"]),
                      "epsg": int(f["spatial_ref"].attrs["epsg"])}))
"#;

const SEGY_TEXT: &str = r#"
import json, sys
import segyio
with segyio.open(sys.argv[1], "r", ignore_geometry=True) as f:
    print(json.dumps({"text": segyio.tools.wrap(f.text[0])}))
"#;

const WKT: &str = r#"PROJCS["ED50 / UTM zone 31N",GEOGCS["ED50",DATUM["European_Datum_1950",SPHEROID["International 1924",6378388,297]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4230"]],PROJECTION["Transverse_Mercator"],UNIT["metre",1],AUTHORITY["EPSG","23031"]]"#;

fn convert(args: &[&Path], more: &[&str]) -> crate::cli_common::Outcome {
    let mut all: Vec<&str> = vec!["convert"];
    all.extend(args.iter().map(|p| p.to_str().unwrap()));
    all.extend(more);
    run(&all)
}

/// A survey as SEG-Y, and as MDIO recording `crs` (made by `convert --crs`).
fn survey(dir: &Path, crs: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let m = model(6, 5, 80);
    let segy = dir.join("survey.sgy");
    write_segy(&segy, &m, &samples(&m));
    let mdio = dir.join("survey.mdio");
    let o = convert(&[&segy, &mdio], &["--crs", crs]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    (segy, mdio)
}

#[test]
fn convert_records_the_crs_it_is_given_and_carries_an_mdio_inputs_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ed50.wkt"), WKT).unwrap();
    let (segy, mdio) = survey(dir.path(), "EPSG:23031");
    if let Some(v) = python_json_from("SEISIMAGE_MDIO_PYTHONPATH", "mdio", MDIO_CRS, &[mdio.as_os_str()]) {
        assert_eq!(v["grid_mapping"], "spatial_ref");
        assert_eq!(
            (v["attrs"]["spatial_ref"].as_str(), v["attrs"]["epsg"].as_i64()),
            (Some("EPSG:23031"), Some(23031))
        );
    }
    // From MDIO without --crs: the input's CRS, in HDF5 and in the SEG-Y text header.
    let (h5, sgy) = (dir.path().join("carried.h5"), dir.path().join("carried.sgy"));
    for out in [&h5, &sgy] {
        let o = convert(&[&mdio, out], &[]);
        assert_eq!(o.code(), Some(0), "{o:?}");
    }
    if let Some(v) = python_json("h5py", H5_CRS, &[h5.as_os_str()]) {
        assert_eq!((v["grid_mapping"].as_str(), v["spatial_ref"].as_str()), (Some("spatial_ref"), Some("EPSG:23031")));
        assert_eq!(v["epsg"], 23031);
    }
    if let Some(v) = python_json("segyio", SEGY_TEXT, &[sgy.as_os_str()]) {
        assert!(v["text"].as_str().unwrap().contains("CRS OF CDP X/Y: EPSG:23031"), "{}", v["text"]);
    }
    // A WKT file, relative to the current folder, into MDIO: its text and code.
    let wkt_mdio = dir.path().join("wkt.mdio");
    let mut cmd = crate::cli_common::seisimage();
    cmd.current_dir(dir.path()).args(["convert", "survey.sgy", "wkt.mdio", "--crs", "ed50.wkt"]);
    let o = crate::cli_common::run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    if let Some(v) = python_json_from("SEISIMAGE_MDIO_PYTHONPATH", "mdio", MDIO_CRS, &[wkt_mdio.as_os_str()]) {
        assert_eq!((v["attrs"]["crs_wkt"].as_str(), v["attrs"]["epsg"].as_i64()), (Some(WKT), Some(23031)));
    }
    // Anything else is a usage mistake, named by the option.
    let o = convert(&[&segy, &dir.path().join("bad.mdio")], &["--crs", "EPSG:utm"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("--crs"), "{}", o.stderr);
    assert!(!dir.path().join("bad.mdio").exists());
}

#[test]
fn a_job_on_an_mdio_input_takes_its_crs_and_warns_when_input_crs_differs() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mdio) = survey(dir.path(), "EPSG:23031");
    let manifest_crs = |out: &Path| -> Value {
        let text = std::fs::read_to_string(out.join("manifest.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["input"]["crs"].clone()
    };
    for (given, epsg, warned) in
        [(None, 23031, false), (Some("EPSG:23031"), 23031, false), (Some("EPSG:32631"), 32631, true)]
    {
        let out = dir.path().join(format!("out_{epsg}_{warned}"));
        let mut text = job_text(&mdio, &out, "dz = 10.0", "inlines = [3]\nslice_formats = [\"hdf5\"]\npng = false");
        if let Some(crs) = given {
            text = text.replace("[input]\n", &format!("[input]\ncrs = {crs:?}\n"));
        }
        let job = write_job(&dir.path().join("job.toml"), &text);
        let o = run(&["run", job.to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        assert_eq!(manifest_crs(&out)["epsg"], epsg, "input.crs = {given:?}");
        let warning = o.stderr.contains("records EPSG:23031");
        assert_eq!(warning, warned, "input.crs = {given:?}: {}", o.stderr);
        if let Some(v) = python_json("h5py", H5_CRS, &[out.join("inline_3.h5").as_os_str()]) {
            assert_eq!(v["epsg"], epsg);
        }
    }
}
