"""`migrate` gives what `seisimage run` writes for the same input, velocity and imaging keys."""

import json

import numpy as np
import xarray as xr
import pytest

import seisimage
from conftest import DEMO_VELOCITY, diffractors, run_command_line, write_segy


def toml_value(v):
    return json.dumps(v)


def job_text(input_path, out_dir, velocity, imaging, bin_size=None):
    lines = ["[input]", f"path = {toml_value(str(input_path))}"]
    if bin_size is not None:
        lines.append(f"bin_size = {toml_value(bin_size)}")
    lines.append("[velocity]")
    lines += [f"{k} = {toml_value(v)}" for k, v in velocity.items()]
    lines.append("[imaging]")
    lines += [f"{k} = {toml_value(v)}" for k, v in imaging.items()]
    lines += ["[compute]", 'backend = "cpu"', "[output]", f"dir = {toml_value(str(out_dir))}", "index = false"]
    lines += ["[[output.roi]]", 'name = "all"', 'formats = ["npy"]']
    return "\n".join(lines) + "\n"


def command_line_image(tmp_path, input_path, velocity, imaging, bin_size=None):
    job = tmp_path / "job.toml"
    job.write_text(job_text(input_path, tmp_path / "out", velocity, imaging, bin_size))
    done = run_command_line("run", job)
    assert done.returncode == 0, done.stderr
    return np.load(tmp_path / "out" / "roi_all.npy")


def assert_same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    scale = np.abs(b).max()
    assert scale > 0
    assert np.abs(a - b).max() / scale <= 1e-6


def test_migrate_of_f3_equals_the_command_line(tmp_path, f3):
    imaging = {"method": "phase-shift", "dz": 2.0, "zmax": 264.0, "fmax": 80.0}
    expected = command_line_image(tmp_path, f3, DEMO_VELOCITY, imaging)
    image = seisimage.migrate(
        seisimage.open(f3), velocity=DEMO_VELOCITY, dz=2.0, zmax=264.0, fmax=80.0, backend="cpu"
    )
    assert image.dims == ("iline", "xline", "depth")
    assert image.depth.values[1] - image.depth.values[0] == 2.0
    assert image.depth.values[-1] == 264.0
    assert list(image.iline.values) == list(range(111, 134))
    assert image.attrs["backend"] == "cpu"
    assert "cdp_x" in image.coords
    assert_same(image.values, expected)


@pytest.mark.parametrize("method", ["phase-shift", "stolt", "split-step"])
def test_migrate_of_an_array_equals_the_command_line(tmp_path, method):
    velocity, dt_ms, bin_m = 2000.0, 4.0, 20.0
    values = diffractors(16, 12, 100, dt_ms, velocity, bin_m)
    segy = tmp_path / "diffractors.sgy"
    write_segy(segy, values, dt_ms)
    imaging = {"method": method, "dz": 5.0, "zmax": 300.0, "fmax": 50.0}
    expected = command_line_image(
        tmp_path, segy, {"kind": "constant", "velocity": velocity}, imaging, bin_size=[bin_m, bin_m]
    )
    image = seisimage.migrate(
        values, velocity=velocity, dt_ms=dt_ms, bin_m=bin_m, method=method, dz=5.0, zmax=300.0, fmax=50.0,
        backend="cpu",
    )
    assert image.shape == (16, 12, 61)
    assert_same(image.values, expected)


def test_an_rms_table_in_time_as_the_job_gives_it(tmp_path, f3):
    velocity = {"kind": "table", "times": [0.0, 150.0, 300.0], "velocities": [1550.0, 1700.0, 1850.0], "type": "rms"}
    imaging = {"dz": 4.0, "zmax": 240.0, "fmax": 60.0}
    expected = command_line_image(tmp_path, f3, velocity, imaging)
    image = seisimage.migrate(seisimage.open(f3), velocity=velocity, dz=4.0, zmax=240.0, backend="cpu")
    assert_same(image.values, expected)


def test_the_result_is_handed_over_without_a_copy(f3):
    image = seisimage.migrate(seisimage.open(f3), velocity=1800.0, dz=10.0, zmax=200.0, backend="cpu")
    values = image.values
    # The array owns no data of its own: it lends the buffer the engine filled.
    assert values.base is not None
    assert values.flags["C_CONTIGUOUS"] and values.dtype == np.float32


def demo_velocity_at(depth):
    """The demo's interval velocity in depth, linear between its picks and constant below the last."""
    return np.interp(depth, DEMO_VELOCITY["depths"], DEMO_VELOCITY["velocities"]).astype(np.float32)


@pytest.mark.parametrize("form", ["numpy 1-D", "DataArray 1-D", "numpy cube", "DataArray cube"])
def test_a_velocity_array_equals_the_same_velocity_as_a_table(f3, form):
    data = seisimage.open(f3)
    common = dict(dz=2.0, zmax=264.0, fmax=80.0, backend="cpu")
    expected = seisimage.migrate(data, velocity=DEMO_VELOCITY, **common)
    depth = np.arange(0.0, 302.0, 2.0)
    v = demo_velocity_at(depth)
    ni, nx = data.shape[:2]
    cube = np.broadcast_to(v, (ni, nx, len(v))).copy()
    velocity = {
        "numpy 1-D": v,
        "DataArray 1-D": xr.DataArray(v, dims=("depth",), coords={"depth": depth}),
        "numpy cube": cube,
        "DataArray cube": xr.DataArray(
            cube,
            dims=("iline", "xline", "depth"),
            coords={"iline": data["iline"].values, "xline": data["xline"].values, "depth": depth},
        ),
    }[form]
    got = seisimage.migrate(data, velocity=velocity, **common)
    assert_same(got.values, expected.values)


def test_a_velocity_array_of_the_wrong_shape_is_a_job_error(f3):
    data = seisimage.open(f3)
    with pytest.raises(seisimage.JobError):
        seisimage.migrate(data, velocity=np.full((3, 4, 5, 6), 2000.0, np.float32), dz=2.0, zmax=264.0)
    with pytest.raises(seisimage.JobError):
        seisimage.migrate(data, velocity=np.full((3, 4, 50), 2000.0, np.float32), dz=2.0, zmax=264.0)
