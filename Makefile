# Every target installs what it needs into .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test check format clean tensorboard lesson notebooks explore

LOGDIR ?= runs
TB_FLAGS ?=
WARM   := import seq2seq.training.train, seq2seq.lab.evaluate, seq2seq.lab.compare, \
          seq2seq.lab.translate, seq2seq.lab.probe, seq2seq.lab.experiment, seq2seq.data.synth, \
          seq2seq.data.download, pytest

# TORCH_CPU=1 adds PyTorch's CPU wheel index, so pip takes torch's CPU build
# (a 190 MB wheel) instead of the default index's CUDA build and its
# nvidia-* packages (several GB): make install TORCH_CPU=1, before any other
# target makes .venv (or after rm -rf .venv).
TORCH_CPU ?=
CPU_INDEX := https://download.pytorch.org/whl/cpu
PIP_INDEX := $(if $(filter 1,$(TORCH_CPU)),--extra-index-url $(CPU_INDEX))

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile $(PIP_INDEX) -c constraints.txt -e '.[dev]'
	@# pip would byte-compile every file it installs (all of torch: 40 s of a
	@# 80-s install on 2 cores); importing the lab's modules once compiles
	@# only those, even where PYTHONDONTWRITEBYTECODE is set.
	env -u PYTHONDONTWRITEBYTECODE $(PY) -c "$(WARM)"
	touch $(STAMP)

# The recurrences' compiled step loops (seq2seq/model/fast/compiled.py): about 25 s
# with g++, again when their source or torch changes; without a compiler one
# line says the Python loops will run.
BUILT := seq2seq/model/fast/csrc/build/.built
$(BUILT): $(STAMP) $(wildcard seq2seq/model/fast/csrc/*.cpp seq2seq/model/fast/csrc/*.h)
	$(PY) -m seq2seq.model.fast.compiled
	mkdir -p $(dir $(BUILT)) && touch $(BUILT)

install: $(STAMP) $(BUILT)

LESSON_STAMP := $(VENV)/.lesson-installed
LAB_FLAGS ?=

$(LESSON_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --no-compile $(PIP_INDEX) -c constraints.txt -e '.[dev,lesson]'
	touch $(LESSON_STAMP)

## Train no-attention vs attention on the shipped corpus; print BLEU by length.
demo: install
	$(PY) scripts/demo.py

## A local page on the demo's runs: type a sentence, watch each attend (make explore EXPLORE_FLAGS="--port 8766").
EXPLORE_FLAGS ?=
explore: install
	$(PY) scripts/demo.py
	$(VENV)/bin/seq2seq explore runs/demo/none-s1 runs/demo/additive-s1 $(EXPLORE_FLAGS)

## TensorBoard on the runs (make tensorboard LOGDIR=runs/demo TB_FLAGS="--port 6007").
tensorboard: install
	$(VENV)/bin/tensorboard --logdir $(LOGDIR) $(TB_FLAGS)

## The lesson's notebooks in JupyterLab (make lesson LAB_FLAGS="--port 8889 --no-browser").
lesson: $(LESSON_STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=docs/notebooks $(LAB_FLAGS)

## Execute the notebooks' sources and write their copies with outputs (a few minutes once their runs exist; the first time they train them: the demo's 3.5-12 min, the short recipe's 4-15, the families' about 10).
notebooks: install
	$(PY) scripts/lessons/build_notebooks.py

## The test suite (what CI runs).
test: install
	$(PY) -m pytest -q --durations=15

## Lint, format check (ruff, 88 columns), the import contracts (import-linter) and the types (mypy).
check: $(STAMP)
	$(VENV)/bin/ruff check seq2seq tests scripts docs/notebooks docs/teacher
	$(VENV)/bin/ruff format --check seq2seq tests scripts docs/notebooks docs/teacher
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format seq2seq tests scripts docs/notebooks docs/teacher
	$(VENV)/bin/ruff check --fix seq2seq tests scripts docs/notebooks docs/teacher

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache seq2seq/model/fast/csrc/build
