# The two commands of README.md. Both do all set-up themselves on a fresh machine.
#   make demo   build, then migrate the shipped F3 cut with configs/demo.toml into out/demo/
#   make test   build, then run the whole test suite (what CI runs)

CARGO ?= cargo

.PHONY: demo test
demo:
	@scripts/setup.sh
	$(CARGO) run --release -- run configs/demo.toml

# The test run requires the independent readers (segyio, h5py, numpy) and NVRTC that `setup.sh --test`
# installs: the variables below make the tests that use them fail rather than skip.
test: export SEISIMAGE_INTEROP_TESTS = 1
test: export SEISIMAGE_PYTHONPATH = $(CURDIR)/.tools/py
test: export SEISIMAGE_NVRTC_TESTS = 1
# The property tests draw their cases from this seed, so that a CI run is reproducible; pick another seed
# to explore new cases: `PROPTEST_RNG_SEED=7 make test`.
test: export PROPTEST_RNG_SEED ?= 20261121
test: export LD_LIBRARY_PATH := $(CURDIR)/.tools/nvrtc/nvidia/cu13/lib$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
test:
	@scripts/setup.sh --test
	$(CARGO) test --release --workspace
