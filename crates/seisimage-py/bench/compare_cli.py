"""Time ``seisimage.migrate`` from Python against ``seisimage run`` of the same job, alternately.

Both read the same SEG-Y file and migrate it whole with the same engine settings: the command line writes
the image as an NPY region; Python opens the file (``seisimage.open``) and migrates the array, the image
coming back as an xarray.DataArray. Each round runs both once; the medians and their ratio are printed, and
the two images are compared.

    python compare_cli.py --bin target/release/seisimage --input bench.sgy [--backend cuda] [--rounds 3]

Make the input with ``seisimage synth --size 512x512x1000 bench.sgy`` (the bench volume's size).
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import seisimage

VELOCITY = 2000.0
IMAGING = {"method": "phase-shift", "dz": 10.0, "fmax": 60.0}


def job_text(input_path: Path, out: Path, backend: str) -> str:
    return f"""
[input]
path = {json.dumps(str(input_path))}

[velocity]
kind = "constant"
velocity = {VELOCITY}

[imaging]
method = "{IMAGING['method']}"
dz = {IMAGING['dz']}
fmax = {IMAGING['fmax']}

[compute]
backend = "{backend}"

[output]
dir = {json.dumps(str(out))}
png = false
index = false

[[output.roi]]
name = "image"
formats = ["npy"]
"""


def command_line(binary: str, input_path: Path, backend: str, work: Path) -> tuple:
    out = work / "cli"
    job = work / "job.toml"
    job.write_text(job_text(input_path, out, backend))
    t = time.perf_counter()
    subprocess.run([binary, "-q", "run", str(job)], check=True)
    seconds = time.perf_counter() - t
    image = np.load(next(out.glob("*.npy")))
    return seconds, image


def python(input_path: Path, backend: str) -> tuple:
    t = time.perf_counter()
    data = seisimage.open(input_path)
    image = seisimage.migrate(data, velocity=VELOCITY, backend=backend, **IMAGING)
    seconds = time.perf_counter() - t
    return seconds, image


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--input", required=True, type=Path)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    cli_times, py_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            work = Path(tmp) / f"round{r}"
            work.mkdir()
            c, cli_image = command_line(args.bin, args.input, args.backend, work)
            s, py_image = python(args.input, args.backend)
            cli_times.append(c)
            py_times.append(s)
            print(f"round {r + 1}: command line {c:.3f} s, Python {s:.3f} s")
    scale = float(np.abs(cli_image).max()) or 1.0
    diff = float(np.abs(np.asarray(py_image) - cli_image).max()) / scale
    cli, py = statistics.median(cli_times), statistics.median(py_times)
    print(f"median: command line {cli:.3f} s, Python {py:.3f} s, ratio {py / cli:.3f}")
    print(f"images: shape {cli_image.shape}, max |difference| / max = {diff:.2e}")
    print(f"backend: {py_image.attrs.get('backend_detail', '?')}")


if __name__ == "__main__":
    main()
