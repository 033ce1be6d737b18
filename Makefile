# Set-up and entry points. `make demo` and `make test` each create .venv first if needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CLRP_BENCHMARKS_DIR ?= $(abspath ../shared/benchmarks)
export CLRP_BENCHMARKS_DIR

.PHONY: setup demo test lint format bench tables clean

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

test: lint
	$(PY) -m pytest --durations=15

# Every evaluation table with its default rows and subsets (hours on a CPU; resumable).
tables: setup
	for t in clrp10 clrp20 clrp50 clrp100 cross-size prins paper-sets; do $(VENV)/bin/clrp-rl4co table $$t || exit 1; done

bench: setup
	$(PY) benchmarks/env_step.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
