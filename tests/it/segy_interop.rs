//! Files written by seisimage open in segyio (an independent reader) with the same geometry and values.
//!
//! Python runs with `PYTHONPATH` from `SEISIMAGE_PYTHONPATH`. Without segyio the test says why and passes,
//! unless `SEISIMAGE_INTEROP_TESTS=1` (as in CI), where a missing segyio is a failure.

use std::path::Path;

use seisimage::io::segy::{write_volume, ByteOrder, SegyWriteOptions, WriteFormat};
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis};
use serde_json::Value;
use sha2::{Digest, Sha256};

const SEGYIO_READ: &str = r#"
import hashlib, json, sys
import numpy as np
import segyio
path, endian = sys.argv[1], sys.argv[2]
with segyio.open(path, "r", endian=endian) as f:
    cube = segyio.tools.cube(f)
    h = f.header[0]
    print(json.dumps({
        "ilines": [int(v) for v in f.ilines],
        "xlines": [int(v) for v in f.xlines],
        "samples": [float(v) for v in f.samples],
        "format": int(f.format),
        "sorting": int(f.sorting),
        "shape": list(cube.shape),
        "sha256": hashlib.sha256(np.ascontiguousarray(cube, dtype="<f4").tobytes()).hexdigest(),
        "first_header": {str(k): int(h[k]) for k in (29, 71, 109, 115, 117, 181, 185, 189, 193, 215)},
        "text": f.text[0].decode("ascii", "replace"),
    }))
"#;

/// segyio's view of a file, or `None` when segyio cannot be imported here (and that is allowed).
fn segyio_reads(path: &Path, little: bool) -> Option<Value> {
    let mut python = crate::cli_common::child("python3");
    if let Some(p) = std::env::var_os("SEISIMAGE_PYTHONPATH") {
        python.env("PYTHONPATH", p);
    }
    let required = std::env::var("SEISIMAGE_INTEROP_TESTS").is_ok_and(|v| v == "1");
    let out = python.arg("-c").arg(SEGYIO_READ).arg(path).arg(if little { "little" } else { "big" }).output();
    let out = match out {
        Ok(out) => out,
        Err(e) if !required => {
            eprintln!(
                "segy interop test skipped: python3 cannot run ({e}); set SEISIMAGE_INTEROP_TESTS=1 to require it"
            );
            return None;
        }
        Err(e) => panic!("python3 cannot run: {e}"),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("No module named") && !required {
        let why = stderr.lines().last().unwrap_or_default();
        eprintln!("segy interop test skipped: {why}; set SEISIMAGE_INTEROP_TESTS=1 to require segyio");
        return None;
    }
    assert!(out.status.success(), "segyio could not read {}: {stderr}", path.display());
    Some(serde_json::from_slice(&out.stdout).expect("JSON from the segyio script"))
}

fn digest(values: &[f32]) -> String {
    let mut h = Sha256::new();
    for v in values {
        h.update(v.to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn geometry(domain: Domain) -> Geometry {
    let mut g = Geometry::regular(
        LineAxis::new(1000, 4, 5),
        LineAxis::new(-20, 2, 7),
        SampleAxis { origin: 96.0, step: 2.0, len: 33, domain },
    );
    g.coords = Some(CoordTransform {
        origin: [612_345.67, 6_071_234.5],
        per_iline: [10.606601717798213, 10.606601717798213],
        per_xline: [-8.838834764831844, 8.838834764831844],
    });
    g.live[12] = false;
    g
}

/// Values that IBM floats hold exactly (multiples of 1/64 below 2^14), so both formats must give them back.
fn data(g: &Geometry) -> Vec<f32> {
    (0..g.n_values())
        .map(|k| if g.live[k / g.samples.len] { ((k * 7919) % 20001) as f32 / 64.0 - 150.0 } else { 0.0 })
        .collect()
}

#[test]
fn segyio_reads_what_seisimage_writes() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (format, endian, revision, domain)) in [
        (WriteFormat::Ieee, ByteOrder::Big, 1, Domain::Time),
        (WriteFormat::Ibm, ByteOrder::Big, 1, Domain::Time),
        (WriteFormat::Ieee, ByteOrder::Little, 2, Domain::Time),
        (WriteFormat::Ibm, ByteOrder::Little, 2, Domain::Depth),
    ]
    .into_iter()
    .enumerate()
    {
        let g = geometry(domain);
        let values = data(&g);
        let path = dir.path().join(format!("interop-{k}.sgy"));
        let opts = SegyWriteOptions { format, endian, revision, text: vec!["INTEROPERABILITY TEST".into()] };
        write_volume(&path, &g, &values, &opts).unwrap();
        let Some(seen) = segyio_reads(&path, endian == ByteOrder::Little) else { return };
        let case = format!("{format:?} {endian:?} rev {revision} {domain:?}");

        let numbers = |v: &Value| -> Vec<i64> { v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect() };
        assert_eq!(numbers(&seen["ilines"]), (0..5).map(|i| 1000 + 4 * i).collect::<Vec<_>>(), "{case}");
        assert_eq!(numbers(&seen["xlines"]), (0..7).map(|j| -20 + 2 * j).collect::<Vec<_>>(), "{case}");
        let samples: Vec<f64> = seen["samples"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(samples, (0..33).map(|s| 96.0 + 2.0 * s as f64).collect::<Vec<_>>(), "{case}");
        assert_eq!(seen["format"], if format == WriteFormat::Ibm { 1 } else { 5 }, "{case}");
        assert_eq!(seen["sorting"], 2, "inline sorted: {case}");
        assert_eq!(seen["shape"], serde_json::json!([5, 7, 33]), "{case}");
        assert_eq!(seen["sha256"], digest(&values), "values: {case}");
        let h = &seen["first_header"];
        assert_eq!((h["189"].as_i64(), h["193"].as_i64()), (Some(1000), Some(-20)), "{case}");
        // 612345.67 and 6071234.5 at the finest scalar that fits 4 bytes: centimetres.
        assert_eq!(
            (h["71"].as_i64(), h["181"].as_i64(), h["185"].as_i64()),
            (Some(-100), Some(61_234_567), Some(607_123_450))
        );
        assert_eq!((h["109"].as_i64(), h["115"].as_i64(), h["117"].as_i64()), (Some(96), Some(33), Some(2000)));
        let text = seen["text"].as_str().unwrap();
        assert!(text.starts_with("C 1 SEISIMAGE"), "segyio decodes our EBCDIC text: {text}");
        assert_eq!(text.contains("SEISIMAGE DEPTH VOLUME"), domain == Domain::Depth, "{case}");
    }
}
