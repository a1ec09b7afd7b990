# Two entry points (see README.md): `make demo` and `make test`.
# Both create .venv if missing and install exactly what requirements.lock pins
# (hash-checked); the venv is re-synced whenever the lock file changes.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-lock

.PHONY: demo test setup lint docs clean cad-samples

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
	$(BIN)/ruff check generator tests bench
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check generator tests bench

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir build/docs

clean:
	rm -rf $(VENV) build

# Optional: regenerate the sample CAD parts (STL + review records) in evidence/reviews/.
# The B-Rep kernel (build123d, hash-locked in requirements-cad.lock, numpy included) lives
# in its own venv .venv-cad so the runtime venv never carries it; the generator package is
# imported from the source tree through PYTHONPATH=. (no install into .venv-cad).
CAD_VENV  := .venv-cad
CAD_STAMP := $(CAD_VENV)/.installed-lock

$(CAD_STAMP): requirements-cad.lock
	@test -x $(CAD_VENV)/bin/python || $(PYTHON) -m venv $(CAD_VENV)
	$(CAD_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements-cad.lock
	$(CAD_VENV)/bin/python -m pip check
	@sha256sum requirements-cad.lock > $(CAD_STAMP)

cad-samples: $(CAD_STAMP)
	PYTHONPATH=. $(CAD_VENV)/bin/python -m generator.samples.cad_parts --out evidence/reviews
