"""The lesson's notebooks: execute their sources, write the executed copies.

    python scripts/lessons/build_notebooks.py [NAME ...] [--out DIR]
    python scripts/lessons/build_notebooks.py --check

The sources are docs/notebooks/NN_*.py in jupytext's percent format (a diff
reads like code); the executed copies beside them, NN_*.ipynb, carry the
outputs and pictures that GitHub and JupyterLab show. Each source runs top to
bottom in a fresh kernel, with the repository root as its working folder and
no network; a cell that raises (an ``assert`` included) stops it, and this
script exits 1 naming the notebook and the cell. ``NAME`` (e.g. ``01``)
builds only the notebooks whose file name starts with it; ``--out`` writes
the executed copies there instead of beside the sources (``--folder``,
default docs/notebooks/, with docs/teacher/ after it).

The teacher's edition, docs/teacher/teacher_answers.py, holds the answers to
the students' "Try it" prompts and exercises with the code that checks them;
it lives outside the students' folder, so a student's copy of
docs/notebooks/ holds no answer, and is built and checked like the others,
after them, its copy beside it.

``--check`` executes nothing: it exits 1 if an executed copy is missing or its
cells are not those of its source (rebuild it), which is what keeps the
committed copies current with the code they show.

The notebooks that train read LESSON_DATA, LESSON_RUNS and LESSON_MODES from
the environment (see notebook 3); the test suite points them at runs it has
trained already.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from jupyter_client.kernelspec import NoSuchKernel
from nbclient import NotebookClient
from nbclient.exceptions import CellControlSignal, CellExecutionError, DeadKernelError

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "docs" / "notebooks"
TEACHER = REPO / "docs" / "teacher"
TIMEOUT_S = 1800  # one cell; notebook 3 trains four models at its full budget


def sources(folder: Path, names: list[str]) -> list[Path]:
    """The students' notebooks in order (NN_name.py), then the teacher's
    (teacher*.py, in ``folder`` or, for the lesson's own folder, TEACHER)."""
    teacher = [folder, TEACHER] if folder.resolve() == FOLDER else [folder]
    found = sorted(folder.glob("[0-9][0-9]_*.py"))
    found += sorted(p for f in teacher for p in f.glob("teacher*.py"))
    if not found:
        sys.exit(f"error: {folder}: no notebook sources (NN_name.py)")
    chosen = [p for p in found if not names or any(p.name.startswith(n) for n in names)]
    if missing := [n for n in names if not any(p.name.startswith(n) for p in found)]:
        sys.exit(f"error: no notebook in {folder} starts with {', '.join(missing)}")
    return chosen


def cells(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """What a notebook says, without its outputs."""
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def check(paths: list[Path]) -> int:
    stale = []
    for src in paths:
        built = src.with_suffix(".ipynb")
        if not built.is_file():
            stale.append(f"{built.name}: missing")
        elif cells(nbformat.read(built, as_version=4)) != cells(jupytext.read(src)):
            stale.append(f"{built.name}: its cells differ from {src.name}")
    for line in stale:
        print(f"error: {line}; run python scripts/lessons/build_notebooks.py")
    return 1 if stale else 0


def failed_cell(nb: nbformat.NotebookNode) -> str:
    """ "cell K" (1-based, markdown counted) of the first cell holding an error."""
    for k, cell in enumerate(nb.cells, start=1):
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return f"cell {k}"
    return "a cell"


def execute(src: Path, out: Path) -> float:
    """Run ``src`` in a fresh kernel and write the executed copy; seconds.
    The copy keeps the source's jupytext header, which pairs the two."""
    nb = jupytext.read(src)
    client = NotebookClient(
        nb,
        timeout=TIMEOUT_S,
        kernel_name="python3",
        record_timing=False,  # no timestamps in the copies
        coalesce_streams=True,  # a child's lines, passed on one by one: one output
        # The kernel starts in the notebook's own folder, as JupyterLab starts
        # it: the notebooks find the checkout from there (seq2seq.lesson).
        resources={"metadata": {"path": str(src.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as err:  # the traceback, then one line
        print(err, file=sys.stderr)
        first = (err.evalue or "").strip().splitlines()[:1]
        why = f"{err.ename}: {first[0]}" if first else err.ename
        sys.exit(f"error: {src.name}: {failed_cell(nb)} raised {why}")
    except (CellControlSignal, DeadKernelError) as err:  # a timeout, a dead kernel
        sys.exit(f"error: {src.name}: {type(err).__name__}: {err}")
    except NoSuchKernel:
        sys.exit(f"error: {src.name}: no python3 kernel; run make install (ipykernel)")
    took = time.perf_counter() - start
    for k, cell in enumerate(nb.cells):  # stable ids: a rebuild diffs by content
        cell.id = f"cell-{k}"
    out.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out / src.with_suffix(".ipynb").name)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks whose name starts so")
    parser.add_argument("--folder", type=Path, default=FOLDER, help="the sources")
    parser.add_argument("--out", type=Path, help="for the copies (default: beside)")
    parser.add_argument("--check", action="store_true", help="compare, run nothing")
    args = parser.parse_args()
    paths = sources(args.folder, args.names)
    if args.check:
        sys.exit(check(paths))
    for src in paths:
        took = execute(src, args.out or src.parent)
        print(f"{src.name}: executed in {took:.0f} s", flush=True)


if __name__ == "__main__":
    main()
