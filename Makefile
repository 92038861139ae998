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
         -p tests.nbval_plugin \
         --nbval-cell-timeout=600
# Perturbed numerics: another OpenBLAS kernel (Sandybridge: AVX without FMA, which every x86-64
# CPU this course supports can run), numba's generic target and one BLAS thread. Every notebook
# must still match its stored outputs to printed precision under these, so that a newcomer's CPU
# (AVX2 or AVX-512, Intel or AMD) gives the numbers the book prints. tests/test_perturbation.py
# reads this line and checks that it really changes low-order bits.
PERTURB := OPENBLAS_CORETYPE=Sandybridge NUMBA_CPU_NAME=generic OMP_NUM_THREADS=1 \
           OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: help setup book book-test pdf chromium poppler doctest test unit nbval nbval-perturbed \
        notebooks homework lab bench bench-scale lint clean

help:
	@echo "make book       build the HTML book into _build/html (offline)"
	@echo "make test       unit tests, doctests, strict nbval over every notebook, then make book-test"
	@echo "make book-test  build the book and its PDF, check every page in headless Chromium"
	@echo "                and read the PDF back"
	@echo "make pdf        the whole book as one PDF: _build/html/kernelcourse.pdf (offline)"
	@echo "make doctest    the Examples sections of the package's docstrings"
	@echo "make nbval-perturbed  the notebooks again under another BLAS kernel, numba target, 1 thread"
	@echo "make notebooks  re-execute every notebook in place (NB=path: only that one)"
	@echo "make homework   release the student starters from book/homework/solutions"
	@echo "make lab        start JupyterLab in the project environment"
	@echo "make bench      speed comparisons against scikit-learn / LIBSVM"
	@echo "make bench-scale  Rahimi & Recht's Forest row on full Covertype (about 30 min);"
	@echo "                writes kernelcourse/benchmark_results/scale_covertype.json"

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

# Two workers (notebooks stay whole on one worker with --dist loadscope), one BLAS thread
# each: on two cores a second BLAS thread per worker only waits for a core, and small
# products then run several times slower. Within 20 minutes on two cores.
test: $(STAMP)
	env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 HYPOTHESIS_PROFILE=ci \
	  $(PY) -m pytest tests book $(NBVAL) -n 2 --dist loadscope \
	  --ignore=tests/test_book_site.py --ignore=tests/test_book_pdf.py
	$(MAKE) --no-print-directory doctest
	$(MAKE) --no-print-directory nbval-perturbed
	$(MAKE) --no-print-directory book-test

# Opens every page of _build/html from disk in headless Chromium (math typeset, images loaded,
# internal links resolve, no console errors, nothing fetched from the network); screenshots go
# to _build/screenshots/. Then reads the PDF back (titles, no ?? or raw TeX, every figure).
book-test: pdf
	$(PY) -m pytest tests/test_book_site.py tests/test_book_pdf.py --book-html=_build/html \
	  --book-pdf=_build/html/kernelcourse.pdf

# The built HTML printed page by page by headless Chromium, joined by poppler's pdfunite
# (kernelcourse/book/pdf.py says why this route and not LaTeX). Two to four minutes.
pdf: book chromium poppler
	$(PY) -m kernelcourse.book.pdf _build/html _build/html/kernelcourse.pdf

# Every Examples section of the package, as doctests. A number matches to its printed
# precision, by the notebooks' rule (tests/doctest_plugin.py).
doctest: $(STAMP)
	$(PY) -m pytest --doctest-modules kernelcourse -p tests.doctest_plugin -p no:cacheprovider

# Debian's chromium for the browser test: installed when missing if we are root (as in CI).
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser test"; \
	    apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium >/dev/null; \
	  else \
	    echo "make book-test needs Chromium: run 'sudo apt-get install chromium' first"; \
	    exit 1; \
	  fi; }

# Debian's poppler-utils (pdfunite for `make pdf`, pdftotext and pdfimages for its test).
poppler:
	@command -v pdfunite >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's poppler-utils for the PDF"; \
	    apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      poppler-utils >/dev/null; \
	  else \
	    echo "make pdf needs poppler-utils: run 'sudo apt-get install poppler-utils' first"; \
	    exit 1; \
	  fi; }

unit: $(STAMP)
	$(PY) -m pytest tests

nbval: $(STAMP)
	$(PY) -m pytest book $(NBVAL)

# Two notebooks at a time: each kernel runs on one BLAS thread here.
nbval-perturbed: $(STAMP)
	env $(PERTURB) $(PY) -m pytest book $(NBVAL) -n 2 --dist loadscope -p no:cacheprovider

# `make notebooks NB=book/05_bochner_random_fourier_features.ipynb` re-executes one notebook.
NB ?= book
notebooks: $(STAMP)
	$(PY) -m kernelcourse.book.notebooks execute $(NB)

homework: $(STAMP)
	$(PY) -m kernelcourse.book.homework_release

lab: $(STAMP)
	$(VENV)/bin/jupyter lab book

bench: $(STAMP)
	$(PY) -m benchmarks

bench-scale: $(STAMP)
	OMP_NUM_THREADS=2 $(PY) -m benchmarks scale

lint: $(STAMP)
	$(VENV)/bin/ruff check kernelcourse tests benchmarks

clean:
	rm -rf _build
