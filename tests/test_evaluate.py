"""seq2seq evaluate (seq2seq/lab/evaluate.py): what it writes is what it
returns, a saved evaluation is reused only while it scores the checkpoint as
it is, and a run evaluates from any folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import tiny_additive

from seq2seq import run as run_files
from seq2seq.lab.evaluate import (
    cached_evaluate,
    evaluate,
    format_result,
    saved_evaluation,
)
from seq2seq.results import Evaluation


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny additive run (seconds), evaluated on its 20 test pairs."""
    run_dir = tiny_additive(tmp_path_factory.mktemp("evaluate"))
    evaluate(run_dir, "test", device_name="cpu")
    return run_dir


def test_what_it_writes_is_what_it_returns(evaluated: Path) -> None:
    saved = saved_evaluation(evaluated, "test")
    assert isinstance(saved, Evaluation) and saved.split == "test"
    path = run_files.evaluation_file(evaluated, "test")
    assert json.loads(path.read_text()) == saved.to_dict()
    hyps = run_files.hypotheses_file(evaluated, "test").read_text().splitlines()
    assert len(hyps) == 20 == sum(b.n for b in saved.scores.buckets)
    assert saved.aer is not None and 0.0 <= saved.aer <= 1.0  # gold links
    report = format_result(saved)
    assert f"BLEU {saved.scores.bleu:.2f}" in report and "AER" in report


def test_a_run_evaluates_from_another_folder(
    evaluated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny run's corpus is absolute; a copy of it with relative corpus
    paths, opened from an unrelated folder, finds its corpus above the run."""
    root = tmp_path / "work"
    shutil.copytree(evaluated.parent.parent / "corpus", root / "corpus")
    run_dir = Path(shutil.copytree(evaluated, root / "runs" / "tiny"))
    config = run_files.config_file(run_dir)
    config.write_text(config.read_text().replace(f"{evaluated.parent.parent}/", ""))
    assert "src: corpus/test.en" in config.read_text()  # relative now
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    again = evaluate(run_dir, "test", device_name="cpu")
    assert again.scores == saved_evaluation(evaluated, "test").scores


def test_a_saved_evaluation_is_redone_for_a_new_checkpoint(
    evaluated: Path, tmp_path: Path
) -> None:
    """compare reuses eval_test.json only while best.pt is the checkpoint it
    scored (a resumed training may write a new one) and its hypotheses are
    there; without best.pt the saved result stands."""
    run = Path(shutil.copytree(evaluated, tmp_path / "copy"))
    saved = json.loads((run / "eval_test.json").read_text())
    assert cached_evaluate(run, "test", "cpu").to_dict() == saved
    payload = torch.load(run / "best.pt", weights_only=True)
    payload["state"]["step"] = saved["step"] + 1  # as if trained further
    torch.save(payload, run / "best.pt")
    redone = cached_evaluate(run, "test", "cpu")
    assert redone.step == saved["step"] + 1
    assert json.loads((run / "eval_test.json").read_text()) == redone.to_dict()
    # without its hypotheses (which the bootstrap reads) it is redone as well
    (run / "hyp_test.txt").unlink()
    assert cached_evaluate(run, "test", "cpu") == redone
    assert (run / "hyp_test.txt").is_file()
    (run / "best.pt").unlink()
    (run / "hyp_test.txt").unlink()
    assert cached_evaluate(run, "test", "cpu") == redone
