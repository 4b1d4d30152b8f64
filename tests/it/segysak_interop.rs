//! segysak, the xarray extension for seismic, opens a `run`'s HDF5 product the way its users open a
//! volume (`xarray.open_dataset` with h5netcdf, then its `segysak` and `seis` accessors) and finds a 3-D
//! depth volume with its `iline`, `xline` and `depth` coordinates and `cdp_x`/`cdp_y` at the survey's bin
//! centres. Python runs with `PYTHONPATH` from `$SEISIMAGE_SEGYSAK_PYTHONPATH` (`.tools/py` and
//! `.tools/segysak`, which `scripts/setup.sh --test` fills).

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};
use crate::python::python_json_from;

const SEGYSAK_READ: &str = r#"
import json, sys, warnings
import xarray as xr
import segysak  # registers the accessors
warnings.simplefilter("ignore")  # the affine fit's covariance warning on an exact grid
with xr.open_dataset(sys.argv[1], engine="h5netcdf") as ds:
    affine = ds.segysak.get_affine_transform()
    il, xl = ds["iline"].values, ds["xline"].values
    corners = [(float(il[a]), float(xl[b])) for a, b in [(0, 0), (0, -1), (-1, 0), (-1, -1)]]
    print(json.dumps({
        "dims": list(ds["seismic"].dims),
        "is_3d": bool(ds.seis.is_3d()), "is_depth": bool(ds.seis.is_depth()),
        "iline": il.tolist(), "xline": xl.tolist(), "depth": ds["depth"].values.tolist(),
        "coords": sorted(ds["seismic"].coords),
        "cdp_x": ds["cdp_x"].values.tolist(), "cdp_y": ds["cdp_y"].values.tolist(),
        "corners": [[*c, *affine.transform([c])[0].tolist()] for c in corners],
    }))
"#;

#[test]
fn segysak_opens_a_run_product_with_its_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(8, 6, 100);
    let input = dir.path().join("survey.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let output = "png = false\n\n[[output.roi]]\nname = \"all\"\nformats = [\"hdf5\"]";
    let text = job_text(&input, &out, "dz = 10.0", output).replace("[input]\n", "[input]\ncrs = \"EPSG:23031\"\n");
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let h5 = out.join("roi_all.h5");
    let imports = "segysak, xarray, h5netcdf";
    let Some(v) = python_json_from("SEISIMAGE_SEGYSAK_PYTHONPATH", imports, SEGYSAK_READ, &[h5.as_os_str()]) else {
        return;
    };

    let g = m.geometry();
    let coords = g.coords.expect("the model has coordinates");
    assert_eq!(v["dims"], serde_json::json!(["iline", "xline", "depth"]));
    assert_eq!((v["is_3d"].as_bool(), v["is_depth"].as_bool()), (Some(true), Some(true)));
    let ilines: Vec<i64> = (0..g.ilines.len).map(|i| g.ilines.value(i)).collect();
    let xlines: Vec<i64> = (0..g.xlines.len).map(|j| g.xlines.value(j)).collect();
    assert_eq!((v["iline"].clone(), v["xline"].clone()), (serde_json::json!(ilines), serde_json::json!(xlines)));
    let depths = v["depth"].as_array().unwrap();
    assert!(depths.len() > 1, "{v}");
    for (k, depth) in depths.iter().enumerate() {
        assert_eq!(depth.as_f64(), Some(10.0 * k as f64), "depth {k}");
    }
    for name in ["cdp_x", "cdp_y"] {
        assert!(v["coords"].as_array().unwrap().iter().any(|c| c == name), "{name} is a coordinate: {v}");
    }
    for i in 0..g.ilines.len {
        for j in 0..g.xlines.len {
            let [x, y] = coords.xy(i as f64, j as f64);
            assert_eq!((v["cdp_x"][i][j].as_f64(), v["cdp_y"][i][j].as_f64()), (Some(x), Some(y)), "bin ({i}, {j})");
        }
    }
    // segysak's own affine map from (iline, xline) to (x, y), fitted to cdp_x/cdp_y, puts the corners of the
    // survey where the geometry has them.
    for corner in v["corners"].as_array().unwrap() {
        let [il, xl, x, y] = [0, 1, 2, 3].map(|n| corner[n].as_f64().unwrap());
        let index = |line: f64, axis: &seisimage::volume::LineAxis| (line - axis.first as f64) / axis.step as f64;
        let [ex, ey] = coords.xy(index(il, &g.ilines), index(xl, &g.xlines));
        assert!(
            (x - ex).abs() < 1e-3 && (y - ey).abs() < 1e-3,
            "corner ({il}, {xl}): ({x}, {y}), expected ({ex}, {ey})"
        );
    }
}
