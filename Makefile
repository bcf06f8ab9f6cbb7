# `make run` and `make test` are the two commands: both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

LINKS  := $(HOME)/.local/bin

.PHONY: install run test lint format bench fuzz clean

install: $(STAMP) $(LINKS)/memvault $(LINKS)/memvault-hook

$(STAMP): pyproject.toml
	@echo "==> [1/4] creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> [2/4] upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
# The CPU build of torch goes in first, so the `local` extra does not pull a CUDA build.
	@echo "==> [3/4] installing PyTorch (CPU build), for the local embedding model"
	$(BIN)/python -m pip install --progress-bar on torch==2.13.0
	@echo "==> [4/4] installing memvault and its dependencies"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev,local,openai,anthropic]'
	touch $(STAMP)

# The commands the README uses, on PATH: links into ~/.local/bin (the XDG user bin folder).
$(LINKS)/%: $(STAMP)
	@mkdir -p $(LINKS)
	@ln -sf "$(abspath $(BIN))/$*" "$@"
	@echo "==> $* is $@ -> $(abspath $(BIN))/$*"
	@case ":$$PATH:" in *":$(LINKS):"*) ;; *) echo "    add $(LINKS) to your PATH to run it as \`$*\`";; esac

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

# A longer property-based run over the whole API (make test runs a short one).
fuzz: install
	MEMVAULT_FUZZ_EXAMPLES=1000 $(BIN)/pytest tests/fuzz -p no:cacheprovider --timeout=3600

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
