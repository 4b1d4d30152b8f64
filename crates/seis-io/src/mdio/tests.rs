use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{MdioReader, MdioWriteOptions, MdioWriter};
use seis_core::volume::{CoordTransform, Domain, Geometry, IndexBox, LineAxis, SampleAxis, VolumeReader};

/// A 5 × 4 × 7 geometry with coordinates and one dead trace, and values `il·100 + xl·10 + s`.
fn sample_volume() -> (Geometry, Vec<f32>) {
    let mut g = Geometry::regular(
        LineAxis::new(100, 2, 5),
        LineAxis::new(20, 1, 4),
        SampleAxis { origin: 8.0, step: 4.0, len: 7, domain: Domain::Time },
    );
    g.coords = Some(CoordTransform { origin: [1000.0, 2000.0], per_iline: [10.0, 5.0], per_xline: [-5.0, 10.0] });
    g.live[6] = false;
    let data = (0..5 * 4 * 7).map(|k| ((k / 28) * 100 + (k / 7 % 4) * 10 + k % 7) as f32).collect();
    (g, data)
}

fn written(dir: &Path) -> (PathBuf, Geometry, Vec<f32>) {
    let (g, data) = sample_volume();
    let path = dir.join("v.mdio");
    let mut w = MdioWriter::create(&path, &g, &MdioWriteOptions::default()).unwrap();
    // Two blocks, the second not on a chunk boundary of the line axes.
    w.write_inlines(0, &data[..2 * 28]).unwrap();
    w.write_inlines(2, &data[2 * 28..]).unwrap();
    w.finish().unwrap();
    (path, g, data)
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut json);
    std::fs::write(path, serde_json::to_vec(&json).unwrap()).unwrap();
}

fn open_error(path: &Path) -> String {
    match MdioReader::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_written_dataset_reads_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (path, g, data) = written(dir.path());
    let r = MdioReader::open(&path).unwrap();
    let got = r.geometry();
    assert_eq!((got.ilines, got.xlines, got.samples), (g.ilines, g.xlines, g.samples));
    let (c, want) = (got.coords.unwrap(), g.coords.unwrap());
    for (a, b) in [(c.origin, want.origin), (c.per_iline, want.per_iline), (c.per_xline, want.per_xline)] {
        assert!((a[0] - b[0]).abs() < 1e-9 && (a[1] - b[1]).abs() < 1e-9, "{c:?} != {want:?}");
    }
    assert_eq!(got.live, g.live);
    let mut all = vec![0.0; data.len()];
    r.read_all(&mut all).unwrap();
    for (k, (a, b)) in all.iter().zip(&data).enumerate() {
        let dead = k / 7 == 6;
        assert_eq!(*a, if dead { 0.0 } else { *b }, "value {k}");
    }
    let b = IndexBox { il: 1..3, xl: 2..4, s: 3..5 };
    let mut part = vec![0.0; b.len()];
    r.read_box(&b, &mut part).unwrap();
    // Trace (1, 2) is the dead one.
    assert_eq!(part, [0.0, 0.0, 133.0, 134.0, 223.0, 224.0, 233.0, 234.0]);
    // No temporary folder is left beside the dataset.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["v.mdio"]);
}

#[test]
fn an_absurd_shape_is_refused_before_anything_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ..) = written(dir.path());
    edit_json(&path.join("amplitude/zarr.json"), |j| j["shape"] = serde_json::json!([1u64 << 40, 1u64 << 40, 1000]));
    let e = open_error(&path);
    assert!(e.contains("amplitude") && e.contains("declares a shape"), "{e}");
}

#[test]
fn an_absurd_chunk_is_refused_before_it_is_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ..) = written(dir.path());
    edit_json(&path.join("amplitude/zarr.json"), |j| {
        j["chunk_grid"]["configuration"]["chunk_shape"] = serde_json::json!([1u64 << 30, 1u64 << 30, 1u64 << 30])
    });
    let e = open_error(&path);
    assert!(e.contains("amplitude: chunk_shape"), "{e}");
    edit_json(&path.join("amplitude/zarr.json"), |j| j["chunk_grid"]["name"] = "rectangular".into());
    let e = open_error(&path);
    assert!(e.contains("not \"regular\""), "{e}");
}

#[test]
fn a_missing_array_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ..) = written(dir.path());
    std::fs::remove_dir_all(path.join("crossline")).unwrap();
    let e = open_error(&path);
    assert!(e.contains("no array crossline"), "{e}");
    std::fs::remove_dir_all(path.join("amplitude")).unwrap();
    let e = open_error(&path);
    assert!(e.contains("no array amplitude"), "{e}");
}

#[test]
fn a_wrong_data_type_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ..) = written(dir.path());
    edit_json(&path.join("amplitude/zarr.json"), |j| j["data_type"] = "int16".into());
    let e = open_error(&path);
    assert!(e.contains("amplitude holds int16") && e.contains("float32"), "{e}");
}

#[test]
fn wrong_dimensions_and_axes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ..) = written(dir.path());
    edit_json(&path.join("amplitude/zarr.json"), |j| {
        j["dimension_names"] = serde_json::json!(["crossline", "inline", "time"])
    });
    let e = open_error(&path);
    assert!(e.contains("[crossline, inline, time]"), "{e}");

    let (path, ..) = written(&dir.path().join("b").tap_mkdir());
    edit_json(&path.join("inline/zarr.json"), |j| j["shape"] = serde_json::json!([4]));
    let e = open_error(&path);
    assert!(e.contains("inline has the shape [4]"), "{e}");
}

#[test]
fn metadata_that_is_not_zarr_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = open_error(dir.path());
    assert!(e.contains("no zarr.json"), "{e}");
    std::fs::write(dir.path().join("zarr.json"), "{ not json").unwrap();
    let e = open_error(dir.path());
    assert!(e.contains("not valid JSON"), "{e}");
    std::fs::write(dir.path().join("zarr.json"), vec![b' '; (super::MAX_METADATA_BYTES + 1) as usize]).unwrap();
    let e = open_error(dir.path());
    assert!(e.contains("larger than any Zarr metadata"), "{e}");
    let file = dir.path().join("zarr.json");
    let e = open_error(&file);
    assert!(e.contains("is a folder"), "{e}");
}

#[test]
fn a_dataset_is_replaced_only_by_a_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, g, data) = written(dir.path());
    // Writing again replaces the earlier dataset.
    let mut w = MdioWriter::create(&path, &g, &MdioWriteOptions::default()).unwrap();
    w.write_inlines(0, &data).unwrap();
    w.finish().unwrap();
    assert!(MdioReader::open(&path).is_ok());
    let other = dir.path().join("notes.mdio");
    std::fs::create_dir(&other).unwrap();
    assert!(MdioWriter::create(&other, &g, &MdioWriteOptions::default()).is_err());
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

/// While a dataset is written its folder has a hidden name that says this process and host, as a file's
/// does, so that the folder left by a writer that was killed is known as such and removed
/// (`output::remove_stale`); a writer dropped before it finished leaves nothing.
#[test]
fn the_folder_being_written_is_named_as_partial_files_are() {
    let dir = tempfile::tempdir().unwrap();
    let (g, _) = sample_volume();
    let w = MdioWriter::create(&dir.path().join("v.mdio"), &g, &MdioWriteOptions::default()).unwrap();
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let hidden = crate::output::hidden_name(&names[0]).unwrap_or_else(|| panic!("{} is not a hidden name", names[0]));
    assert_eq!((hidden.target, hidden.pid), ("v.mdio", std::process::id() as i32));
    assert!(hidden.host.is_some(), "{}", names[0]);
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A CRS written (a WKT) is read back as written; a grid mapping that names no array, or one that says no
/// CRS, is refused with its name.
#[test]
fn the_crs_is_written_as_a_grid_mapping_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let (g, data) = sample_volume();
    let wkt = r#"PROJCS["ED50 / UTM zone 31N",GEOGCS["ED50",AUTHORITY["EPSG","4230"]],UNIT["metre",1],AUTHORITY["EPSG","23031"]]"#;
    let crs = crate::crs::Crs { name: "ed50.wkt".into(), epsg: Some(23031), wkt: Some(wkt.into()) };
    let path = dir.path().join("v.mdio");
    let opts = MdioWriteOptions { crs: Some(crs), ..Default::default() };
    let mut w = MdioWriter::create(&path, &g, &opts).unwrap();
    w.write_inlines(0, &data).unwrap();
    w.finish().unwrap();
    let read = super::read_crs(&path).unwrap().expect("a CRS");
    assert_eq!((read.epsg, read.wkt.as_deref()), (Some(23031), Some(wkt)));
    assert!(MdioReader::open(&path).is_ok(), "the grid mapping is no obstacle to reading");
    // Without one there is none.
    let (plain, ..) = written(&dir.path().join("plain").tap_mkdir());
    assert_eq!(super::read_crs(&plain).unwrap(), None);

    edit_json(&path.join("spatial_ref/zarr.json"), |j| j["attributes"] = serde_json::json!({"spatial_ref": "UTM 31"}));
    let e = super::read_crs(&path).unwrap_err().to_string();
    assert!(e.contains("grid mapping spatial_ref") && e.contains("does not start as"), "{e}");
    edit_json(&path.join("amplitude/zarr.json"), |j| j["attributes"]["grid_mapping"] = "crs".into());
    let e = super::read_crs(&path).unwrap_err().to_string();
    assert!(e.contains("no array crs"), "{e}");
}
