# kernelcourse: `make book` and `make test` set up a local virtual environment on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The stamp names the pyproject.toml content it installed, so an edit (not a touch) reinstalls.
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)

# The chapters' kernel must import this checkout's package, also when VENV is shared.
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
# Data: an explicit KERNELCOURSE_DATA wins; a ../shared/data beside the clone is used next.
ifeq ($(origin KERNELCOURSE_DATA),undefined)
  ifneq ($(wildcard ../shared/data/README.md),)
    export KERNELCOURSE_DATA := $(abspath ../shared/data)
  endif
endif
# Same text with 1 or 2 BLAS threads is a promise of the notebooks; keep runs on 2 at most.
export OMP_NUM_THREADS ?= 2
export MPLBACKEND := Agg

NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
         --nbval-cell-timeout=600

.PHONY: help setup book test unit nbval notebooks homework lab bench lint clean

help:
	@echo "make book       build the HTML book into _build/html (offline)"
	@echo "make test       unit tests and strict nbval over every notebook"
	@echo "make notebooks  re-execute every notebook in place"
	@echo "make homework   release the student starters from book/homework/solutions"
	@echo "make lab        start JupyterLab in the project environment"
	@echo "make bench      speed comparisons against scikit-learn / LIBSVM"

setup: $(STAMP)

$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "kernelcourse needs Python >= 3.11 (set PYTHON=...)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[book,dev]"
	rm -f $(VENV)/.installed-*
	touch $@

book: $(STAMP)
	$(VENV)/bin/jupyter-book build . --builder html -W -n --keep-going

test: $(STAMP)
	$(PY) -m pytest tests book $(NBVAL)

unit: $(STAMP)
	$(PY) -m pytest tests

nbval: $(STAMP)
	$(PY) -m pytest book $(NBVAL)

notebooks: $(STAMP)
	$(PY) -m kernelcourse.notebooks execute book

homework: $(STAMP)
	$(PY) -m kernelcourse.homework release

lab: $(STAMP)
	$(VENV)/bin/jupyter lab book

bench: $(STAMP)
	$(PY) -m benchmarks

lint: $(STAMP)
	$(VENV)/bin/ruff check kernelcourse tests benchmarks

clean:
	rm -rf _build
