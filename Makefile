# Two commands do everything: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The official MCP SDK's 1.x client in a venv of its own (tests/test_mcp_v1_client.py); 2.x is in $(VENV).
MCP1_VENV  ?= .mcp1-venv
MCP1_REQS  := tests/mcp1/requirements.txt
MCP1_STAMP := $(MCP1_VENV)/.installed
# The PACT reference CLI (TailorAU/pact, MIT), which tests/test_pact_cli.py drives against both apps: cloned
# from PACT_SRC (a checkout, a mirror or a URL) at PACT_REF and built with npm in PACT_CLI_DIR, a folder
# outside the repository; none of its code is ever part of Concord. Needs git, Node.js 20+ and npm.
PACT_MIRROR  := /work/.mirror/TailorAU+pact/repo
PACT_SRC     ?= $(if $(wildcard $(PACT_MIRROR)),$(PACT_MIRROR),https://github.com/TailorAU/pact.git)
PACT_REF     ?= v2.0.3
PACT_CLI_DIR ?= $(HOME)/.cache/concord/pact-cli
# pytest-xdist workers: two per core by default (each has its own database, data folder and queue
# namespace: tests/conftest.py): a third of a test's time is spent waiting on its subprocesses, servers and
# workers, and a second worker per core fills it (tests/README.md); TEST_WORKERS=0 runs the suite in this process.
# An idle worker takes tests queued for a busy one (`--dist worksteal`), and the tests marked slow go first.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# Python caches compiled modules (and pytest its assertion-rewritten test modules) in __pycache__: a machine
# whose environment sets PYTHONDONTWRITEBYTECODE would otherwise compile every module of Concord and of the
# tests afresh in each test worker and in every `concord` process a test starts (12 s of a worker's 24 s
# collection on 2026-11-27, tests/README.md).
unexport PYTHONDONTWRITEBYTECODE

# The PACT conformance runner (TailorAU/pact spec/v2.0/conformance), built outside the repository from
# PACT_SRC (a bare mirror or a work tree) for tests/test_pact_conformance.py and `concord pact lab`. It is
# taken at PACT_RUNNER_REF, the branch head: the suite the v2.0.3 tag carries has 13 vectors and a runner
# without /__reset; the head's 19 vectors (the ones the reference server passes) test v2.0.3 too.
PACT_RUNNER ?= $(HOME)/.cache/concord/pact-runner
PACT_RUNNER_REF ?= HEAD

.PHONY: run test install mcp1-venv lint bench clean pact-cli pact-runner

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

$(MCP1_STAMP): $(MCP1_REQS)
	$(PYTHON) -m venv $(MCP1_VENV)
	$(MCP1_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(MCP1_REQS)
	touch $(MCP1_STAMP)

mcp1-venv: $(MCP1_STAMP)

install: $(STAMP) $(MCP1_STAMP)

run: $(STAMP)
	$(BIN)/concord migrate
	$(BIN)/concord seed
	$(BIN)/concord serve

test: $(STAMP) $(MCP1_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/mypy --python-executable $(MCP1_VENV)/bin/python tests/mcp1/drive.py
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

lint: $(STAMP) $(MCP1_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy \
	  && $(BIN)/mypy --python-executable $(MCP1_VENV)/bin/python tests/mcp1/drive.py

pact-cli:
	@case "$(abspath $(PACT_CLI_DIR))/" in "$(CURDIR)"/*) \
	  echo "PACT_CLI_DIR must be outside the repository (it is $(abspath $(PACT_CLI_DIR)))" >&2; exit 2;; esac
	@if [ -d "$(PACT_CLI_DIR)/.git" ]; then \
	  git -C "$(PACT_CLI_DIR)" fetch --quiet --tags "$(PACT_SRC)" "$(PACT_REF)"; \
	else \
	  rm -rf "$(PACT_CLI_DIR)" && mkdir -p "$(dir $(abspath $(PACT_CLI_DIR)))" \
	  && git clone --quiet "$(PACT_SRC)" "$(PACT_CLI_DIR)"; \
	fi
	git -C "$(PACT_CLI_DIR)" checkout --quiet --detach "$(PACT_REF)"
	cd "$(PACT_CLI_DIR)/cli" && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build
	@echo "PACT CLI built: node $(PACT_CLI_DIR)/cli/bin/pact.js (tests/test_pact_cli.py finds it there, or at CONCORD_PACT_CLI)"

# The spec's conformance folder (vectors and runner) is exported from PACT_SRC at PACT_RUNNER_REF, then
# the runner is built with its own lock file; nothing of it enters this repository.
pact-runner:
	rm -rf $(PACT_RUNNER) && mkdir -p $(PACT_RUNNER)
	if [ -d $(PACT_SRC)/.git ] || [ -f $(PACT_SRC)/HEAD ]; then \
	  git --git-dir=$$( [ -d $(PACT_SRC)/.git ] && echo $(PACT_SRC)/.git || echo $(PACT_SRC) ) \
	    archive $(PACT_RUNNER_REF) spec/v2.0/conformance | tar -x -C $(PACT_RUNNER); \
	else \
	  mkdir -p $(PACT_RUNNER)/spec/v2.0 && cp -r $(PACT_SRC)/spec/v2.0/conformance $(PACT_RUNNER)/spec/v2.0/; \
	fi
	cd $(PACT_RUNNER)/spec/v2.0/conformance/runner && npm ci --no-audit --no-fund && npm run build
	@echo "runner: $(PACT_RUNNER)/spec/v2.0/conformance/runner/dist/index.js"
	@echo "vectors: $(PACT_RUNNER)/spec/v2.0/conformance"

bench: $(STAMP)
	$(BIN)/python -m bench.read_path

clean:
	rm -rf $(VENV) $(MCP1_VENV) var .pytest_cache .mypy_cache
