//! HDF5 volumes that h5py and xarray wrote with their dimensions in another order than
//! `[iline][xline][sample]`, named by dimension scales (h5py's `make_scale` / `dims[d].attach_scale`,
//! netCDF-4's scales as h5netcdf writes them): read in the model's order, values equal to the formula the
//! Python side wrote them with. The Python side runs as in `hdf5_interop.rs` (`SEISIMAGE_PYTHONPATH`).

use std::path::Path;

use seisimage::io::hdf5::{Hdf5Options, Hdf5Reader};
use seisimage::volume::{Domain, LineAxis, SampleAxis, Volume, VolumeReader};

use crate::python::python_json;

/// The same formula as the Python script below; exact in f32.
fn value(i: usize, j: usize, k: usize) -> f32 {
    (i * 10_000 + j * 100 + k) as f32 * 0.25 - 500.0
}

/// 5 inlines (100, 102, ...), 7 crosslines (7, 8, ...), 6 samples (every 4 ms, or every 10 m).
const SHAPE: [usize; 3] = [5, 7, 6];

const WRITE: &str = r#"
import sys, h5py, numpy as np, xarray as xr
ni, nj, nk = 5, 7, 6
i, j, k = np.meshgrid(np.arange(ni), np.arange(nj), np.arange(nk), indexing="ij")
v = ((i * 10000 + j * 100 + k) * 0.25 - 500.0).astype(np.float32)
iline, xline = np.arange(ni) * 2 + 100, np.arange(nj) + 7

def scale(f, name, values, units=None):
    f[name] = values
    f[name].make_scale(name)
    if units:
        f[name].attrs["units"] = units
    return f[name]

# [xline][iline][twt], chunked and compressed, with a live mask stored [xline][iline] too.
with h5py.File(sys.argv[1], "w") as f:
    ds = f.create_dataset("seismic", data=v.transpose(1, 0, 2), chunks=(3, 2, 4), compression="gzip")
    live = np.ones((nj, ni), dtype=np.uint8)
    live[5, 3] = 0  # crossline index 5 of inline index 3
    f["live"] = live
    for d, s in enumerate([scale(f, "xline", xline), scale(f, "iline", iline), scale(f, "twt", np.arange(nk) * 4.0, "ms")]):
        ds.dims[d].attach_scale(s)
    for d, s in enumerate([f["xline"], f["iline"]]):
        f["live"].dims[d].attach_scale(s)

# [depth][iline][xline], contiguous, in a group.
with h5py.File(sys.argv[2], "w") as f:
    g = f.create_group("survey")
    ds = g.create_dataset("cube", data=v.transpose(2, 0, 1))
    for d, s in enumerate([scale(g, "depth", np.arange(nk) * 0.01, "km"), scale(g, "iline", iline), scale(g, "xline", xline)]):
        ds.dims[d].attach_scale(s)

# [time][xline][iline], chunked, the time in seconds as float32.
with h5py.File(sys.argv[3], "w") as f:
    ds = f.create_dataset("seismic", data=v.transpose(2, 1, 0), chunks=(4, 3, 2))
    t = scale(f, "time", (np.arange(nk) * 0.004).astype(np.float32), "s")
    for d, s in enumerate([t, scale(f, "xline", xline), scale(f, "iline", iline)]):
        ds.dims[d].attach_scale(s)

# xarray (netCDF-4 through h5netcdf): dimensions (twt, xline, iline), twt without a coordinate variable, so
# that its scale holds no values and the sample axis comes from the attributes.
attrs = {"sample_origin": 0.0, "sample_step": 4.0, "sample_unit": "ms"}
da = xr.DataArray(v.transpose(2, 1, 0), dims=("twt", "xline", "iline"), coords={"iline": iline, "xline": xline}, attrs=attrs)
da.to_dataset(name="seismic").to_netcdf(sys.argv[4], engine="h5netcdf")

# A dimension that is no axis of a post-stack volume.
xr.DataArray(v, dims=("iline", "xline", "offset")).to_dataset(name="seismic").to_netcdf(sys.argv[5], engine="h5netcdf")
print("{}")
"#;

fn formula() -> Vec<f32> {
    let [ni, nj, nk] = SHAPE;
    (0..ni).flat_map(|i| (0..nj).flat_map(move |j| (0..nk).map(move |k| value(i, j, k)))).collect()
}

fn open(path: &Path, dataset: &str) -> Hdf5Reader {
    Hdf5Reader::open(path, &Hdf5Options { dataset: dataset.into() }).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn volumes_h5py_and_xarray_wrote_in_other_axis_orders_read_in_ours() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["xit.h5", "dix.h5", "txi.h5", "xarray.h5", "offset.h5"];
    let paths = names.map(|n| dir.path().join(n));
    let args: Vec<&std::ffi::OsStr> = paths.iter().map(|p| p.as_os_str()).collect();
    if python_json("h5py, numpy, xarray, h5netcdf", WRITE, &args).is_none() {
        return;
    }
    let lines = (LineAxis::new(100, 2, 5), LineAxis::new(7, 1, 7));
    let time = SampleAxis { origin: 0.0, step: 4.0, len: 6, domain: Domain::Time };
    let cases = [
        (&paths[0], "/seismic", ["xline", "iline", "twt"], time),
        (
            &paths[1],
            "/survey/cube",
            ["depth", "iline", "xline"],
            SampleAxis { step: 10.0, domain: Domain::Depth, ..time },
        ),
        (&paths[2], "/seismic", ["twt", "xline", "iline"], time),
        (&paths[3], "/seismic", ["twt", "xline", "iline"], time),
    ];
    for (path, dataset, dimensions, samples) in cases {
        let reader = open(path, dataset);
        let g = reader.geometry();
        let name = path.file_name().unwrap().to_string_lossy();
        assert_eq!((g.ilines, g.xlines), lines, "{name}");
        assert_eq!((g.samples.origin, g.samples.len, g.samples.domain), (0.0, 6, samples.domain), "{name}");
        assert!((g.samples.step - samples.step).abs() < 1e-4, "{name}: {:?}", g.samples);
        assert_eq!(reader.summary().dimensions, dimensions, "{name}");
        // The mask of xit.h5, stored [xline][iline], marks crossline index 5 of inline index 3 dead.
        let dead: Vec<usize> = (0..g.live.len()).filter(|&t| !g.live[t]).collect();
        let expected_dead = if name == "xit.h5" { vec![3 * SHAPE[1] + 5] } else { vec![] };
        assert_eq!(dead, expected_dead, "{name}");
        // A dead trace reads as stored: the formula holds everywhere.
        assert_eq!(Volume::read(&reader).unwrap().data, formula(), "{name}");
    }
    let e = Hdf5Reader::open(&paths[4], &Hdf5Options::default()).err().expect("an offset dimension is refused");
    let e = e.to_string();
    assert!(e.contains("offset.h5") && e.contains("dimension 2 of /seismic") && e.contains("'offset'"), "{e}");
}
