# Two commands set up everything on a fresh machine:
#   make run   creates .venv, installs lockgate, runs the word-count example end to end
#   make test  installs what the tests need, starts their services, runs tests, ruff, mypy and
#              builds the documentation (make docs)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
PACKAGES := engine actors connectors

.PHONY: run test install install-dev install-examples lint typecheck pytest docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check "uv>=0.4"

install: $(BIN)/python
	$(UV) pip install --quiet --python $(BIN)/python --compile-bytecode -e .

install-examples: $(BIN)/python
	$(UV) pip install --quiet --python $(BIN)/python --compile-bytecode -e ".[examples,web,cli]"

install-dev: $(BIN)/python
	$(UV) pip install --quiet --python $(BIN)/python --compile-bytecode -e ".[dev]"

run: install
	$(BIN)/python examples/word_count.py examples/data/canal_locks.txt

# mypy cannot follow setuptools' editable import hook, so it reads the packages through a tree
# of symlinks that mirrors the installed layout (lockgate/engine -> engine, ...).
.typecheck/lockgate:
	mkdir -p .typecheck/lockgate
	for p in $(PACKAGES); do ln -sfn ../../$$p .typecheck/lockgate/$$p; done

typecheck: install-dev .typecheck/lockgate
	$(BIN)/mypy -p lockgate.engine -p lockgate.actors -p lockgate.connectors

# The documentation, into build/site: --strict fails on any warning (a broken link or anchor,
# a missing snippet file, a reference to a name the docstrings do not have). The reference is
# read from the same tree of symlinks as mypy's.
docs: install-dev .typecheck/lockgate
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

pytest: install-dev .typecheck/lockgate
	scripts/with-services $(BIN)/pytest

# Tests run against real PostgreSQL, Redis and an S3 server (moto), started and stopped by
# scripts/with-services; with CI=true a service that is missing fails the run.
test: install-dev .typecheck/lockgate
	scripts/install-services
	scripts/with-services $(BIN)/pytest
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck
	$(MAKE) --no-print-directory docs

bench: install-examples
	$(BIN)/python bench/keyed_sum.py
	$(BIN)/python bench/word_count.py
	$(BIN)/python bench/checkpoints.py
	$(BIN)/python bench/snapshot_sync.py
	$(BIN)/python bench/state_backends.py
	$(BIN)/python bench/incremental.py --restore --parallelism 2
	$(BIN)/python bench/async_io.py
	$(BIN)/python bench/unaligned.py
	$(BIN)/python bench/event_time.py
	$(BIN)/python bench/watermark_generators.py
	$(BIN)/python bench/windows.py
	$(BIN)/python bench/timestamps.py
	$(BIN)/python bench/simulation.py
	$(BIN)/python bench/exactly_once.py
	$(BIN)/python bench/simulation_fidelity.py
	$(BIN)/python bench/metrics.py
	$(BIN)/python bench/rest_polling.py
	$(BIN)/python bench/transport.py
	$(BIN)/python bench/ingress.py

clean:
	rm -rf $(VENV) .typecheck build *.egg-info .pytest_cache .mypy_cache .ruff_cache
