"""Depth migration of 3-D post-stack seismic volumes, from Python.

The same reader, planner and engines as the ``seisimage`` command line, with numpy arrays and
xarray DataArrays in and out:

- :func:`open` reads a SEG-Y or HDF5 volume into a DataArray ``(iline, xline, twt)``;
- :func:`info` describes a volume file (``seisimage info --json``);
- :func:`migrate` depth-migrates an array or DataArray and returns the image ``(iline, xline, depth)``;
- :func:`run` runs a job (file or dict) to its manifest, :func:`validate` checks it and returns its plan.

Errors are :class:`JobError` (what the command line exits 2 with: a mistake in the job or the request)
and :class:`RunError` (exit 1). Ctrl-C stops a run cleanly, and the GIL is released while it works.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np
import xarray as xr

from . import _native
from ._native import JobError, RunError, SeisimageError

__all__ = ["open", "info", "migrate", "run", "validate", "JobError", "RunError", "SeisimageError"]
__version__ = _native.__version__

Progress = Callable[[str, int, int], Any]
PathLike = Union[str, "os.PathLike[str]"]


def _reading(reading: Mapping[str, Any]) -> str:
    return json.dumps(dict(reading))


def open(path: PathLike, **reading: Any) -> xr.DataArray:  # noqa: A001 (the obvious name)
    """Read a SEG-Y or HDF5 volume whole into a DataArray.

    ``reading`` takes the reading keys of a job's ``[input]`` table: ``headers`` ("standard",
    "petrel"), ``iline_byte``, ``xline_byte``, ``x_byte``, ``y_byte``, ``endian``, ``sample_format``,
    ``sample_interval`` (SEG-Y), ``dataset`` (HDF5), ``format``.

    The result has dims ``("iline", "xline", "twt")`` (``"depth"`` for a volume in depth) with those
    coordinates, 2-D ``cdp_x``/``cdp_y`` coordinates when the file has survey coordinates, a boolean
    ``live`` coordinate (False where the file has no trace: those are zeros), and attrs: the sample
    interval and its unit, the bin size, the source file, the container, and a SEG-Y file's text header.
    """
    values, live, described = _native.open(os.fspath(path), _reading(reading))
    d = json.loads(described)
    g = d["geometry"]
    dims, coords = _axes(g)
    coords["live"] = (("iline", "xline"), live)
    transform = g.get("coordinates")
    if transform:
        coords.update(_cdp(transform, values.shape[0], values.shape[1]))
    samples = g["samples"]
    attrs = {
        "sample_interval": samples["step"],
        "sample_unit": samples["unit"],
        "domain": samples["domain"],
        "source": d["path"],
        "container": d["container"],
        "reader": d["source"],
        "text_header": d["text_header"],
    }
    if g.get("bin_size_m"):
        attrs["bin_size_m"] = list(g["bin_size_m"])
    if transform:
        attrs["coordinates"] = json.dumps(transform)
    return xr.DataArray(values, dims=dims, coords=coords, attrs=attrs, name="amplitude")


def _axes(g: Mapping[str, Any]):
    def lines(a):
        return a["first"] + a["step"] * np.arange(a["count"], dtype=np.int64)

    samples = g["samples"]
    name = "twt" if samples["domain"] == "time" else "depth"
    values = samples["first"] + samples["step"] * np.arange(samples["count"], dtype=np.float64)
    dims = ("iline", "xline", name)
    coords = {
        "iline": lines(g["ilines"]),
        "xline": lines(g["xlines"]),
        name: xr.Variable(name, values, attrs={"units": samples["unit"]}),
    }
    return dims, coords


def _cdp(t: Mapping[str, Any], ni: int, nx: int):
    i = np.arange(ni, dtype=np.float64)[:, None]
    j = np.arange(nx, dtype=np.float64)[None, :]
    x = t["origin"][0] + i * t["per_iline"][0] + j * t["per_xline"][0]
    y = t["origin"][1] + i * t["per_iline"][1] + j * t["per_xline"][1]
    return {"cdp_x": (("iline", "xline"), x), "cdp_y": (("iline", "xline"), y)}


def info(path: PathLike, *, text_header: bool = False, stats: bool = True, **reading: Any) -> dict:
    """What ``seisimage info --json`` prints of the volume at ``path``, as a dict.

    ``text_header`` keeps a SEG-Y file's text header; ``stats=False`` skips the amplitude statistics
    (which read every sample). ``reading`` takes the reading keys of ``[input]`` (see :func:`open`).
    """
    return json.loads(_native.info(os.fspath(path), _reading(reading), text_header, stats))


def _job(job: Union[PathLike, Mapping[str, Any]]):
    if isinstance(job, Mapping):
        return None, json.dumps(job)
    return os.fspath(job), None


def _overrides(overrides: Union[None, Mapping[str, Any], Sequence[str]]) -> list:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_value(v)}" for k, v in overrides.items()]
    return [str(o) for o in overrides]


def _toml_value(v: Any) -> str:
    # JSON writes numbers, booleans, strings and lists of them as TOML does.
    return json.dumps(v)


def _progress(progress: Union[None, bool, Progress]) -> Optional[Progress]:
    if progress is None or progress is False:
        return None
    if progress is True:
        return _tqdm_progress()
    return progress


def _tqdm_progress() -> Optional[Progress]:
    """A tqdm bar per stage when tqdm is installed, else nothing."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    state = {"stage": None, "bar": None}

    def report(stage: str, done: int, total: int) -> None:
        if state["stage"] != stage:
            if state["bar"] is not None:
                state["bar"].close()
            state["stage"], state["bar"] = stage, tqdm(total=total, desc=stage)
        bar = state["bar"]
        bar.update(done - bar.n)
        if done >= total and total:
            bar.close()

    return report


def run(
    job: Union[PathLike, Mapping[str, Any]],
    overrides: Union[None, Mapping[str, Any], Sequence[str]] = None,
    *,
    progress: Union[None, bool, Progress] = None,
) -> dict:
    """Run a job as ``seisimage run`` does and return its manifest.

    ``job`` is a job file's path or a dict shaped like a job file (``{"input": {...}, "velocity":
    {...}, "output": {...}}``; relative paths are relative to the current folder). ``overrides`` are
    ``--set`` overrides: a dict ``{"imaging.dz": 5.0}`` or strings ``["imaging.dz=5.0"]``.
    ``progress(stage, done, total)`` is called as the run goes; ``True`` shows a tqdm bar if tqdm is
    installed. Ctrl-C (or an exception raised by ``progress``) stops the run: its files are removed and
    the exception is raised.
    """
    path, text = _job(job)
    return json.loads(_native.run(path, text, _overrides(overrides), _progress(progress)))


def validate(
    job: Union[PathLike, Mapping[str, Any]],
    overrides: Union[None, Mapping[str, Any], Sequence[str]] = None,
) -> dict:
    """Check a job as ``seisimage validate`` does, without writing anything, and return its plan.

    The dict holds ``plan`` (the lines ``validate`` prints), ``summary``, ``warnings``, ``memory``,
    ``existing`` (what ``output.existing`` would remove), ``backend``, ``method``, ``band_hz``,
    ``reach_m`` and ``image`` (the image's axes, as :func:`info` gives a volume's).
    """
    path, text = _job(job)
    return json.loads(_native.validate(path, text, _overrides(overrides)))


Velocity = Union[float, int, Mapping[str, Any], np.ndarray, xr.DataArray]


def migrate(
    data: Union[np.ndarray, xr.DataArray],
    *,
    velocity: Velocity,
    dt_ms: Optional[float] = None,
    bin_m: Union[None, float, Sequence[float]] = None,
    method: str = "phase-shift",
    dz: float = 10.0,
    zmax: Optional[float] = None,
    fmax: float = 60.0,
    backend: str = "auto",
    window: Optional[Mapping[str, Any]] = None,
    imaging: Optional[Mapping[str, Any]] = None,
    progress: Union[None, bool, Progress] = None,
) -> xr.DataArray:
    """Depth-migrate a volume in two-way time; returns the image ``(iline, xline, depth)``.

    The plan and engine are those of ``seisimage run``: a job with the same input, velocity and
    ``[imaging]`` keys writes the same values into its ``[[output.roi]]`` files.

    ``data`` is a DataArray from :func:`open` (its axes, live mask and bin size are used) or an array
    ``(iline, xline, time)``, for which ``dt_ms`` (sample interval, ms) and ``bin_m`` (metres between
    inlines and between crosslines, or one number for both) are required; ``dt_ms``/``bin_m`` also
    override a DataArray's. float32 C-contiguous arrays are read in place (others are converted once).

    ``velocity`` is a number (m/s, constant), or a dict shaped like a job's ``[velocity]`` table, e.g.
    ``{"kind": "table", "times": [...], "velocities": [...], "type": "rms"}`` or ``{"kind": "table",
    "depths": [...], "velocities": [...]}``; a velocity file is ``{"kind": "file", "path": ...}``; or
    interval velocity (m/s) in depth as an array: a function of depth (1-D), or a cube ``(iline, xline,
    depth)`` on the data's lateral grid. A DataArray gives its ``depth`` coordinate (m) and its line
    numbers; a numpy array's levels are ``dz`` apart from 0 m, on the data's lines.

    ``method`` ("phase-shift", "stolt", "split-step"), ``dz``, ``zmax`` and ``fmax`` are the
    ``[imaging]`` keys of the same names; ``imaging`` gives any other ``[imaging]`` key, ``window`` the
    ``[window]`` table; ``backend`` is "auto", "cpu" or "cuda". The result's attrs hold the plan's
    warnings and the engine that ran. Errors: :class:`JobError` at the key at fault.
    """
    values, axes, live, attrs_in = _input(data, dt_ms)
    bin_size = _bin_size(bin_m, attrs_in)
    imaging_table = {"method": method, "dz": float(dz), "fmax": float(fmax)}
    if zmax is not None:
        imaging_table["zmax"] = float(zmax)
    imaging_table.update(dict(imaging or {}))
    scratch = tempfile.TemporaryDirectory(prefix="seisimage-velocity-")
    job = {
        "input": {"path": "array", "bin_size": bin_size},
        "velocity": _velocity(velocity, axes, values.shape, float(dz), scratch.name),
        "imaging": imaging_table,
        "compute": {"backend": backend},
        "output": {"dir": ".", "png": False, "index": False, "roi": [{"name": "image", "formats": ["npy"]}]},
    }
    if window is not None:
        job["window"] = dict(window)
    with scratch:
        image, described = _native.migrate(values, json.dumps(axes), live, json.dumps(job), _progress(progress))
    d = json.loads(described)
    dims, coords = _axes(d["geometry"])
    transform = axes.get("coords")
    if transform:
        coords.update(_cdp(transform, image.shape[0], image.shape[1]))
    attrs = {
        "sample_interval": d["geometry"]["samples"]["step"],
        "sample_unit": "m",
        "domain": "depth",
        "bin_size_m": bin_size,
        "method": method,
        "backend": d["backend"],
        "backend_detail": d["backend_detail"],
        "warnings": list(d["warnings"]),
    }
    if "source" in attrs_in:
        attrs["source"] = attrs_in["source"]
    return xr.DataArray(image, dims=dims, coords=coords, attrs=attrs, name="image")


def _input(data, dt_ms):
    """The values (float32, C order), the axes, the live mask and the attrs of ``data``."""
    if isinstance(data, xr.DataArray):
        if data.ndim != 3 or data.dims[:2] != ("iline", "xline"):
            raise JobError(f"a DataArray to migrate has dims (iline, xline, twt), not {data.dims}")
        time = data.dims[2]
        ilines, xlines, t = (np.asarray(data[d].values) for d in data.dims)
        axes = {
            "ilines": _line_axis(ilines, "iline"),
            "xlines": _line_axis(xlines, "xline"),
            "samples": [float(t[0]), float(dt_ms) if dt_ms is not None else _step(t, time)],
            "domain": "time",
            "coords": json.loads(data.attrs["coordinates"]) if "coordinates" in data.attrs else None,
        }
        live = np.ascontiguousarray(data["live"].values, dtype=bool) if "live" in data.coords else None
        values = np.ascontiguousarray(data.values, dtype=np.float32)
        return values, axes, live, dict(data.attrs)
    values = np.ascontiguousarray(data, dtype=np.float32)
    if values.ndim != 3:
        raise JobError(f"an array to migrate is (iline, xline, time), not of shape {values.shape}")
    if dt_ms is None:
        raise JobError("dt_ms (the sample interval in ms) is required with a numpy array")
    axes = {"ilines": [1, 1], "xlines": [1, 1], "samples": [0.0, float(dt_ms)], "domain": "time", "coords": None}
    return values, axes, None, {}


def _line_axis(values: np.ndarray, name: str) -> list:
    step = int(values[1] - values[0]) if len(values) > 1 else 1
    if step <= 0 or np.any(np.diff(values) != step):
        raise JobError(f"the {name} numbers must ascend by a constant step")
    return [int(values[0]), step]


def _step(values: np.ndarray, name: str) -> float:
    if len(values) < 2:
        raise JobError(f"the {name} axis needs two samples at least; give dt_ms")
    return float(values[1] - values[0])


def _bin_size(bin_m, attrs) -> list:
    if bin_m is None:
        if "bin_size_m" not in attrs:
            raise JobError("bin_m (metres between inlines and between crosslines) is required: the data have no coordinates")
        return [float(b) for b in attrs["bin_size_m"]]
    if np.ndim(bin_m) == 0:
        return [float(bin_m), float(bin_m)]
    return [float(b) for b in bin_m]


def _velocity(velocity: Velocity, axes: Mapping[str, Any], shape, dz: float, scratch: str) -> dict:
    if isinstance(velocity, Mapping):
        return dict(velocity)
    if isinstance(velocity, (int, float, np.number)):
        return {"kind": "constant", "velocity": float(velocity)}
    if isinstance(velocity, (np.ndarray, xr.DataArray)):
        return _velocity_array(velocity, axes, shape, dz, scratch)
    raise JobError(
        "velocity is a number (m/s), a dict shaped like a job's [velocity] table, or an array of interval "
        "velocity in depth (1-D, or (iline, xline, depth))"
    )


def _velocity_array(velocity, axes: Mapping[str, Any], shape, dz: float, scratch: str) -> dict:
    """Interval velocity in depth as an array: a table for a function of depth, else an HDF5 cube in
    ``scratch`` with its axes declared, which the job reads as a velocity file."""
    named = isinstance(velocity, xr.DataArray)
    v = np.ascontiguousarray(velocity.values if named else velocity, dtype=np.float32)
    if named and velocity.dims[-1] != "depth":
        raise JobError(f"a velocity DataArray ends with the dim 'depth' (m), not {velocity.dims}")
    if named and "depth" in velocity.coords:
        depth = np.asarray(velocity["depth"].values, dtype=float)
    else:
        depth = np.arange(v.shape[-1]) * dz
    if v.ndim == 1:
        return {"kind": "table", "depths": depth.tolist(), "velocities": v.astype(float).tolist()}
    if v.ndim != 3:
        raise JobError(f"a velocity array is 1-D (depth) or (iline, xline, depth), not of shape {v.shape}")
    if named and velocity.dims != ("iline", "xline", "depth"):
        raise JobError(f"a velocity cube has dims (iline, xline, depth), not {velocity.dims}")
    if named and "iline" in velocity.coords and "xline" in velocity.coords:
        lines = [_line_axis(np.asarray(velocity[d].values), d) for d in ("iline", "xline")]
    elif v.shape[:2] == tuple(shape[:2]):
        lines = [axes["ilines"], axes["xlines"]]
    else:
        raise JobError(f"a velocity cube of shape {v.shape} without line numbers must lie on the data's grid")
    step = _step(depth, "depth") if len(depth) > 1 else dz
    cube = {"ilines": lines[0], "xlines": lines[1], "samples": [float(depth[0]), step], "domain": "depth",
            "coords": None}
    path = os.path.join(scratch, "velocity.h5")
    _native.write_cube(v, json.dumps(cube), path)
    return {"kind": "file", "path": path, "domain": "depth"}


# Errors raised from Python (a wrong argument) carry the same attributes as those from the engine.
for _cls in (SeisimageError, JobError, RunError):
    for _name in ("key", "source", "line", "column"):
        if not hasattr(_cls, _name):
            setattr(_cls, _name, None)
JobError.exit_code = 2
RunError.exit_code = 1
