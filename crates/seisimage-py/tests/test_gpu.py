"""The CUDA engine from Python: the same image as the CPU engine. Runs with SEISIMAGE_GPU_TESTS=1 on a
machine with a CUDA device, as the Rust GPU tests do; skipped elsewhere."""

import os

import numpy as np
import pytest

import seisimage
from conftest import DEMO_VELOCITY

pytestmark = pytest.mark.skipif(
    os.environ.get("SEISIMAGE_GPU_TESTS") != "1",
    reason="set SEISIMAGE_GPU_TESTS=1 on a machine with a CUDA device to run it",
)


@pytest.mark.parametrize("method", ["phase-shift", "stolt", "split-step"])
def test_cuda_gives_the_cpu_image(f3, method):
    data = seisimage.open(f3)
    velocity = 1800.0 if method == "stolt" else DEMO_VELOCITY
    common = dict(velocity=velocity, method=method, dz=2.0, zmax=264.0, fmax=80.0)
    gpu = seisimage.migrate(data, backend="cuda", **common)
    cpu = seisimage.migrate(data, backend="cpu", **common)
    assert gpu.attrs["backend"] == "cuda"
    a, b = gpu.values.astype(np.float64), cpu.values.astype(np.float64)
    # As the Rust GPU parity tests: relative L2 difference within float32 rounding of the two engines.
    assert np.linalg.norm(a - b) / np.linalg.norm(b) <= 1e-4
