# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test test-fast lint format bench docs dashboard clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --quiet --upgrade pip
	$(BIN)/pip install --quiet --quiet -e '.[dashboard,sweep,dev,testbed]'
	touch $@

demo: setup  ## the headline: per-request HTTP vs WebSocket mode on codex-spark
	$(BIN)/loopbudget compare codex-spark:http codex-spark:ws

test: setup lint  ## lint, then the whole test suite
	$(BIN)/python -m pytest

test-fast: setup  ## the fast loop for every change: no fleets, live servers, browser or notebooks
	$(BIN)/python -m pytest -m "not slow and not live and not browser and not notebook"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup  ## speed and memory as ratios against baselines in the same run (docs/performance.md)
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.waits

docs: setup  ## regenerate the tables and numbers the docs quote from the model (minutes)
	$(BIN)/python -m docs.scripts.regenerate

dashboard: setup  ## the what-if dashboard on http://127.0.0.1:8501
	$(BIN)/streamlit run app.py --server.address 127.0.0.1 --server.headless true --client.toolbarMode minimal \
		--browser.gatherUsageStats false

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
