# Set-up and entry points. `make demo` and `make test` each create .venv first if needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Public benchmark instances (holding prins/): ../shared/benchmarks when it is there, else unset
# (the tests that read them are skipped; a folder named but missing is an error)
ifneq ($(wildcard ../shared/benchmarks/prins),)
CLRP_BENCHMARKS_DIR ?= $(abspath ../shared/benchmarks)
endif
export CLRP_BENCHMARKS_DIR
# RL4CO source tree that upstream/rl4co-clrp.patch applies to (read-only; copied, then patched)
CLRP_RL4CO_SNAPSHOT ?= $(abspath ../shared/rl4co)
export CLRP_RL4CO_SNAPSHOT

.PHONY: setup demo test lint format bench tables clean upstream-patch upstream-check mutation campaign

$(VENV)/.installed: setup.cfg pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e ".[dev]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(PY) examples/demo.py --out demo_solution.png

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# One pytest-xdist worker per CPU, idle workers taking queued tests from busy ones (a few tests
# take most of the time); every test writes only under its own tmp_path.
test: lint
	$(PY) -m pytest -n auto --dist worksteal --durations=15

# Every evaluation table with its default rows and subsets (hours on a CPU; resumable).
tables: setup
	for t in clrp10 clrp20 clrp50 clrp100 cross-size prins paper-sets; do $(PY) -m experiments table $$t || exit 1; done

# The CLRP env as a contribution to RL4CO: regenerate upstream/rl4co-clrp.patch from the
# package's source, and run RL4CO's own test suite on a patched copy of the snapshot (minutes).
upstream-patch: setup
	$(PY) upstream/make_patch.py --snapshot "$(CLRP_RL4CO_SNAPSHOT)"

upstream-check: setup
	bash upstream/check.sh "$(PY)" "$(CLRP_RL4CO_SNAPSHOT)"

# Mutation testing of one module with mutmut (not part of `make test`; minutes to half an hour
# per module, cached): make mutation MODULE=clrp_rl4co/envs/clrp/validity.py (mutation/README.md).
mutation: setup
	OMP_NUM_THREADS=1 nice -n 10 $(PY) mutation/run.py $(if $(MODULE),$(MODULE),--list)

# One session of the training campaign (experiments/campaign/, experiments/README.md): every
# DRLHQ preset continues for MINUTES of wall time on one GPU (or the CPU), archives into OUT at
# every validation; then `python -m experiments.campaign apply $(OUT)` ships the improvements.
MINUTES ?= 60
OUT ?= runs/campaign-out
campaign: setup
	$(PY) -m experiments.campaign run --minutes $(MINUTES) --out $(OUT)

bench: setup
	$(PY) benchmarks/env_step.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
