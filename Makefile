# The two commands of README.md. Both do all set-up themselves on a fresh machine.
#   make demo   build, then migrate the shipped F3 cut with configs/demo.toml into out/demo/
#   make test   build, then run the whole test suite (what CI runs), the Python package's included
#   make python build the Python package's wheel into target/wheels/ (see docs/python.md)

CARGO ?= cargo

.PHONY: demo test python
demo:
	@scripts/setup.sh
	$(CARGO) run --release -- run configs/demo.toml

# The test run requires the independent readers (segyio, h5py, numpy) and NVRTC that `setup.sh --test`
# installs: the variables below make the tests that use them fail rather than skip.
test: export SEISIMAGE_INTEROP_TESTS = 1
test: export SEISIMAGE_PYTHONPATH = $(CURDIR)/.tools/py
test: export SEISIMAGE_MDIO_PYTHONPATH = $(CURDIR)/.tools/mdio
test: export SEISIMAGE_SEGYSAK_PYTHONPATH = $(CURDIR)/.tools/py:$(CURDIR)/.tools/segysak
test: export SEISIMAGE_NVRTC_TESTS = 1
# The property tests draw their cases from this seed, so that a CI run is reproducible; pick another seed
# to explore new cases: `PROPTEST_RNG_SEED=7 make test`.
test: export PROPTEST_RNG_SEED ?= 20261121
test: export LD_LIBRARY_PATH := $(CURDIR)/.tools/nvrtc/nvidia/cu13/lib$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
test:
	@scripts/setup.sh --test
	$(CARGO) test --release --workspace
	$(MAKE) --no-print-directory python
	.tools/venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps target/wheels/seisimage-*.whl
	SEISIMAGE_BIN=$(CURDIR)/target/release/seisimage .tools/venv/bin/python -m pytest -q crates/seisimage-py/tests

# The wheel's native module links the library as built by `cargo build --release` (same profile, same
# features), so after a release build only the binding itself is compiled.
python:
	@scripts/setup.sh --python
	rm -f target/wheels/seisimage-*.whl
	PYTHONPATH=$(CURDIR)/.tools/maturin .tools/maturin/bin/maturin build --quiet --release --strip \
		-m crates/seisimage-py/Cargo.toml --out target/wheels
