# The two commands of README.md. Both do all set-up themselves on a fresh machine.
#   make demo   build, then migrate the shipped F3 cut with configs/demo.toml into out/demo/
#   make test   build, then run the whole test suite (what CI runs)

CARGO ?= cargo
export SEISIMAGE_INTEROP_TESTS := 1
export SEISIMAGE_PYTHONPATH := $(CURDIR)/.tools/py

.PHONY: demo test setup
setup:
	@scripts/setup.sh

demo: setup
	$(CARGO) run --release -- run configs/demo.toml

test:
	@scripts/setup.sh --test
	$(CARGO) test --release
