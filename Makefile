# Two commands matter: `make run` and `make test`. Both build the environment first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run chat test lint format bench lock clean

$(STAMP): requirements.lock requirements-dev.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	@# The lock holds every transitive pin, so pip installs it as is (--no-deps) and
	@# `pip check` proves it complete: left to resolve, pip 23 looks an extra such as
	@# litellm's httpx[http2] up on the index and fails hash mode once a newer release exists.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
		-r requirements-dev.lock
	$(BIN)/python -m pip check
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/bot run

chat: $(STAMP)
	$(BIN)/bot chat

lint: $(STAMP)
	$(BIN)/ruff check bot channels tools tests bench
	$(BIN)/ruff format --check bot channels tools tests bench
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest -q -n auto

format: $(STAMP)
	$(BIN)/ruff format bot channels tools tests bench
	$(BIN)/ruff check --fix bot channels tools tests bench

bench: $(STAMP)
	$(BIN)/python -m bench

# Re-resolve every pin (needs the package index); commit the result. requirements.lock is
# what the daemon runs with (the Docker image installs it); the dev lock adds the tools,
# constrained to the same versions.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra build --universal --python-version 3.11 \
		--generate-hashes -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml --extra build --extra dev --universal \
		--python-version 3.11 --generate-hashes -c requirements.lock -o requirements-dev.lock

clean:
	rm -rf $(VENV)
