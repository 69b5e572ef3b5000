"""The lesson's notebooks (docs/notebooks/): each runs top to bottom in a fresh
kernel, its asserted properties holding; the committed executed copies show
the current sources; the exercises' checking cells accept their solutions."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
from conftest import LESSON_TRAINED, REPO

from seq2seq.lab.demo import bottleneck_shape

FOLDER = REPO / "docs" / "notebooks"
TEACHER = REPO / "docs" / "teacher"  # out of the students' folder
BUILD = REPO / "scripts" / "lessons" / "build_notebooks.py"
STUDENTS = sorted(p.stem for p in FOLDER.glob("[0-9][0-9]_*.py"))
NOTEBOOKS = [*STUDENTS, "teacher_answers"]
TRAINED = ("03", "04", "te")  # read the lesson's runs (conftest.lesson_runs)


def build(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BUILD), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def test_there_are_six_notebooks() -> None:
    assert [n[:2] for n in STUDENTS] == ["01", "02", "03", "04", "05", "06"], STUDENTS
    # The answers live outside the folder students open (make lesson).
    assert (
        not list(FOLDER.glob("teacher*")) and (TEACHER / "teacher_answers.py").is_file()
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_runs_and_its_asserts_hold(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Notebooks 3 and 4 read the `none` and `additive` runs the suite trains
    (their budget in CI: those two modes, already trained, and a probe on
    1,000 sentences); their asserts use the margins of test_train.py.
    Notebook 6 reads those two and the suite's tiny Transformer; its own
    trainings (the reversal task, the pictures) run in full."""
    env = dict(os.environ)
    if name[:2] in TRAINED:
        runs = request.getfixturevalue("lesson_runs")
        env |= {
            "LESSON_DATA": str(runs["corpus"]),
            "LESSON_RUNS": str(runs["root"]),
            "LESSON_MODES": ",".join(LESSON_TRAINED),
            "LESSON_PROBE_SENTENCES": "1000",
            "LESSON_DEMO": str(runs["file"]),  # the suite's runs stand in
        }
    if name[:2] == "06":
        runs = request.getfixturevalue("lesson_runs")
        tiny = request.getfixturevalue("tiny_transformer")
        found = {"none": runs["none"], "additive": runs["additive"]}
        found = {k: str(v) for k, v in (found | {"transformer": tiny}).items()}
        env["LESSON_FAMILY_RUNS"] = json.dumps(found)
    done = build(name[:7], "--out", str(tmp_path), env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert (tmp_path / f"{name}.ipynb").is_file()


def cell_output(notebook: Path, tag: str) -> str:
    """The text a committed copy's cell tagged ``tag`` printed."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    tagged = [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{notebook.name}: {len(tagged)} cells tagged {tag}"
    streams = [o for o in tagged[0]["outputs"] if o["output_type"] == "stream"]
    return "".join("".join(o["text"]) for o in streams)


def test_the_committed_bottleneck_notebook_shows_the_bottleneck() -> None:
    """What a student reads in notebook 3's committed copy: the demo's recipe,
    `none` learning short sentences and falling with length, attention flat.
    It reads the copy's printed table (no training, no timing); the shape's
    thresholds are seq2seq/lab/demo.py's, with their margins over three seeds
    and two CPU models stated there."""
    text = cell_output(FOLDER / "03_the_bottleneck.ipynb", "bottleneck-table")
    assert "recipe: configs/experiments/demo.yaml" in text, text
    rows = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("none", "additive"):
            rows[words[0]] = [float(c) for c in words[1:]]
    assert len(rows) == 2 and len(rows["none"]) == 5, text  # five length buckets
    shape = bottleneck_shape(rows)
    assert shape.holds, shape.reasons
    assert "the bottleneck's shape: holds" in text


WHERE = FOLDER / "06_where_attention_appears.ipynb"


def test_the_committed_causal_map_is_zero_above_the_diagonal() -> None:
    """Notebook 6's trained decoder self-attention, every layer and head."""
    text = cell_output(WHERE, "causal-map")
    assert "above the diagonal: max 0.0" in text, text
    aer = float(text.split("AER on this pair: ")[1].split()[0])
    assert 0 <= aer < 0.5, text  # the shipped corpus's Transformer: 0.20 on test


def test_the_committed_cost_slopes_are_quadratic_against_linear() -> None:
    """The slopes notebook 6 printed from scripts/bench/attention_cost.py:
    the issue's bounds (self-attention >= 1.6, the RNN <= 1.3); docs/speed.md
    has 1.82 and 0.82 for the same encoders from 512 on."""
    text = cell_output(WHERE, "cost-slopes")
    slopes = {
        line.split(":")[0].strip(): float(line.split("time slope ")[1].split(",")[0])
        for line in text.splitlines()
        if "time slope" in line
    }
    assert slopes["self-attention"] >= 1.6 and slopes["biGRU"] <= 1.3, slopes


def test_the_committed_deep_stack_trains_only_with_residuals_and_norm() -> None:
    """Notebook 6's deep stack: residual + norm reaches a loss under half of
    either ablation's, and reverses sequences where they reverse none."""
    text = cell_output(WHERE, "deep-stack")
    rows = {}
    for line in text.splitlines():
        name, rest = line.split(":", 1)
        loss = float(rest.split("steps,")[1].split("over the last 20")[0])
        reversed_ = float(rest.split("reversed")[1].split("%")[0]) / 100
        rows[name.strip()] = (loss, reversed_)
    ok = rows["residual + norm"]
    for ablation in ("no residual", "no norm"):
        assert ok[0] < 0.5 * rows[ablation][0], rows
        assert ok[1] > 0.5 > 0.1 > rows[ablation][1], rows


def test_the_committed_families_table_ends_the_bottleneck() -> None:
    """Notebook 6's BLEU by length: one vector falls with length, the
    Transformer stays near flat (results.md: 99.2 to 92.0)."""
    text = cell_output(WHERE, "families-table")
    rows = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("none", "additive", "transformer"):
            rows[words[0]] = [float(c) for c in words[1:]]
    assert len(rows) == 3, text
    tf, none = rows["transformer"], rows["none"]
    assert tf[0] >= 80 and tf[-1] >= tf[0] - 10, rows
    assert none[-1] < 0.5 * none[0] and tf[-1] > none[-1] + 50, rows


def test_the_shape_check_fails_without_the_bottleneck() -> None:
    """The committed-copy check can fail: an untrained `none` (the short
    recipe's table) and an attention model that falls with length."""
    assert bottleneck_shape({"none": [51.4, 8.0], "additive": [98.8, 91.8]}).holds
    short = bottleneck_shape({"none": [2.2, 0.2], "additive": [52.9, 26.9]})
    assert not short.holds and len(short.reasons) == 3, short.reasons
    flat = bottleneck_shape({"none": [40.0, 35.0], "additive": [95.0, 94.0]})
    assert flat.reasons == ("none keeps 35.0 of 40.0, over half",)


# A decimal number in a markdown cell: a measurement, unless it names a part of
# a paper ("Sec. 3.2", "Fig. 2.1") or a version.
DECIMAL = re.compile(r"(?<![\w.])(?<!Sec\. )(?<!Fig\. )(?<!eq\. )\d+\.\d+(?![\w.]*\w)")
NAMED_FILE = re.compile(r"[\w.-]+(?:/[\w.-]+)+\.(?:md|json|jsonl|yaml|py|txt)")


def notebook_numbers(nb: dict) -> set[str]:
    """The decimals a committed copy's code and outputs hold."""
    text = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            text.append("".join(cell["source"]))
            for out in cell.get("outputs", []):
                text.append("".join(out.get("text", "")))
                text.append("".join(out.get("data", {}).get("text/plain", "")))
    return set(DECIMAL.findall("\n".join(text)))


@pytest.mark.parametrize("path", [*(f"{n}.ipynb" for n in STUDENTS), "teacher"])
def test_every_decimal_in_the_prose_is_printed_or_sourced(path: str) -> None:
    """Each number with a decimal point in a notebook's prose is one its
    cells print or hold, or one in a file the same markdown cell names (a
    results page, a config): prose cannot quote a figure nothing shows."""
    file = TEACHER / "teacher_answers.ipynb" if path == "teacher" else FOLDER / path
    nb = json.loads(file.read_text(encoding="utf-8"))
    shown = notebook_numbers(nb)
    unsourced = []
    for k, cell in enumerate(nb["cells"], start=1):
        if cell["cell_type"] != "markdown":
            continue
        prose = "".join(cell["source"])
        named = "".join(
            (REPO / f).read_text(encoding="utf-8", errors="replace")
            for f in NAMED_FILE.findall(prose)
            if (REPO / f).is_file()
        )
        sourced = shown | set(DECIMAL.findall(named))
        unsourced += [
            f"cell {k}: {n}" for n in DECIMAL.findall(prose) if n not in sourced
        ]
    assert not unsourced, f"{file.name}: {unsourced}"


def test_the_decimal_check_catches_an_unsourced_figure() -> None:
    nb = {
        "cells": [
            {"cell_type": "code", "source": ["print(0.25)"], "outputs": []},
            {
                "cell_type": "markdown",
                "source": ["BLEU rose 0.25, then 0.75 (Sec. 3.2)"],
            },
        ]
    }
    prose = "".join(nb["cells"][1]["source"])
    assert [n for n in DECIMAL.findall(prose) if n not in notebook_numbers(nb)] == [
        "0.75"
    ]


def test_each_notebook_states_the_reading_time_the_lesson_page_gives() -> None:
    """One time estimate per notebook: its header's "About N minutes" is
    docs/lesson.md's for it, and each range of minutes the header gives for
    training (e.g. 4-15) is on the page's row for it too."""
    page = (REPO / "docs" / "lesson.md").read_text(encoding="utf-8")
    for name in STUDENTS:
        header = jupytext.read(FOLDER / f"{name}.py").cells[0].source
        about = re.search(r"\*About (\d+) minutes", header)
        row = next(
            line for line in page.splitlines() if f"notebooks/{name}.ipynb" in line
        )
        assert about and f"| {about.group(1)} min |" in row, (name, header[:200])
        for span in re.findall(r"(\d+(?:\.\d+)?-\d+) minutes", header):
            assert f"{span} min" in row, (name, span)


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


def teacher_solutions() -> dict[str, str]:
    """The SOLUTIONS and ANSWERS the teacher's edition states, read from its
    source, as the lines ``KEY = value`` that notebook 5 would hold."""
    notebook = jupytext.read(TEACHER / "teacher_answers.py")
    found: dict = {}
    for name in ("SOLUTIONS", "ANSWERS"):
        cell = next(c.source for c in notebook.cells if f"{name} = {{" in c.source)
        text = cell[cell.index(f"{name} = {{") : cell.index("}", cell.index(name)) + 1]
        namespace: dict = {}
        exec(text, namespace)
        found[name] = namespace[name]
    answers = {f"ANSWER_{k}": repr(v) for k, v in found["ANSWERS"].items()}
    return found["SOLUTIONS"] | answers


def teacher_attention() -> str:
    """The teacher's edition's ``attention`` function, as source."""
    notebook = jupytext.read(TEACHER / "teacher_answers.py")
    cell = next(c.source for c in notebook.cells if "def attention(" in c.source)
    return cell[: cell.index("\n\n\nprint(")] + "\n"


def test_the_exercise_checks_accept_the_solutions(tmp_path: Path) -> None:
    """As shipped, the attention check and each exercise's check say "not
    yet" and every question "no answer yet"; with the teacher's solutions
    written in, each says "done" and every question "right". No solution
    is in the student's notebook."""
    source = FOLDER / "05_check_and_exercises.py"
    teacher = (TEACHER / "teacher_answers.py").read_text()
    code = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    text = "\n\n".join(code)
    solutions = teacher_solutions()
    exercises = sorted(k for k in solutions if k.startswith("EXERCISE"))
    assert exercises == ["EXERCISE_1", "EXERCISE_2", "EXERCISE_3"]
    assert len(solutions) == 3 + 14
    for key, value in solutions.items():
        if key.startswith("EXERCISE"):
            assert value in re.sub(r"\n#\s+", " ", teacher), key  # in its prose
            assert value not in re.sub(r"\n#\s+", " ", source.read_text()), key
        text = re.sub(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
    stub = re.compile(
        r"^def attention\(.*?raise NotImplementedError\(.*?\)\n", re.M | re.S
    )
    assert len(stub.findall(text)) == 1
    text = stub.sub(lambda _: teacher_attention(), text)
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
    assert shipped.stdout.count("not yet") == 4 and "done:" not in shipped.stdout
    assert shipped.stdout.count("no answer yet") == 14 and "right" not in shipped.stdout
    assert solved.stdout.count("done:") == 4 and "not yet" not in solved.stdout
    assert solved.stdout.count(": right: ") == 14


def test_no_student_notebook_prints_a_knowledge_check_answer() -> None:
    """The committed student copies print no question's right answer or its
    explanation: notebook 5's checks say "no answer yet" as shipped, and no
    output of any student notebook holds a right option's feedback."""
    from seq2seq.lesson.quiz import QUESTIONS

    rights = [q.feedback[q.right] for q in QUESTIONS]
    for name in STUDENTS:
        nb = json.loads((FOLDER / f"{name}.ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            shown = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
            for feedback in rights:
                assert feedback not in shown, (name, feedback)
            if 'check("' in "".join(cell["source"]) and name.startswith("05"):
                assert "no answer yet" in shown, shown
