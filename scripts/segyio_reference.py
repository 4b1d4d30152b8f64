#!/usr/bin/env python3
"""Record what segyio finds in every SEG-Y test fixture, as the independent reference of seisimage's reader.

    python3 -m pip install --target DIR segyio numpy
    PYTHONPATH=DIR python3 scripts/segyio_reference.py > tests/data/segyio/reference.json

For each file under tests/data/segyio (multiformats/ included) it records how segyio opened it (byte order,
structured or not) or why it could not, and then: sample format, trace count, samples per trace, interval and
first sample time, and digests of the samples as little-endian float32:

- "traces": every trace in file order (segyio's f.trace.raw[:]);
- "cube" (structured files only): the volume with inline and crossline numbers both ascending, in
  [iline][xline][sample] order, which is how seisimage stores a volume whatever the file's trace order.

Integer formats are converted to float32 by numpy (nearest value), as seisimage does. A few raw values and the
sum help to debug a mismatch.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np
import segyio

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "segyio"


def little_endian(name):
    """segyio 1.9 does not detect the byte order: these fixtures are little-endian by their names."""
    return "-lsb" in name or name.endswith("lsb.sgy")


def digest(values):
    values = np.ascontiguousarray(values, dtype="<f4")
    return {
        "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
        "sum": finite(values.astype(np.float64).sum()),
        "count": int(values.size),
    }


def finite(v):
    """JSON has no NaN: non-finite values (segyio's reading of formats it does not know) become null."""
    return float(v) if np.isfinite(v) else None


def describe(f, structured):
    traces = np.asarray(f.trace.raw[:]).astype(np.float32).reshape(f.tracecount, len(f.samples))
    entry = {
        "format": int(f.format),
        "tracecount": int(f.tracecount),
        "samples": int(len(f.samples)),
        "dt_ms": float(segyio.tools.dt(f)) / 1000.0,
        "t0_ms": float(f.samples[0]),
        "ext_headers": int(f.ext_headers),
        "traces": digest(traces),
        "first_values": [finite(v) for v in traces[0][:4]],
        "last_value": finite(traces[-1][-1]),
    }
    if structured:
        ilines, xlines, offsets = (sorted(int(v) for v in a) for a in (f.ilines, f.xlines, f.offsets))
        entry.update(sorting=int(f.sorting), ilines=ilines, xlines=xlines, offsets=offsets)
        if len(offsets) == 1:
            cube = np.stack([np.stack([np.asarray(f.gather[il, xl]) for xl in xlines]) for il in ilines])
            entry["cube"] = digest(cube.astype(np.float32))
    return entry


def reference(path):
    endian = "little" if little_endian(path.name) else "big"
    entry = {"size": path.stat().st_size, "endian": endian}
    try:
        with segyio.open(str(path), "r", endian=endian) as f:
            entry.update(structured=True, **describe(f, True))
            return entry
    except Exception as e:  # segyio raises several types; the message is what matters
        entry["structured_error"] = f"{type(e).__name__}: {e}"
    try:
        with segyio.open(str(path), "r", endian=endian, ignore_geometry=True) as f:
            entry.update(structured=False, **describe(f, False))
    except Exception as e:
        entry["error"] = f"{type(e).__name__}: {e}"
    return entry


def main():
    files = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".sgy", ".su"))
    out = {
        "generator": "scripts/segyio_reference.py",
        "segyio": getattr(segyio, "__version__", None) or version("segyio"),
        "numpy": np.__version__,
        "files": {p.relative_to(FIXTURES).as_posix(): reference(p) for p in files},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")


def version(package):
    from importlib.metadata import version as installed

    return installed(package)


if __name__ == "__main__":
    main()
