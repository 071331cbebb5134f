# Two set-up commands: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: demo test quick install install-native install-test install-check lit pytest memcheck fuzz fuzz-campaign bench bench-all test-iree clean

$(PY):
	$(PYTHON) -m venv $(VENV)

install: $(PY)
	$(PIP) install -e .

install-test: $(PY)
	$(PIP) install -e '.[test]'

# The native backend where it can be had: its Python extra (llvmlite) from PyPI,
# and mlir-opt 22 from the Debian package mlir-22-tools when apt-get can install
# it (as root). Without them the demo runs the Python backend and says what to install.
install-native: install
	$(PIP) install -e '.[native]' || echo "warning: could not install the native extra (pip install -e '.[native]')" >&2
	@if ! command -v mlir-opt >/dev/null && [ ! -x /usr/lib/llvm-22/bin/mlir-opt ]; then \
	    if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	        (apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mlir-22-tools >/dev/null) \
	            || echo "warning: could not install mlir-22-tools (apt-get install mlir-22-tools)" >&2; \
	    else \
	        echo "note: the native backend needs mlir-opt 22: apt-get install mlir-22-tools (as root)" >&2; \
	    fi; \
	fi

demo: install-native
	$(PY) -m irad.demo

pytest: install-test
	$(PY) -m pytest -q -n auto

# A non-editable install (`pip install .`) into a fresh venv, then the demo, run
# outside the source tree so that only the installed package is imported.
install-check:
	rm -rf build/install-check
	$(PYTHON) -m venv build/install-check/venv
	build/install-check/venv/bin/python -m pip --disable-pip-version-check -q install .
	cd build/install-check && venv/bin/python -c "import irad, irad.passes.differentiate; assert 'site-packages' in irad.__file__, irad.__file__"
	cd build/install-check && venv/bin/python -m irad.demo

# A quick local run: no native or IREE backend, no upstream mlir-opt round trip.
quick: install-test
	$(PY) -m pytest -q -n auto -m "not native and not iree" --no-mlir-roundtrip
	$(VENV)/bin/lit -q filecheck

lit: install-test
	$(VENV)/bin/lit -v filecheck

test: install-test
	$(PY) -m pytest -q -n auto
	$(VENV)/bin/lit -v filecheck

# The IREE backend's tests (skipped by `make test` unless the iree extra is
# installed): installs the extra, then runs them on IREE's llvm-cpu target.
test-iree: install-test
	$(PIP) install -e '.[iree]'
	$(PY) -m pytest -q -n auto -m iree

# The native memory tests, and the failed checks that unwind native calls,
# under glibc's strict heap checks (any double free or heap corruption aborts;
# freed memory is filled, so a use after free reads garbage; glibc >= 2.34
# needs libc_malloc_debug preloaded for them) and MLIR's runtime verification
# of memref accesses (docs/backends/native.md, Memory).
MALLOC_DEBUG := $(firstword $(wildcard /lib/*/libc_malloc_debug.so.0 /usr/lib/*/libc_malloc_debug.so.0))
memcheck: install-test
	LD_PRELOAD=$(MALLOC_DEBUG) MALLOC_CHECK_=3 MALLOC_PERTURB_=165 IRAD_NATIVE_VERIFY_MEMREFS=1 \
	  $(PY) -m pytest -q -n auto -p no:cacheprovider -m native tests/backends/test_native_memory.py tests/backends/test_native_checks.py \
	  tests/backends/test_native_out_of_memory.py \
	  tests/backends/test_native_blas.py tests/backends/test_native_buffers.py tests/backends/test_native_stack.py

# The random-program fuzzer at length: FUZZ_EXAMPLES programs (10,000 by default)
# from the seed FUZZ_SEED (random, and printed, by default). Failures are shrunk,
# printed and saved under tests/fuzz/regressions/ (see docs/testing.md).
FUZZ_EXAMPLES ?= 10000
# drawn once (:=), so the seed printed is the seed used
ifndef FUZZ_SEED
FUZZ_SEED := $(shell $(PYTHON) -c "import random; print(random.randrange(2**32))")
endif
fuzz: install-test
	@echo "fuzzing $(FUZZ_EXAMPLES) programs, seed $(FUZZ_SEED)"
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_SEED=$(FUZZ_SEED) $(PY) -m pytest -q -n auto -p no:randomly tests/fuzz/test_fuzz.py tests/fuzz/test_int_fuzz.py tests/fuzz/test_float32_fuzz.py tests/fuzz/test_static_fuzz.py tests/fuzz/test_vmap_fuzz.py tests/fuzz/test_python_fuzz.py tests/fuzz/test_linalg_fuzz.py tests/fuzz/test_jnp_fuzz.py tests/backends/test_native_shared_inits.py

# A campaign that counts: FUZZ_EXAMPLES programs on FUZZ_BACKEND (python or
# native), going on past failures, one line per kind of failure at the end and
# the smallest program of each kind saved to FUZZ_OUT (tests/fuzz/campaign.py).
FUZZ_BACKEND ?= python
FUZZ_OUT ?= build/fuzz-$(FUZZ_BACKEND)-$(FUZZ_SEED)
fuzz-campaign: install-test
	$(PY) -m tests.fuzz.campaign --programs $(FUZZ_EXAMPLES) --backend $(FUZZ_BACKEND) --seed $(FUZZ_SEED) --out $(FUZZ_OUT)

# The one table of every workload on every system and the plot of gradient time
# against size (docs/benchmarks.md); the detailed benchmarks behind the other
# sections of that page with bench-all.
bench: $(PY)
	$(PIP) install -e '.[bench]'
	$(PY) bench/native.py
	$(PY) bench/scaling.py
	$(PY) bench/vmap.py
	$(PY) bench/cumsum_gradient.py
	$(PY) bench/first_call.py
	$(PY) bench/jacobians.py

bench-all: bench
	$(PIP) install -e '.[iree]'
	$(PY) bench/call_overhead.py
	$(PY) bench/stack_buffers.py
	$(PY) bench/native_switches.py
	$(PY) bench/cpu_time.py
	$(PY) bench/scalar.py
	$(PY) bench/arrays.py
	$(PY) bench/vector_math.py
	$(PY) bench/loop_records.py
	$(PY) bench/native_checks.py
	$(PY) bench/inlining.py
	$(PY) bench/compile_time.py
	$(PY) bench/iree_backend.py
	$(PY) bench/scaling_out.py

clean:
	rm -rf $(VENV) build *.egg-info
