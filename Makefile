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

.PHONY: help install lock run manage test lint format check-services smoke bench clean

help:
	@echo "make run    - install, migrate the embedded SQLite database, load demo data, serve"
	@echo "              on http://HOST:PORT (default 127.0.0.1:8000; make run PORT=8001)"
	@echo "make manage ARGS='...' - manage.py with the checkout's venv (e.g. ARGS=createsuperuser)"
	@echo "make test   - install and run the whole suite against PostgreSQL and Redis"
	@echo "make lock   - refresh requirements/*.txt from pyproject.toml (UPGRADE=1: newest)"
	@echo "make lint   - ruff (check, format), import-linter (layers), mypy, hadolint (Dockerfile)"
	@echo "make smoke  - the deployment smoke test: wheel, fresh venv, nginx, gunicorn, worker"
	@echo "make bench  - run the benchmark scripts (see docs/performance.md)"

# The locked versions (requirements/dev.txt: the app's lock plus the tools), then this
# checkout without resolving anything again; pip check fails on a dependency that
# pyproject.toml names and the lock lacks (run make lock).
$(STAMP): pyproject.toml requirements/app.txt requirements/dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

install: $(STAMP)

# Refresh the locks from pyproject.toml (pip-tools): requirements/app.txt is what the image,
# the deployment guide and the upgrade test install; requirements/dev.txt adds the tools
# and tests within the same versions. Keeps existing pins unless UPGRADE=1.
UPGRADE ?=
lock: install
	CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile --quiet --strip-extras \
	  --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade) \
	  -o requirements/app.txt pyproject.toml
	CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile --quiet --strip-extras \
	  --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade) \
	  --extra dev -c requirements/app.txt -o requirements/dev.txt pyproject.toml

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
