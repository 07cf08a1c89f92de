# `make check` runs what CI runs besides the tests; `make test` the tests; `make fix` formats.
PY ?= .venv/bin
.PHONY: check fix test

check:
	$(PY)/ruff format --check .
	$(PY)/ruff check .
	$(PY)/mypy
	$(PY)/lint-imports

fix:
	$(PY)/ruff format .
	$(PY)/ruff check --fix .

test:
	$(PY)/python -m pytest
