"""Shared fixtures: the shipped F3 cut, the command line to compare with, and synthetic volumes."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
F3 = ROOT / "data" / "f3.sgy"

# The demo's velocity (configs/demo.toml): interval velocities in depth, linear between the points.
DEMO_VELOCITY = {
    "kind": "table",
    "depths": [0.0, 100.0, 300.0],
    "velocities": [1550.0, 1750.0, 2000.0],
    "interpolation": "linear",
}


@pytest.fixture(scope="session")
def f3() -> pathlib.Path:
    return F3


def seisimage_binary() -> pathlib.Path:
    """The command line built from the same tree (SEISIMAGE_BIN names another)."""
    path = pathlib.Path(os.environ.get("SEISIMAGE_BIN", ROOT / "target" / "release" / "seisimage"))
    assert path.is_file(), f"{path} is missing: build it with `cargo build --release` (or set SEISIMAGE_BIN)"
    return path


def run_command_line(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(seisimage_binary()), "--quiet", *map(str, args)], capture_output=True, text=True)


def write_segy(path: pathlib.Path, values: np.ndarray, dt_ms: float) -> None:
    """A SEG-Y file of `values` (iline, xline, time), inlines from 1 and crosslines from 1, written by segyio."""
    import segyio

    segyio.tools.from_array3D(str(path), values.astype(np.float32), iline=189, xline=193, dt=int(dt_ms * 1000))


def diffractors(ni: int, nx: int, ns: int, dt_ms: float, velocity: float, bin_m: float) -> np.ndarray:
    """Hyperbolas of point diffractors in a constant velocity, from their travel-time formula."""
    il = np.arange(ni)[:, None, None]
    xl = np.arange(nx)[None, :, None]
    t = np.arange(ns)[None, None, :] * dt_ms
    out = np.zeros((ni, nx, ns), dtype=np.float32)
    for ci, cx, depth in [(ni // 2, nx // 2, 0.3 * ns * dt_ms * velocity / 2000.0), (ni // 3, nx // 3, 150.0)]:
        r2 = ((il - ci) * bin_m) ** 2 + ((xl - cx) * bin_m) ** 2
        t0 = 2000.0 * np.sqrt(depth**2 + r2) / velocity
        out += np.exp(-(((t - t0) / (2 * dt_ms)) ** 2)).astype(np.float32)
    return out
