//! Interoperability with independent readers and writers: h5py for HDF5 volumes, numpy for NPY arrays.
//!
//! Python runs with `PYTHONPATH` set to `$SEISIMAGE_PYTHONPATH`. Where h5py or numpy cannot be imported the
//! tests say why and pass, unless `SEISIMAGE_INTEROP_TESTS=1` (as in CI), where that is a failure.
//! Expected values come from formulas evaluated on both sides, never from our own reader.

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use seisimage::io::hdf5::{write_volume, Hdf5Options, Hdf5Reader, Hdf5WriteOptions};
use seisimage::io::npy;
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis, Volume, VolumeReader};

/// Run `script` with `args` under python3; its standard output parsed as JSON, or `None` when the
/// reference packages are missing and the interoperability tests are optional.
fn python(script: &str, args: &[&Path]) -> Option<Value> {
    let run = |code: &str| {
        let mut cmd = crate::cli_common::child("python3");
        if let Some(path) = std::env::var_os("SEISIMAGE_PYTHONPATH") {
            cmd.env("PYTHONPATH", path);
        }
        cmd.arg("-c").arg(code).args(args).output()
    };
    let why = match run("import h5py, numpy") {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default().to_string()),
        Err(e) => Some(format!("python3 did not start: {e}")),
    };
    if let Some(why) = why {
        let required = std::env::var("SEISIMAGE_INTEROP_TESTS").is_ok_and(|v| v == "1");
        assert!(!required, "SEISIMAGE_INTEROP_TESTS=1 but h5py and numpy cannot be imported: {why}");
        eprintln!("skipping: h5py and numpy cannot be imported (set SEISIMAGE_PYTHONPATH): {why}");
        return None;
    }
    let out = run(script).expect("python3 started a moment ago");
    assert!(out.status.success(), "the Python side failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the Python side prints JSON"))
}

/// The same formula as in the Python scripts below; exact in f32.
fn value(i: usize, j: usize, k: usize) -> f32 {
    (i * 10_000 + j * 100 + k) as f32 * 0.25 - 500.0
}

fn sha256_le(values: &[f32]) -> String {
    let mut h = Sha256::new();
    for v in values {
        h.update(v.to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn h5py_reads_our_volume_its_labelled_axes_and_live_mask() {
    let mut g = Geometry::regular(
        LineAxis::new(1, 1, 4),
        LineAxis::new(1000, 5, 6),
        SampleAxis { origin: 250.0, step: 12.5, len: 9, domain: Domain::Depth },
    );
    g.coords =
        Some(CoordTransform { origin: [605_835.5, 6_073_556.25], per_iline: [0.0, 25.0], per_xline: [25.0, 0.0] });
    for t in [0, 7, 23] {
        g.live[t] = false;
    }
    let [ni, nj, nk] = g.shape();
    let live = &g.live;
    let data: Vec<f32> = (0..ni)
        .flat_map(|i| (0..nj).map(move |j| (i, j)))
        .flat_map(|(i, j)| (0..nk).map(move |k| if live[i * nj + j] { value(i, j, k) } else { 0.0 }))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ours.h5");
    let opts = Hdf5WriteOptions { chunk: Some([2, 3, 4]), compression: Some(4), ..Default::default() };
    write_volume(&path, &g, &data, &opts).unwrap();

    let script = r#"
import sys, json, hashlib, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
ds = f["seismic"]
plain = lambda v: v.tolist() if hasattr(v, "tolist") else v
print(json.dumps({
    "shape": ds.shape, "dtype": str(ds.dtype), "chunks": ds.chunks,
    "compression": [ds.compression, ds.compression_opts, ds.shuffle],
    "sha256": hashlib.sha256(np.ascontiguousarray(ds[...], dtype="<f4").tobytes()).hexdigest(),
    "labels": [d.label for d in ds.dims],
    "scales": [[d[0].name, h5py.h5ds.is_scale(d[0].id), d[0][...].tolist()] for d in ds.dims],
    "depth_units": f["depth"].attrs["units"],
    "attrs": {k: plain(v) for k, v in ds.attrs.items() if not k.startswith("DIMENSION_")},
    "live": f["live"][...].tolist(),
    "live_scales": [d[0].name for d in f["live"].dims],
}))
"#;
    let Some(got) = python(script, &[&path]) else { return };
    assert_eq!(got["shape"], json!([4, 6, 9]));
    assert_eq!(got["dtype"], "float32");
    assert_eq!(got["chunks"], json!([2, 3, 4]));
    assert_eq!(got["compression"], json!(["gzip", 4, true]));
    assert_eq!(got["sha256"], sha256_le(&data), "the values h5py reads are the formula's");
    assert_eq!(got["labels"], json!(["iline", "xline", "depth"]));
    let depths: Vec<f64> = (0..nk).map(|k| 250.0 + 12.5 * k as f64).collect();
    assert_eq!(
        got["scales"],
        json!([
            ["/iline", true, [1, 2, 3, 4]],
            ["/xline", true, [1000, 1005, 1010, 1015, 1020, 1025]],
            ["/depth", true, depths]
        ])
    );
    assert_eq!(got["depth_units"], "m");
    assert_eq!(
        got["attrs"],
        json!({
            "domain": "depth", "sample_unit": "m", "sample_origin": 250.0, "sample_step": 12.5,
            "iline_first": 1, "iline_step": 1, "xline_first": 1000, "xline_step": 5,
            "coord_origin": [605_835.5, 6_073_556.25], "coord_per_iline": [0.0, 25.0], "coord_per_xline": [25.0, 0.0],
            "coordinates": "cdp_x cdp_y",
        })
    );
    let live: Vec<Vec<u8>> = g.live.chunks(nj).map(|row| row.iter().map(|&l| u8::from(l)).collect()).collect();
    assert_eq!(got["live"], json!(live));
    assert_eq!(got["live_scales"], json!(["/iline", "/xline"]));
}

#[test]
fn we_read_volumes_h5py_wrote_in_the_layouts_we_accept() {
    let dir = tempfile::tempdir().unwrap();
    let with_attrs = dir.path().join("attrs.h5");
    let with_axes = dir.path().join("axes.h5");
    // First: float64 values, the axes as attributes of the dataset (variable-length strings).
    // Second: int16 values in a group, axis datasets of other types, the time axis in seconds with a
    // fixed-length unit string, a boolean live mask.
    let script = r#"
import sys, h5py, numpy as np
i, j, k = np.meshgrid(np.arange(3), np.arange(4), np.arange(5), indexing="ij")
with h5py.File(sys.argv[1], "w") as f:
    ds = f.create_dataset("seismic", data=(i * 10000 + j * 100 + k) * 0.25 - 500.0, chunks=(2, 2, 5), compression="gzip")
    ds.attrs.update({"iline_first": np.int32(500), "iline_step": np.int32(10), "xline_first": 7, "xline_step": 1,
                     "sample_origin": 0.0, "sample_step": 4.0, "sample_unit": "ms", "domain": "time"})
with h5py.File(sys.argv[2], "w") as f:
    g = f.create_group("survey")
    g.create_dataset("cube", data=(i * 100 + j * 10 + k).astype(np.int16))
    g["iline"] = np.array([21, 23, 25], dtype=np.int16)
    g["xline"] = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    g["twt"] = np.array([0.5, 0.502, 0.504, 0.506, 0.508], dtype=np.float32)
    g["twt"].attrs["units"] = np.bytes_("s")
    g["live"] = np.array([[True] * 4, [True, False, True, True], [True] * 4])
print("{}")
"#;
    if python(script, &[&with_attrs, &with_axes]).is_none() {
        return;
    }

    let reader = Hdf5Reader::open(&with_attrs, &Hdf5Options::default()).unwrap();
    let g = reader.geometry();
    assert_eq!((g.ilines, g.xlines), (LineAxis::new(500, 10, 3), LineAxis::new(7, 1, 4)));
    assert_eq!(g.samples, SampleAxis { origin: 0.0, step: 4.0, len: 5, domain: Domain::Time });
    assert_eq!(reader.summary().dtype, "float64");
    let expected: Vec<f32> =
        (0..3).flat_map(|i| (0..4).flat_map(move |j| (0..5).map(move |k| value(i, j, k)))).collect();
    assert_eq!(Volume::read(&reader).unwrap().data, expected);

    let reader = Hdf5Reader::open(&with_axes, &Hdf5Options { dataset: "/survey/cube".into() }).unwrap();
    let g = reader.geometry();
    assert_eq!((g.ilines, g.xlines), (LineAxis::new(21, 2, 3), LineAxis::new(1, 1, 4)));
    assert_eq!((g.samples.domain, g.samples.len), (Domain::Time, 5));
    assert!((g.samples.origin - 500.0).abs() < 1e-3 && (g.samples.step - 2.0).abs() < 1e-4, "{:?}", g.samples);
    assert_eq!(g.n_missing(), 1);
    assert!(!g.live[4 + 1]);
    let expected: Vec<f32> =
        (0..3).flat_map(|i| (0..4).flat_map(move |j| (0..5).map(move |k| (i * 100 + j * 10 + k) as f32))).collect();
    assert_eq!(Volume::read(&reader).unwrap().data, expected);
}

#[test]
fn numpy_loads_our_npy_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("cube.npy");
    let line = dir.path().join("line.npy");
    let cube_values: Vec<f32> =
        (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| value(i, j, k)))).collect();
    npy::write(&cube, &[2, 3, 4], &cube_values).unwrap();
    npy::write(&line, &[7], &[0.5, -1.0, 1e-3, 3.0e38, -0.0, 2.0, 1.0 / 3.0]).unwrap();
    let script = r#"
import sys, json, numpy as np
i, j, k = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
cube = np.load(sys.argv[1])
line = np.load(sys.argv[2])
expected = np.array([0.5, -1.0, 1e-3, 3.0e38, -0.0, 2.0, 1.0 / 3.0], dtype=np.float32)
print(json.dumps({
    "cube": [cube.shape, str(cube.dtype), cube.flags["C_CONTIGUOUS"],
             bool(np.array_equal(cube, ((i * 10000 + j * 100 + k) * 0.25 - 500.0).astype(np.float32)))],
    "line": [line.shape, str(line.dtype), bool(np.array_equal(line, expected))],
}))
"#;
    let Some(got) = python(script, &[&cube, &line]) else { return };
    assert_eq!(got["cube"], json!([[2, 3, 4], "float32", true, true]));
    assert_eq!(got["line"], json!([[7], "float32", true]));
}

#[test]
fn we_load_arrays_numpy_saved() {
    let dir = tempfile::tempdir().unwrap();
    let [f4, f8, fortran] = ["f4.npy", "f8.npy", "fortran.npy"].map(|n| dir.path().join(n));
    let script = r#"
import sys, numpy as np
i, j, k = np.meshgrid(np.arange(3), np.arange(2), np.arange(6), indexing="ij")
cube = (i * 10000 + j * 100 + k) * 0.25 - 500.0
np.save(sys.argv[1], cube.astype(np.float32))
np.save(sys.argv[2], cube.reshape(-1))
np.save(sys.argv[3], np.asfortranarray(cube[:, :, 0].astype(np.float32)))
print("{}")
"#;
    if python(script, &[&f4, &f8, &fortran]).is_none() {
        return;
    }
    let expected: Vec<f32> =
        (0..3).flat_map(|i| (0..2).flat_map(move |j| (0..6).map(move |k| value(i, j, k)))).collect();
    assert_eq!(npy::read(&f4).unwrap(), (vec![3, 2, 6], expected.clone()));
    assert_eq!(npy::read(&f8).unwrap(), (vec![36], expected));
    let e = npy::read(&fortran).unwrap_err().to_string();
    assert!(e.contains("Fortran order"), "{e}");
}
