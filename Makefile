# Two commands set everything up on a fresh machine:
#   make run   - embedded default (SQLite, in-process tasks, demo data) on http://127.0.0.1:8000
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

.PHONY: help install run serve test lint format check-services bench clean

help:
	@echo "make run    - install, migrate the embedded SQLite database, load demo data, serve :8000"
	@echo "make test   - install and run the whole suite against PostgreSQL and Redis"
	@echo "make lint   - ruff (check, format), import-linter (layers), mypy"
	@echo "make bench  - run the benchmark scripts (see docs/performance.md)"

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py runserver 127.0.0.1:8000

check-services: install
	@DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) scripts/check_services.py

test: install check-services
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	SECRET_KEY=test-only-$$RANDOM$$RANDOM DEBUG=0 \
	$(VENV)/bin/pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .ruff_cache
