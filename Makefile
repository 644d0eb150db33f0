# procbench — two commands on a fresh machine: `make leaderboard` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_DB := var/demo.duckdb
PORT   ?= 8501

.PHONY: setup leaderboard demo test test-fast bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	$(BIN)/python -m pip install --quiet -e '.[site,models,dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/procbench demo --db $(DEMO_DB)

leaderboard: demo
	$(BIN)/procbench leaderboard --db $(DEMO_DB) --port $(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -x -q

bench: $(STAMP)
	$(BIN)/python -m bench.run

lint: $(STAMP)
	$(BIN)/ruff check --select F,E9 .
	$(BIN)/procbench check
	$(BIN)/procbench fmt --check

clean:
	rm -rf var .pytest_cache .hypothesis
