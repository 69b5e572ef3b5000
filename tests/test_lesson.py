"""The lesson's code (seq2seq/lesson/): its checkout found from a notebook's
folder without moving the process, its runs the very runs the CLI makes, from
an editable or an installed package; the corpus slice; forced alignments."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from conftest import REPO, tiny_additive

from seq2seq import modes
from seq2seq.errors import UserError
from seq2seq.lab.experiment import load_experiment, plan
from seq2seq.lesson.alignments import forced_alignments
from seq2seq.lesson.checkout import LESSON_FILE, Checkout
from seq2seq.lesson.corpus import write_short_corpus
from seq2seq.lesson.names import plain_name

NOTEBOOKS = REPO / "docs" / "notebooks"


def test_the_checkout_is_found_from_the_notebooks_folder_without_moving() -> None:
    before = os.getcwd()
    home = Checkout.find(NOTEBOOKS)
    assert home.root == REPO.resolve() and os.getcwd() == before


def test_outside_a_checkout_one_line_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not inside a seq2seq checkout") as err:
        Checkout.find(tmp_path)
    assert "\n" not in str(err.value) and "Checkout(Path(" in str(err.value)


def test_the_lesson_file_with_the_defaults_is_the_shipped_one(tmp_path: Path) -> None:
    """The notebooks train through a copy; with the default corpus and runs
    folder it says what configs/experiments/lesson.yaml says, so that the
    notebooks' runs and `seq2seq experiment`'s are the same runs."""
    home = Checkout(REPO)
    out = home.lesson_file(tmp_path / "l.yaml", Path("data/lesson"), Path("runs"))
    shipped = yaml.safe_load((REPO / LESSON_FILE).read_text(encoding="utf-8"))
    assert yaml.safe_load(out.read_text(encoding="utf-8")) == shipped


def fake_checkout(root: Path) -> Path:
    """``root`` holding a copy of the configs: a checkout to train nothing in."""
    shutil.copytree(REPO / "configs", root / "configs")
    (root / "docs" / "notebooks").mkdir(parents=True)
    return root


def test_the_lesson_file_moves_the_corpus_and_picks_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_checkout(tmp_path / "checkout")
    monkeypatch.chdir(root / "docs")
    home = Checkout(Path(".."))  # a relative root is read as it was meant
    assert home.root == root
    corpus, runs = tmp_path / "corpus", tmp_path / "runs"
    out = home.lesson_file(Path("l.yaml"), corpus, runs, ["none"])  # under root
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert out == root / "l.yaml" and written["runs_dir"] == str(runs)
    assert written["configs"] == ["configs/synth_ende/none.yaml"]
    assert f"data.train.src={corpus}/train.en" in written["overrides"]
    with pytest.raises(UserError, match="no config for dot; it has none, context"):
        home.lesson_file(tmp_path / "x.yaml", corpus, runs, ["dot"])
    shipped = (root / LESSON_FILE).read_bytes()
    with pytest.raises(UserError, match="refused, nothing written: it is the exp"):
        home.lesson_file(LESSON_FILE, corpus, runs)  # the copy over its source
    assert (root / LESSON_FILE).read_bytes() == shipped


def test_run_dirs_are_the_checkouts_from_any_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(NOTEBOOKS)
    dirs = Checkout.find().run_dirs(LESSON_FILE)
    assert dirs["additive"] == REPO / "runs" / "lesson" / "additive-s1"
    assert set(dirs) == {"none", "context", "mean", "hard", "additive"}


def test_the_notebooks_runs_are_the_ones_the_checkout_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Seen from docs/notebooks/, the experiment names the run folders and
    configs `seq2seq experiment` uses in the checkout; and the notebook runs
    it there, showing its output (here its one-line error: no corpus yet)."""
    root = fake_checkout(tmp_path)
    monkeypatch.chdir(root)
    cli_jobs = plan(load_experiment(LESSON_FILE))
    monkeypatch.chdir(root / "docs" / "notebooks")
    home = Checkout.find()
    jobs = plan(home.load_experiment(LESSON_FILE))
    assert [root / j.run_dir for j in cli_jobs] == [j.run_dir for j in jobs]
    assert [root / j.config for j in cli_jobs] == [j.config for j in jobs]
    with pytest.raises(UserError, match="seq2seq experiment failed in"):
        home.experiment(LESSON_FILE)
    assert "error: data/lesson/train.en: file not found" in capsys.readouterr().out
    assert not (root / "docs" / "notebooks" / "runs").exists()


def test_the_lesson_works_from_an_installed_package(tmp_path: Path) -> None:
    """A wheel of the package (not the editable checkout) installed into a
    folder of its own: from the notebooks' folder, the lesson finds the
    checkout, its runs and its attention module, and the working folder
    stays where the kernel started."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source)
    ignore = shutil.ignore_patterns("__pycache__", "build")
    shutil.copytree(REPO / "seq2seq", source / "seq2seq", ignore=ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    wheel = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", "dist"]
    subprocess.run([*wheel, str(source)], cwd=tmp_path, check=True)
    (built,) = (tmp_path / "dist").glob("seq2seq-*.whl")
    target = tmp_path / "site"
    install = [*pip, "install", "--no-deps", "--target", str(target), str(built)]
    subprocess.run(install, check=True)
    script = (
        "import os, seq2seq\n"
        "from seq2seq.lesson.attention import SingleHeadAttention\n"
        "from seq2seq.lesson.checkout import LESSON_FILE, Checkout\n"
        "home = Checkout.find()\n"
        "print(seq2seq.__file__, home.root, os.getcwd(), sep='\\n')\n"
        "print(home.run_dirs(LESSON_FILE)['none'], SingleHeadAttention(8, 4).w_q)\n"
    )
    env = os.environ | {"PYTHONPATH": str(target)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=NOTEBOOKS,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    package, root, cwd, last = done.stdout.splitlines()
    assert Path(package).is_relative_to(target)
    assert Path(root) == REPO.resolve() and Path(cwd) == NOTEBOOKS.resolve()
    assert last.startswith(str(REPO / "runs" / "lesson" / "none-s1"))


def test_the_attention_module_leaves_matplotlib_alone() -> None:
    """Notebooks 1 and 2 draw with plt.show(): importing the lesson's attention
    must not load the lab's figures, which switch matplotlib to a backend that
    shows nothing inline."""
    script = (
        "import sys\n"
        "from seq2seq.lesson.attention import SingleHeadAttention\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_short_corpus_keeps_short_pairs_and_is_written_once(
    tmp_path: Path,
) -> None:
    kept = write_short_corpus(tmp_path, max_words=12)
    lines = (tmp_path / "train.en").read_text(encoding="utf-8").splitlines()
    assert len(lines) == kept["train"] > 0
    assert max(len(line.split()) for line in lines) <= 12
    for ext in ("de", "align"):
        other = (tmp_path / f"train.{ext}").read_text(encoding="utf-8").splitlines()
        assert len(other) == len(lines)
    stamp = (tmp_path / "train.en").stat().st_mtime_ns
    assert write_short_corpus(tmp_path, max_words=12) == kept  # read, not written
    assert (tmp_path / "train.en").stat().st_mtime_ns == stamp


@pytest.fixture(scope="module")
def aligned_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_additive(tmp_path_factory.mktemp("aligned"))  # seconds


def test_forced_alignments_are_distributions_beside_the_gold(
    aligned_run: Path,
) -> None:
    (first, third) = forced_alignments(aligned_run, "test", [0, 2])
    for a in (first, third):
        assert a.weights.shape == (len(a.tgt), len(a.src))  # both end in </s>
        torch.testing.assert_close(a.weights.sum(-1), torch.ones(len(a.tgt)))
        assert a.gold and 0.0 <= a.aer() <= 1.0
        words, src, tgt = a.words()
        assert src[-1] == tgt[-1] == "</s>" and len(src) == len(a.source.split()) + 1
        for s, t, w, gold in a.misreads():  # brightest cell, off every gold link
            assert (s, t) not in a.gold and w == pytest.approx(float(words[t].max()))
            assert w >= gold + 0.1  # by the margin, not a near tie
        ties = {(s, t) for s, t, _, _ in a.misreads(margin=0.0)}
        assert {(s, t) for s, t, _, _ in a.misreads()} <= ties
    assert first.source != third.source


def test_every_mode_has_a_plain_name() -> None:
    assert all(plain_name(m) != m for m in modes.names())
    assert plain_name("a new mode") == "a new mode"
