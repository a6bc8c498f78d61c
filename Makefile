# Two commands do everything: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The official MCP SDK's 1.x client in a venv of its own (tests/test_mcp_v1_client.py); 2.x is in $(VENV).
MCP1_VENV  ?= .mcp1-venv
MCP1_REQS  := tests/mcp1/requirements.txt
MCP1_STAMP := $(MCP1_VENV)/.installed
# pytest-xdist workers: one per core by default (each has its own database, data folder and queue
# namespace: tests/conftest.py); TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= auto

.PHONY: run test install mcp1-venv lint bench clean

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
	$(BIN)/pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: $(STAMP) $(MCP1_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy \
	  && $(BIN)/mypy --python-executable $(MCP1_VENV)/bin/python tests/mcp1/drive.py

bench: $(STAMP)
	$(BIN)/python -m bench.read_path

clean:
	rm -rf $(VENV) $(MCP1_VENV) var .pytest_cache .mypy_cache
