#!/usr/bin/env bash
# Install the development dependencies into .venv and run every check: lint, format, types, layers,
# tests.
# The tests of the PostgreSQL metric store start a real server from the installed PostgreSQL
# binaries (Debian: apt-get install postgresql); they fail, not skip, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
# the layer order of DESIGN.md's layout: pyproject.toml's [tool.importlinter] contracts
.venv/bin/lint-imports
# Two workers (the CI machine has two cores); tests/conftest.py keeps every Spark test on one.
.venv/bin/python -m pytest -q -n "${ASSAY_TEST_WORKERS:-2}" "$@"
