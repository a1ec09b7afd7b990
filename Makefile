# Two entry points (see README.md): `make demo` and `make test`.
# Both create .venv if missing and install exactly what requirements.lock pins
# (hash-checked); the venv is re-synced whenever the lock file changes.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-lock

.PHONY: demo test setup lint docs clean

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	@sha256sum requirements.lock > $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/evidence demo --out evidence/demo --sign-key evidence/keys/demo-signing-key.pem
	$(BIN)/evidence site evidence --out site --trusted-keys evidence/keys/trusted-keys.txt
	@echo "Demo run: evidence/demo   Site: site/index.html"

test: $(STAMP)
	bash .ci/install-browser
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check generator tests bench

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir build/docs

clean:
	rm -rf $(VENV) build
