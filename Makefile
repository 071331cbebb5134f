# Two set-up commands: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: demo test quick install install-test install-check lit pytest bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

install: $(PY)
	$(PIP) install -e .

install-test: $(PY)
	$(PIP) install -e '.[test]'

demo: install
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

# A quick local run: no native backend, no upstream mlir-opt round trip.
quick: install-test
	$(PY) -m pytest -q -n auto -m "not native" --no-mlir-roundtrip
	$(VENV)/bin/lit -q filecheck

lit: install-test
	$(VENV)/bin/lit -v filecheck

test: install-test
	$(PY) -m pytest -q -n auto
	$(VENV)/bin/lit -v filecheck

bench: $(PY)
	$(PIP) install -e '.[bench]'
	$(PY) bench/scalar.py
	$(PY) bench/arrays.py
	$(PY) bench/native.py
	$(PY) bench/inlining.py

clean:
	rm -rf $(VENV) build *.egg-info
