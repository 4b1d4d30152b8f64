//! MDIO datasets against the MDIO Python package (`multidimio`, an independent reader and writer): what
//! seisimage writes opens in it with the same values and coordinates, and what it ingests from a SEG-Y
//! file seisimage reads with the values of that file.
//!
//! Python runs with `PYTHONPATH` from `SEISIMAGE_MDIO_PYTHONPATH` (setup.sh --test installs the package
//! into a folder of its own). Without it the tests say why and pass, unless `SEISIMAGE_INTEROP_TESTS=1`.

use seisimage::io::segy::{write_volume as write_segy, SegyWriteOptions};
use seisimage::io::{self, FileFormat, InputOptions, WriteOptions};
use seisimage::volume::{CoordTransform, Domain, Geometry, LineAxis, SampleAxis};

use crate::python::python_json_from;

const PATH_VARIABLE: &str = "SEISIMAGE_MDIO_PYTHONPATH";

fn geometry(domain: Domain) -> Geometry {
    let mut g = Geometry::regular(
        LineAxis::new(1000, 4, 9),
        LineAxis::new(-20, 2, 70),
        SampleAxis { origin: 96.0, step: 2.0, len: 133, domain },
    );
    g.coords =
        Some(CoordTransform { origin: [612_345.5, 6_071_234.5], per_iline: [10.5, 10.5], per_xline: [-8.75, 8.75] });
    g
}

/// Values from a formula of the indices, different on every sample.
fn data(g: &Geometry) -> Vec<f32> {
    (0..g.n_values()).map(|k| ((k * 7919) % 20011) as f32 / 64.0 - 150.0).collect()
}

const MDIO_READ: &str = r#"
import json, sys
import numpy as np
import mdio
ds = mdio.open_mdio(sys.argv[1])
dims = list(ds["amplitude"].dims)
a = ds["amplitude"].values.astype("<f8")
print(json.dumps({
    "dims": dims,
    "shape": list(a.shape),
    "values": a.ravel().tolist(),
    "inline": [int(v) for v in ds["inline"].values],
    "crossline": [int(v) for v in ds["crossline"].values],
    "samples": [float(v) for v in ds[dims[2]].values],
    "cdp_x": ds["cdp_x"].values.ravel().tolist(),
    "cdp_y": ds["cdp_y"].values.ravel().tolist(),
    "coords_of_amplitude": sorted(str(c) for c in ds["amplitude"].coords),
    "live": int(np.count_nonzero(ds["trace_mask"].values)),
}))
"#;

#[test]
fn mdio_reads_what_seisimage_writes() {
    let dir = tempfile::tempdir().unwrap();
    for domain in [Domain::Time, Domain::Depth] {
        let g = geometry(domain);
        let values = data(&g);
        let path = dir.path().join(format!("{domain:?}.mdio"));
        io::write_volume(FileFormat::Mdio, &path, &g, &values, &WriteOptions::default()).unwrap();
        let Some(seen) = python_json_from(PATH_VARIABLE, "mdio", MDIO_READ, &[path.as_os_str()]) else { return };
        let sample_dim = if domain == Domain::Time { "time" } else { "depth" };
        assert_eq!(seen["dims"], serde_json::json!(["inline", "crossline", sample_dim]));
        assert_eq!(seen["shape"], serde_json::json!([9, 70, 133]));
        let got: Vec<f64> = seen["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(got.iter().zip(&values).all(|(a, b)| *a == f64::from(*b)), "values differ ({domain:?})");
        assert_eq!(seen["inline"], serde_json::json!((0..9).map(|i| 1000 + 4 * i).collect::<Vec<_>>()));
        assert_eq!(seen["crossline"], serde_json::json!((0..70).map(|j| -20 + 2 * j).collect::<Vec<_>>()));
        assert_eq!(seen["samples"], serde_json::json!((0..133).map(|s| 96.0 + 2.0 * s as f64).collect::<Vec<_>>()));
        let c = g.coords.unwrap();
        for (axis, key) in ["cdp_x", "cdp_y"].into_iter().enumerate() {
            let xs = seen[key].as_array().unwrap();
            for (t, x) in xs.iter().enumerate() {
                let want = c.xy((t / 70) as f64, (t % 70) as f64)[axis];
                assert!((x.as_f64().unwrap() - want).abs() < 1e-6, "{key} of trace {t}: {x} != {want}");
            }
        }
        let mut coords = ["cdp_x", "cdp_y", "crossline", "inline", sample_dim];
        coords.sort();
        assert_eq!(seen["coords_of_amplitude"], serde_json::json!(coords));
        assert_eq!(seen["live"], 9 * 70);
    }
}

const MDIO_INGEST: &str = r#"
import json, sys
from segy.schema import HeaderField
from segy.standards import get_segy_standard
from mdio import segy_to_mdio
from mdio.builder.template_registry import TemplateRegistry
fields = [
    HeaderField(name="inline", byte=189, format="int32"),
    HeaderField(name="crossline", byte=193, format="int32"),
    HeaderField(name="coordinate_scalar", byte=71, format="int16"),
    HeaderField(name="cdp_x", byte=181, format="int32"),
    HeaderField(name="cdp_y", byte=185, format="int32"),
]
spec = get_segy_standard(1.0).customize(trace_header_fields=fields)
segy_to_mdio(segy_spec=spec, mdio_template=TemplateRegistry().get("PostStack3DTime"),
             input_path=sys.argv[1], output_path=sys.argv[2], overwrite=True)
print(json.dumps({"done": True}))
"#;

#[test]
fn seisimage_reads_what_mdio_ingests_from_segy() {
    let dir = tempfile::tempdir().unwrap();
    // MDIO's ingestion starts its time axis at 0 whatever the delay (trace header bytes 109-110) says.
    let mut g = geometry(Domain::Time);
    g.samples.origin = 0.0;
    let values = data(&g);
    let segy = dir.path().join("in.sgy");
    write_segy(&segy, &g, &values, &SegyWriteOptions::default()).unwrap();
    let mdio = dir.path().join("ingested.mdio");
    let args = [segy.as_os_str(), mdio.as_os_str()];
    let Some(_) = python_json_from(PATH_VARIABLE, "mdio", MDIO_INGEST, &args) else { return };

    let reader = io::open(&mdio, &InputOptions::default()).unwrap();
    let got = reader.geometry();
    assert_eq!((got.ilines, got.xlines), (g.ilines, g.xlines));
    assert_eq!((got.samples.origin, got.samples.step, got.samples.len), (0.0, 2.0, 133));
    assert_eq!(got.n_missing(), 0);
    let (c, want) = (got.coords.expect("coordinates from cdp_x/cdp_y"), g.coords.unwrap());
    for (a, b) in [(c.origin, want.origin), (c.per_iline, want.per_iline), (c.per_xline, want.per_xline)] {
        assert!((a[0] - b[0]).abs() < 0.01 && (a[1] - b[1]).abs() < 0.01, "{c:?} != {want:?}");
    }
    let mut read = vec![0.0; g.n_values()];
    reader.read_all(&mut read).unwrap();
    assert!(read == values, "the values mdio ingested differ from the SEG-Y file's");
}
