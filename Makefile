# The course's commands. `make demo` and `make test` set everything up on a fresh clone
# (a virtual environment in .venv with pinned dependencies) and then run.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
JOBS ?= 2
# The lab `make check` checks: LAB=17.03, lab=17.03 or `make check 17.03`. No default, so that a
# typo never checks another lab; the words after `check` are labs, not commands to make.
ifeq (check,$(firstword $(MAKECMDGOALS)))
CHECK_GOALS := $(wordlist 2,$(words $(MAKECMDGOALS)),$(MAKECMDGOALS))
ifneq (,$(CHECK_GOALS))
$(eval $(CHECK_GOALS):;@:)
endif
endif

.PHONY: help install demo demo-full test test-quick lint sync lab docs check submit clean

help:
	@echo "Órdenes del curso:"
	@echo "make demo   - instala y ejecuta cada laboratorio con la referencia y califica los ejemplos"
	@echo "make demo-full - lo mismo con los modelos de tamaño completo (más lento)"
	@echo "make test   - instala y ejecuta todas las pruebas (referencia, labs, copias, docs, estilo)"
	@echo "make test-quick - las pruebas rápidas, mientras desarrollas (sin las lentas ni las del navegador)"
	@echo "make lab    - abre JupyterLab en la carpeta del curso (labs/, src/ y un terminal)"
	@echo "make check LAB=17.01 - autocomprueba tu implementación de un laboratorio (o make check 17.01)"
	@echo "make submit - prepara el archivo que entregas"
	@echo "make docs   - construye los sitios en español e inglés en site/"
	@echo "make sync   - regenera plantillas, cuadernos, salidas de referencia y respuestas guardadas desde solutions/"
	@echo "Idioma de los mensajes: MINIMODEL_LANG=es|en (p. ej. make check LAB=17.01 MINIMODEL_LANG=en)"
	@echo "Course commands:"
	@echo "make demo   - install, then run every lab against the reference and grade the samples"
	@echo "make demo-full - the same with the full-size models (slower)"
	@echo "make test   - install, then run all tests (reference, labs, drift, docs, lint)"
	@echo "make test-quick - the fast tests, while you develop (no slow or browser tests)"
	@echo "make lab    - open JupyterLab on the course folder (labs/, src/ and a terminal)"
	@echo "make check LAB=17.01 - self-check your implementation for one lab (or make check 17.01)"
	@echo "make submit - build the archive you hand in"
	@echo "make docs   - build the Spanish and English sites into site/"
	@echo "make sync   - regenerate stubs, notebooks, reference outputs and stored answers from solutions/"
	@echo "Language of the messages: MINIMODEL_LANG=es|en (e.g. make check LAB=17.01 MINIMODEL_LANG=en)"

# Reinstall only when the dependency list changes.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing pinned dependencies into $(VENV) (first run only)..."
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[course,dev]' 2>&1 \
		| grep -v "is ignored: it is neither" || true
	@$(BIN)/python -c "import minimodel, torch, nbgrader" 
	@touch $@

install: $(STAMP)

demo: install
	$(BIN)/python -m minimodel.labrun --impl reference --size demo --figures build/figures
	$(BIN)/minimodel-grader demo
	@echo "Lecciones · lessons: make docs, luego · then site/es/index.html · site/en/index.html"
	@echo "Tamaño completo · full size: make demo-full"

demo-full: install
	$(BIN)/python -m minimodel.labrun --impl reference --size full --figures build/figures

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder tests

test-quick: install
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder -m "not slow and not browser" tests

lint: install
	$(BIN)/ruff check .

sync: install
	$(BIN)/python -m grader.build.sync $(if $(KEEP_COPIES),--keep-copies)
	$(BIN)/minimodel-grader references
	$(BIN)/python -m grader.build.snapshots
	$(BIN)/python -m grader.build.mistake_matrix

lab: install
	$(BIN)/python -m minimodel.jupyter_lab

docs: install
	$(BIN)/python docs_site/build.py

submit: install
	$(BIN)/python -m minimodel.submit

check: install
	@$(BIN)/minimodel check $(LAB) $(lab) $(CHECK_GOALS)

# Not while `make lab` runs: its server keeps its runtime files (kernels' connection files) in
# build/jupyter/runtime, named jpserver-<process id>.json.
clean:
	@for server in build/jupyter/runtime/jpserver-*.json; do \
		pid=$${server##*jpserver-}; pid=$${pid%.json}; \
		if [ -f "$$server" ] && kill -0 "$$pid" 2>/dev/null; then \
			echo "[es] JupyterLab está abierto (make lab, proceso $$pid): ciérralo antes de make clean."; \
			echo "[en] JupyterLab is running (make lab, process $$pid): close it before make clean."; \
			exit 1; \
		fi; \
	done
	rm -rf build site .pytest_cache
