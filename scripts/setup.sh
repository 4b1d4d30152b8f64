#!/usr/bin/env bash
# One-time set-up on a fresh machine (Rust, gcc and Python 3 with pip are assumed; no root, no cmake, no
# CUDA needed). Safe to run again: every step is skipped once done.
#
#   scripts/setup.sh           CMake >= 3.26 for the bundled static HDF5 build, into .tools/cmake
#   scripts/setup.sh --test    also what the tests need beyond the build: the Python packages the
#                              interoperability tests use (segyio, h5py, numpy, xarray, h5netcdf, tifffile:
#                              independent readers of our files; multidimio for MDIO, into .tools/mdio;
#                              segysak, into .tools/segysak) and NVRTC from PyPI, so that every CUDA kernel is compile-checked even
#                              on a machine without a GPU; and the Python package's tools (below)
#   scripts/setup.sh --python  maturin from PyPI into .tools/maturin (builds the Python wheel, `make python`)
#                              and, with --test, a virtual environment .tools/venv with numpy, xarray,
#                              pytest and segyio for the Python package's tests
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.tools
mkdir -p "$tools"

pip_install() { # target, packages...
  local target=$1; shift
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$target" "$@" 2>&1 | grep -v -e 'Running pip as the' -e '^$' || true
}

cmake_bin=$tools/cmake/cmake/data/bin/cmake
if [ ! -x "$cmake_bin" ]; then
  echo "setup: installing CMake >= 3.26 from PyPI into $tools/cmake (needed to build HDF5 statically)"
  pip_install "$tools/cmake" 'cmake>=3.26,<4'
fi
"$cmake_bin" --version | head -n 1 | sed 's/^/setup: /'

if [ "${1:-}" = "--test" ]; then
  if ! PYTHONPATH=$tools/py python3 -c 'import segyio, h5py, numpy, xarray, h5netcdf, tifffile' 2>/dev/null; then
    echo "setup: installing segyio, h5py, numpy, xarray, h5netcdf and tifffile into $tools/py (independent readers for the tests)"
    pip_install "$tools/py" segyio h5py numpy xarray h5netcdf tifffile
  fi
  # MDIO's Python package (multidimio) in a folder of its own: its newest release for this Python fails in
  # its SEG-Y ingestion with the newer xarray the other readers use (arrays it writes into are read-only).
  if ! PYTHONPATH=$tools/mdio python3 -c 'import mdio' 2>/dev/null; then
    echo "setup: installing multidimio (MDIO) into $tools/mdio (independent reader and writer of MDIO for the tests)"
    pip_install "$tools/mdio" multidimio 'xarray<2026'
  fi
  # segysak (the xarray extension for seismic) into .tools/segysak, used together with .tools/py (its
  # numpy, pandas, xarray, h5netcdf and segyio come from there): segysak itself and what it imports,
  # scipy, matplotlib and five small packages (about 320 MB, 20 s), not the dask and distributed it also
  # lists, which opening a file does not use.
  if ! PYTHONPATH=$tools/py:$tools/segysak python3 -c 'import segysak' 2>/dev/null; then
    echo "setup: installing segysak into $tools/segysak (an independent reader of our HDF5 coordinates for the tests)"
    pip_install "$tools/segysak" --no-deps segysak
    pip_install "$tools/segysak" scipy matplotlib loguru addict more-itertools tqdm typing-extensions
  fi
  if [ ! -e "$tools/nvrtc/nvidia/cu13/lib/libnvrtc.so.13" ]; then
    echo "setup: installing NVRTC (CUDA 13.0) into $tools/nvrtc (compile-checks the kernels)"
    pip_install "$tools/nvrtc" --no-deps 'nvidia-cuda-nvrtc==13.0.*'
  fi
fi

if [ "${1:-}" = "--test" ] || [ "${1:-}" = "--python" ]; then
  if ! PYTHONPATH=$tools/maturin "$tools/maturin/bin/maturin" --version >/dev/null 2>&1; then
    echo "setup: installing maturin from PyPI into $tools/maturin (builds the Python wheel)"
    pip_install "$tools/maturin" 'maturin>=1.9,<2'
  fi
fi
if [ "${1:-}" = "--test" ]; then
  if ! "$tools/venv/bin/python" -c 'import numpy, xarray, pytest, segyio' 2>/dev/null; then
    echo "setup: making $tools/venv with numpy, xarray, pytest and segyio (the Python package's tests)"
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/python" -m pip install --quiet --disable-pip-version-check numpy xarray pytest segyio
  fi
fi
