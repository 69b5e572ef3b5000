"""The lesson's notebooks (docs/notebooks/): each runs top to bottom in a fresh
kernel, its asserted properties holding; the committed executed copies show
the current sources; the exercises' checking cells accept their solutions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
from conftest import LESSON_TRAINED, REPO

FOLDER = REPO / "docs" / "notebooks"
BUILD = REPO / "scripts" / "lessons" / "build_notebooks.py"
NOTEBOOKS = sorted(p.stem for p in FOLDER.glob("[0-9][0-9]_*.py"))
TRAINED = ("03", "04")  # read the lesson's runs (conftest.lesson_runs)


def build(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BUILD), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def test_there_are_five_notebooks() -> None:
    assert [n[:2] for n in NOTEBOOKS] == ["01", "02", "03", "04", "05"], NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_runs_and_its_asserts_hold(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Notebooks 3 and 4 read the `none` and `additive` runs the suite trains
    (their budget in CI: those two modes, already trained, and a probe on
    1,000 sentences); their asserts use the margins of test_train.py."""
    env = dict(os.environ)
    if name[:2] in TRAINED:
        runs = request.getfixturevalue("lesson_runs")
        env |= {
            "LESSON_DATA": str(runs["corpus"]),
            "LESSON_RUNS": str(runs["root"]),
            "LESSON_MODES": ",".join(LESSON_TRAINED),
            "LESSON_PROBE_SENTENCES": "1000",
        }
    done = build(name[:2], "--out", str(tmp_path), env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert (tmp_path / f"{name}.ipynb").is_file()


def test_the_committed_copies_are_current() -> None:
    done = build("--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_stale_or_missing_copy_is_reported(tmp_path: Path) -> None:
    for name in ("01_attention_from_scratch", "02_why_scale"):
        shutil.copy(FOLDER / f"{name}.py", tmp_path)
    shutil.copy(FOLDER / "01_attention_from_scratch.ipynb", tmp_path)
    source = tmp_path / "01_attention_from_scratch.py"
    source.write_text(source.read_text() + "\n# %%\nprint('a new cell')\n")
    done = build("--check", "--folder", str(tmp_path))
    assert done.returncode == 1
    assert "01_attention_from_scratch.ipynb: its cells differ" in done.stdout
    assert "02_why_scale.ipynb: missing" in done.stdout


def test_a_failing_cell_fails_the_build(tmp_path: Path) -> None:
    (tmp_path / "01_broken.py").write_text("# %%\nx = 1\n\n# %%\nassert x == 2\n")
    done = build("--folder", str(tmp_path))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == "error: 01_broken.py: cell 2 raised AssertionError", last


# The teacher's solutions, as the notebook states them.
SOLUTIONS = {
    "EXERCISE_1": '["model.attention=scaled_dot"]',
    "EXERCISE_2": '["model.attention=none", "model.encoder.bidirectional=false", '
    '"model.encoder.reverse=true"]',
    "EXERCISE_3": '["model.attention=none", "model.encoder.hidden_size=256", '
    '"model.decoder.hidden_size=512"]',
}


def test_the_exercise_checks_accept_the_solutions(tmp_path: Path) -> None:
    """As shipped, each checking cell says "not yet"; with the solutions
    written in, each says "done"."""
    source = FOLDER / "05_check_and_exercises.py"
    code = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    text = "\n\n".join(code)
    for key, value in SOLUTIONS.items():
        assert value in re.sub(r"\n#\s+", " ", source.read_text()), key
        text = re.sub(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
    for label, program in (("shipped", "\n\n".join(code)), ("solved", text)):
        (tmp_path / f"{label}.py").write_text(program)
    shipped, solved = (
        subprocess.run(
            [sys.executable, str(tmp_path / f"{label}.py")],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=dict(os.environ, LESSON_RUNS=str(tmp_path)),
        )
        for label in ("shipped", "solved")
    )
    assert shipped.returncode == 0, shipped.stderr
    assert solved.returncode == 0, solved.stderr
    assert shipped.stdout.count("not yet") == 3 and "done:" not in shipped.stdout
    assert solved.stdout.count("done:") == 3 and "not yet" not in solved.stdout
