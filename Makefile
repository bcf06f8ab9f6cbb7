# `make run` and `make test` are the two commands: both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP  := $(VENV)/.installed-test
TORCH_STAMP := $(VENV)/.installed-torch
# `make run` installs what serving needs: memvault, its local embedding model, and the
# SDKs of the LLM providers it can be pointed at. `make test` adds the test toolchain
# (pytest, Playwright, Hypothesis, ruff), the PostgreSQL driver and PyTorch.
RUN_EXTRAS  := openai,anthropic
TEST_EXTRAS := dev,openai,anthropic,postgres

LINKS  := $(HOME)/.local/bin

.PHONY: install install-test system-deps run test lint format bench fuzz clean

install: $(STAMP) $(LINKS)/memvault $(LINKS)/memvault-hook

install-test: install $(TEST_STAMP)

$(STAMP): pyproject.toml
	@echo "==> [1/3] creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "==> [3/3] installing memvault and what serving needs (the local embedding model included)"
	$(BIN)/python -m pip install --progress-bar on -e '.[$(RUN_EXTRAS)]'
	touch $(STAMP)

# The test toolchain, in the same .venv, with a stamp of its own: `make run` after
# `make test` installs nothing again, and `make run` alone never installs it.
$(TEST_STAMP): $(STAMP)
	@echo "==> installing the test toolchain (pytest, Playwright, Hypothesis, ruff, PostgreSQL driver)"
	$(BIN)/python -m pip install --progress-bar on -e '.[$(TEST_EXTRAS)]'
	touch $(TEST_STAMP)

# `make test` also installs the `local-torch` extra, so the sentence-transformers provider
# stays tested; `make run` never needs PyTorch. The CPU build of torch goes in first, so
# the extra does not pull a CUDA build.
$(TORCH_STAMP): $(TEST_STAMP)
	@echo "==> installing PyTorch (CPU build) and the local-torch extra, for the tests"
	$(BIN)/python -m pip install --progress-bar on torch==2.13.0
	$(BIN)/python -m pip install --progress-bar on -e '.[$(TEST_EXTRAS),local-torch]'
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
test: install-test $(TORCH_STAMP) system-deps
	$(BIN)/ruff check .
	$(BIN)/pytest -n auto --dist worksteal --durations=20

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install-test
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/board.py

# A longer property-based run over the whole API (make test runs a short one).
fuzz: install-test
	MEMVAULT_FUZZ_EXAMPLES=1000 $(BIN)/pytest tests/fuzz -p no:cacheprovider --timeout=3600

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
