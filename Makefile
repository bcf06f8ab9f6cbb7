# `make run` and `make test` are the two commands: both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint format bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
# The CPU build of torch goes in first, so the `local` extra does not pull a CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev,local,openai,anthropic]'
	touch $(STAMP)

run: install
	$(BIN)/memvault serve

test: install
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/board.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
