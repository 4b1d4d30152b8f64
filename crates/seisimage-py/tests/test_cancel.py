"""Ctrl-C, or an exception raised by a progress callback, stops a run through its cancel token: the run
ends early, its files are removed and it writes no manifest."""

import os
import signal
import threading

import pytest

import seisimage
from conftest import diffractors, write_segy

# Large enough that a run takes many seconds on one core: a stop that did not reach the engine would
# leave a finished run (a manifest) behind.
SHAPE, DT_MS, VELOCITY, BIN_M = (48, 48, 750), 4.0, 2000.0, 20.0
IMAGING = {"dz": 1.0, "zmax": 1400.0, "fmax": 100.0}


def long_job(tmp_path):
    segy = tmp_path / "long.sgy"
    write_segy(segy, diffractors(*SHAPE, DT_MS, VELOCITY, BIN_M), DT_MS)
    return {
        "input": {"path": str(segy), "bin_size": [BIN_M, BIN_M]},
        "velocity": {"kind": "constant", "velocity": VELOCITY},
        "imaging": IMAGING,
        "compute": {"backend": "cpu"},
        "output": {"dir": str(tmp_path / "out"), "inlines": [10], "roi": [{"name": "all", "formats": ["npy"]}]},
    }


class Stop(Exception):
    pass


def test_an_exception_from_the_progress_callback_cancels_the_run(tmp_path):
    job = long_job(tmp_path)
    seen = []

    def progress(stage, done, total):
        seen.append((stage, done, total))
        if stage == "phase shift":
            raise Stop(stage)

    with pytest.raises(Stop):
        seisimage.run(job, progress=progress)
    stage, done, total = seen[-1]
    assert stage == "phase shift" and done < total
    out = tmp_path / "out"
    assert not (out / "manifest.json").exists()
    assert [p.name for p in out.iterdir() if not p.name.startswith(".seisimage")] == []


def test_ctrl_c_cancels_a_migration(tmp_path):
    values = diffractors(*SHAPE, DT_MS, VELOCITY, BIN_M)
    seen = []

    def progress(stage, done, total):
        seen.append((stage, done, total))
        # Once the engine is at work, Ctrl-C as a user gives it (SIGINT to this process).
        if stage == "phase shift" and len(seen) == len([s for s in seen if s[0] != "phase shift"]) + 1:
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()

    # Python turns SIGINT into KeyboardInterrupt only when the process started with SIGINT's default
    # action: a shell's background job, or a harness, may start it ignored. Ctrl-C as at a terminal, then.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            seisimage.migrate(
                values, velocity=VELOCITY, dt_ms=DT_MS, bin_m=BIN_M, backend="cpu", progress=progress, **IMAGING
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    stage, done, total = seen[-1]
    assert stage == "phase shift" and done < total
