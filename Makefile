# procbench — two commands on a fresh machine: `make leaderboard` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_DB := var/demo.duckdb
PORT   ?= 8501

.PHONY: setup leaderboard demo test test-fast e2e e2e-deps bench bench-quick bench-site bench-site-big screenshots lint docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	$(BIN)/python -m pip install --quiet -e '.[site,models,dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/procbench demo --db $(DEMO_DB)

# The board first (everything that needs no model: seconds), then the site, then the baselines that need a
# model (minutes each on a CPU), each shown as "computing" on its board until its row is stored.
leaderboard: $(STAMP)
	$(BIN)/procbench demo --db $(DEMO_DB) --no-neural
	$(BIN)/procbench leaderboard --db $(DEMO_DB) --port $(PORT) --run-baselines

# The end-to-end browser test needs Debian's chromium; without it (no root, no network) it skips.
# Lint runs first: a lint failure stops the tests.
# Two workers (CI has two cores), a test file per worker at a time so its fixtures are built once.
PYTEST_WORKERS ?= 2
test: $(STAMP) e2e-deps lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -x -q

e2e-deps:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "chromium could not be installed: the e2e browser tests will skip"

e2e: $(STAMP) e2e-deps
	$(BIN)/python -m pytest -q tests/e2e

# Whole pages in headless Chromium (Debian's, via Playwright) on the demo board (real data when the data root has it)
# and on it plus 10 000 generated submissions: first paint and content, cold and warm, server CPU per view, 20 viewers
# at once; var/bench-site.json and the site-bench section of docs/performance.md.
SITE_BENCH := var/site-bench
bench-site: $(STAMP)
	$(BIN)/procbench demo --db $(SITE_BENCH)/demo.duckdb
	$(BIN)/python -m procbench.bench.site generate --from-store $(SITE_BENCH)/demo.duckdb --db $(SITE_BENCH)/store-10k.duckdb --submissions 10000
	$(BIN)/python -m procbench.bench.site pages --store demo=$(SITE_BENCH)/demo.duckdb --store 10k=$(SITE_BENCH)/store-10k.duckdb \
		--output var/bench-site.json --doc docs/performance.md

# Issue #31 at 100 000 submissions (tens of minutes): the store made as bench-site makes its 10k one, the pages of the
# demo, 10k and 100k stores in one run, then Home's first view after a write and warm, in-process, into the site-bench
# section of docs/performance.md (bench-site's stores are reused when present).
bench-site-big: $(STAMP)
	test -f $(SITE_BENCH)/demo.duckdb || $(BIN)/procbench demo --db $(SITE_BENCH)/demo.duckdb
	test -f $(SITE_BENCH)/store-10k.duckdb || $(BIN)/python -m procbench.bench.site generate --from-store $(SITE_BENCH)/demo.duckdb --db $(SITE_BENCH)/store-10k.duckdb --submissions 10000
	$(BIN)/python -m procbench.bench.site generate --from-store $(SITE_BENCH)/demo.duckdb --db $(SITE_BENCH)/store-100k.duckdb --submissions 100000
	$(BIN)/python -m procbench.bench.site pages --store demo=$(SITE_BENCH)/demo.duckdb --store 10k=$(SITE_BENCH)/store-10k.duckdb \
		--store 100k=$(SITE_BENCH)/store-100k.duckdb --output var/bench-site.json --doc docs/performance.md
	$(BIN)/python -m procbench.bench.site home --db $(SITE_BENCH)/store-100k.duckdb --doc docs/performance.md

# Full-page screenshots of the board built from real data (the samples without it): `make screenshots SHOTS=folder`.
SHOTS ?= var/screenshots
screenshots: $(STAMP)
	$(BIN)/procbench demo --db $(SITE_BENCH)/demo.duckdb
	$(BIN)/python -m procbench.bench.site screenshots --db $(SITE_BENCH)/demo.duckdb $(SHOTS)

# Whole processes (procbench score, --help, check) beside the official scorers, then in-process stages;
# writes docs/performance.md.  bench-quick: 1x only, one run each, into var/bench/ (a smoke test).
bench: $(STAMP)
	$(BIN)/python -m procbench.bench.run
	$(BIN)/python -m procbench.submissions.bench_intake --size-mb 1024 --json var/bench/intake.json

bench-quick: $(STAMP)
	$(BIN)/python -m procbench.bench.run --quick --out var/bench/performance-quick.md

# ruff (rules, line limits and the formatter in pyproject's [tool.ruff]), mypy over the packages ([tool.mypy]),
# the import layers and no import cycles ([tool.importlinter]), then the specs and their formatting.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/procbench check
	$(BIN)/procbench fmt --check

# The component and block references in docs/language.md and the registry's index (runners/runtime/_component_index.py)
# are generated from the registry and dsl/model.py (tests fail on drift).
docs: $(STAMP)
	$(BIN)/python -m procbench.dsl.reference --write
	$(BIN)/python -m procbench.runners.runtime.registry --write-index

clean:
	rm -rf var .pytest_cache .hypothesis
