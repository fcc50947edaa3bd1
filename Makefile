# Two commands set everything up on a fresh machine:
#   make run   - embedded default (SQLite, in-process tasks, demo data) on http://127.0.0.1:8000
#                (make run PORT=8001 HOST=0.0.0.0 for another address)
#   make test  - the whole suite against real PostgreSQL and Redis
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

# make test defaults: the local servers; override with DATABASE_URL / REDIS_URL.
TEST_DATABASE_URL ?= $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/arena)
TEST_REDIS_URL ?= $(or $(REDIS_URL),redis://127.0.0.1:6379/15)
PYTEST_ARGS ?=
# make run: where the development server listens (checked before anything else runs).
HOST ?= 127.0.0.1
PORT ?= 8000
# make manage ARGS="import_battles export.jsonl": manage.py with this checkout's venv.
ARGS ?=

.PHONY: help install run manage test lint format check-services smoke bench clean

help:
	@echo "make run    - install, migrate the embedded SQLite database, load demo data, serve"
	@echo "              on http://HOST:PORT (default 127.0.0.1:8000; make run PORT=8001)"
	@echo "make manage ARGS='...' - manage.py with the checkout's venv (e.g. ARGS=createsuperuser)"
	@echo "make test   - install and run the whole suite against PostgreSQL and Redis"
	@echo "make lint   - ruff (check, format), import-linter (layers), mypy, hadolint (Dockerfile)"
	@echo "make smoke  - the deployment smoke test: wheel, fresh venv, nginx, gunicorn, worker"
	@echo "make bench  - run the benchmark scripts (see docs/performance.md)"

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	@$(PY) scripts/check_port.py $(HOST) $(PORT)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py runserver $(HOST):$(PORT)

manage: install
	$(PY) manage.py $(ARGS)

check-services: install
	@DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) scripts/check_services.py

test: install check-services
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	SECRET_KEY=test-only-$$RANDOM$$RANDOM USER_ID_HMAC_KEY=test-only-pseudonyms DEBUG=0 \
	$(VENV)/bin/pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(VENV)/bin/hadolint Dockerfile

# Needs the PostgreSQL server of make test (it makes and drops databases of its own), Redis
# (SMOKE_REDIS_URL: a database number of its own) and nginx (.ci/run installs it).
SMOKE_REDIS_URL ?= redis://127.0.0.1:6379/7
smoke: install
	DATABASE_URL=$(TEST_DATABASE_URL) SMOKE_REDIS_URL=$(SMOKE_REDIS_URL) $(PY) deploy/smoke_test.py

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .ruff_cache
