# Two commands matter on a fresh machine: `make demo` and `make test`.
export UV_SYSTEM_CERTS := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1

UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

.PHONY: install demo chat test lint typecheck unit integration clean

install:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --frozen

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

integration: install
	$(UV) run pytest tests/integration

test: install
	$(UV) run ruff check .
	$(UV) run mypy
	$(UV) run pytest

clean:
	rm -rf .reach .pytest_cache .mypy_cache .ruff_cache
