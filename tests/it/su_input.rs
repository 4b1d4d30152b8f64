//! Seismic Unix input: files written here byte by byte as SU lays them out (240-byte trace headers, the
//! machine's byte order, no file headers) are read by `info`, `convert` and `run` as their SEG-Y twins are,
//! and refused with the file and the trace named when their traces do not divide the file. segyio's SU
//! reader checks that the files written here are SU as others read it.

use std::path::Path;

use seisimage::volume::CoordTransform;
use serde_json::Value;

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};

/// The value of sample `k` of the trace at inline index `i`, crossline index `j`: exact in f32.
fn value(i: usize, j: usize, k: usize) -> f32 {
    (i * 10_000 + j * 100 + k) as f32 * 0.25 - 500.0
}

/// An SU file of `ilines` × `xlines` traces of `ns` samples every `dt_us` µs, little-endian: inline and
/// crossline numbers at 189/193, coordinates in centimetres (scalar -100 at 71) at 181/185.
struct Su {
    ilines: (i32, i32, usize),
    xlines: (i32, i32, usize),
    ns: u16,
    dt_us: i16,
    coords: CoordTransform,
}

impl Su {
    fn xy(&self, i: usize, j: usize) -> (f64, f64) {
        let [x, y] = self.coords.xy(i as f64, j as f64);
        (x, y)
    }

    fn bytes(&self, data: impl Fn(usize, usize, usize) -> f32) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..self.ilines.2 {
            for j in 0..self.xlines.2 {
                let mut h = [0u8; 240];
                let mut put = |byte: usize, b: &[u8]| h[byte - 1..byte - 1 + b.len()].copy_from_slice(b);
                put(29, &1i16.to_le_bytes());
                put(71, &(-100i16).to_le_bytes());
                put(115, &self.ns.to_le_bytes());
                put(117, &self.dt_us.to_le_bytes());
                put(189, &(self.ilines.0 + self.ilines.1 * i as i32).to_le_bytes());
                put(193, &(self.xlines.0 + self.xlines.1 * j as i32).to_le_bytes());
                let (x, y) = self.xy(i, j);
                put(181, &((x * 100.0).round() as i32).to_le_bytes());
                put(185, &((y * 100.0).round() as i32).to_le_bytes());
                out.extend_from_slice(&h);
                for k in 0..self.ns as usize {
                    out.extend_from_slice(&data(i, j, k).to_le_bytes());
                }
            }
        }
        out
    }

    fn trace_bytes(&self) -> usize {
        240 + 4 * self.ns as usize
    }
}

const SURVEY: Su = Su {
    ilines: (100, 2, 5),
    xlines: (20, 1, 6),
    ns: 50,
    dt_us: 4000,
    coords: CoordTransform { origin: [620_000.0, 6_080_000.0], per_iline: [12.5, 6.25], per_xline: [-6.25, 12.5] },
};

fn json(o: &crate::cli_common::Outcome) -> Value {
    assert_eq!(o.code(), Some(0), "{o:?}");
    serde_json::from_str(&o.stdout).expect("info --json prints JSON")
}

#[test]
fn su_files_convert_to_the_values_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    let su = dir.path().join("survey.su");
    std::fs::write(&su, SURVEY.bytes(value)).unwrap();
    let npy = dir.path().join("survey.npy");
    let o = run(&["convert", su.to_str().unwrap(), npy.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let (shape, data) = seisimage::io::npy::read(&npy).unwrap();
    assert_eq!(shape, [5, 6, 50]);
    for (n, &v) in data.iter().enumerate() {
        let (i, j, k) = (n / 300, n / 50 % 6, n % 50);
        assert_eq!(v, value(i, j, k), "sample {k} of inline index {i}, crossline index {j}");
    }
    // To SEG-Y, the trace headers' coordinates travel with the traces.
    let sgy = dir.path().join("survey.sgy");
    let o = run(&["convert", su.to_str().unwrap(), sgy.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let info = json(&run(&["info", sgy.to_str().unwrap(), "--json", "--no-stats"]));
    assert_eq!(info["geometry"]["ilines"]["first"], 100);
    assert_eq!(info["segy"]["x_range"][0].as_f64(), Some(SURVEY.xy(0, 5).0));
}

#[test]
fn info_describes_su_files_as_seismic_unix() {
    let dir = tempfile::tempdir().unwrap();
    let su = dir.path().join("survey.su");
    std::fs::write(&su, SURVEY.bytes(value)).unwrap();
    let info = json(&run(&["info", su.to_str().unwrap(), "--json"]));
    assert_eq!(info["container"], "su");
    assert_eq!(info["segy"]["layout"], "seismic_unix");
    assert_eq!(info["segy"]["byte_order"], "little");
    let g = &info["geometry"];
    assert_eq!(
        (g["ilines"]["first"].as_i64(), g["ilines"]["step"].as_i64(), g["ilines"]["count"].as_i64()),
        (Some(100), Some(2), Some(5))
    );
    assert_eq!((g["xlines"]["first"].as_i64(), g["xlines"]["count"].as_i64()), (Some(20), Some(6)));
    assert_eq!((g["samples"]["step"].as_f64(), g["samples"]["count"].as_i64()), (Some(4.0), Some(50)));
    let bin = g["bin_size_m"].as_array().unwrap();
    assert!(bin.iter().all(|b| (b.as_f64().unwrap() - 12.5f64.hypot(6.25)).abs() < 1e-6), "{bin:?}");
    assert_eq!(info["amplitudes"]["max"].as_f64(), Some(value(4, 5, 49) as f64));

    let o = run(&["info", su.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stdout.contains("Seismic Unix"), "{o:?}");
    let o = run(&["info", su.to_str().unwrap(), "--trace", "7"]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(!o.stdout.contains("binary file header"), "an SU file has none: {o:?}");
}

#[test]
fn su_files_whose_traces_do_not_divide_the_file_are_refused_naming_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let su = dir.path().join("cut.su");
    let mut bytes = SURVEY.bytes(value);
    bytes.truncate(bytes.len() - 100);
    std::fs::write(&su, &bytes).unwrap();
    for command in ["info", "convert"] {
        let npy = dir.path().join("cut.npy");
        let args: Vec<&str> = match command {
            "info" => vec!["info", su.to_str().unwrap()],
            _ => vec!["convert", su.to_str().unwrap(), npy.to_str().unwrap()],
        };
        let o = run(&args);
        assert_eq!(o.code(), Some(1), "{o:?}");
        assert!(
            o.stderr.contains("cut.su") && o.stderr.contains("into trace 30") && o.stderr.contains("truncated"),
            "{o:?}"
        );
        assert!(!npy.exists());
    }

    let su = dir.path().join("ragged.su");
    let mut bytes = SURVEY.bytes(value);
    let third = 2 * SURVEY.trace_bytes();
    bytes[third + 114..third + 116].copy_from_slice(&40u16.to_le_bytes());
    std::fs::write(&su, &bytes).unwrap();
    let o = run(&["info", su.to_str().unwrap()]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("ragged.su") && o.stderr.contains("trace 3 holds 40 samples"), "{o:?}");
    assert!(o.stderr.contains(&format!("byte {}", third + 114)), "{o:?}");
}

#[test]
fn a_job_on_an_su_file_gives_the_products_of_its_segy_twin() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(12, 10, 120);
    let data = samples(&m);
    let g = m.geometry();
    let (nx, ns) = (g.xlines.len, g.samples.len);
    let sgy = dir.path().join("twin.sgy");
    write_segy(&sgy, &m, &data);
    let su = Su {
        ilines: (g.ilines.first as i32, g.ilines.step as i32, g.ilines.len),
        xlines: (g.xlines.first as i32, g.xlines.step as i32, nx),
        ns: ns as u16,
        dt_us: (g.samples.step * 1000.0) as i16,
        coords: g.coords.expect("the model has coordinates"),
    };
    let su_path = dir.path().join("twin.su");
    std::fs::write(&su_path, su.bytes(|i, j, k| data[(i * nx + j) * ns + k])).unwrap();
    let output = "inlines = [6]\ndepth_slices = [150.0]\nslice_formats = [\"npy\"]\npng = false";
    let products = |input: &Path, name: &str| {
        let out = dir.path().join(name);
        let job = write_job(&dir.path().join(format!("{name}.toml")), &job_text(input, &out, "dz = 10.0", output));
        let o = run(&["run", job.to_str().unwrap()]);
        assert_eq!(o.code(), Some(0), "{o:?}");
        ["inline_6.npy", "depth_150m.npy"].map(|f| seisimage::io::npy::read(&out.join(f)).unwrap())
    };
    let from_su = products(&su_path, "su");
    assert!(from_su[0].1.iter().any(|&v| v != 0.0));
    assert_eq!(from_su, products(&sgy, "segy"));
}

const SEGYIO_SU: &str = r#"
import json, sys
import numpy as np
import segyio, segyio.su
with segyio.su.open(sys.argv[1], endian="little") as f:
    cube = segyio.tools.cube(f)
    print(json.dumps({"ilines": [int(v) for v in f.ilines], "xlines": [int(v) for v in f.xlines],
                      "samples": [float(v) for v in f.samples], "cube": cube.astype(float).ravel().tolist()}))
"#;

#[test]
fn segyio_reads_the_su_files_of_these_tests_as_su() {
    let dir = tempfile::tempdir().unwrap();
    let su = dir.path().join("survey.su");
    std::fs::write(&su, SURVEY.bytes(value)).unwrap();
    let Some(v) = crate::python::python_json("segyio, segyio.su, numpy", SEGYIO_SU, &[su.as_os_str()]) else {
        return;
    };
    assert_eq!(v["ilines"], serde_json::json!([100, 102, 104, 106, 108]));
    assert_eq!(v["xlines"], serde_json::json!([20, 21, 22, 23, 24, 25]));
    assert_eq!(v["samples"][1].as_f64(), Some(4.0));
    let cube: Vec<f32> = v["cube"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
    let expected: Vec<f32> = (0..5 * 6 * 50).map(|n| value(n / 300, n / 50 % 6, n % 50)).collect();
    assert_eq!(cube, expected);
}
