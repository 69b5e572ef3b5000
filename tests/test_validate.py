"""Validation during training (seq2seq/training/validate.py): a record per
validation, appended to history.jsonl as returned; a resumed run's history
cut back to its checkpoint; a history line cut short left out with a
warning."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides

from seq2seq import run
from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.training.distributed import Ranks
from seq2seq.training.loop import Loop
from seq2seq.training.train import build_loop
from seq2seq.training.validate import read_history


@pytest.fixture
def loop(tmp_path: Path) -> Loop:
    """An untrained tiny additive model with its validator (seconds)."""
    write_corpus(tmp_path / "corpus", seed=5, sizes={"train": 200, "val": 30})
    items = [
        *tiny_overrides(tmp_path / "corpus", tmp_path / "runs", "val"),
        "data.test=null",
        "train.val_max_sentences=12",
    ]
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml", items)
    return build_loop(cfg, Ranks(device=torch.device("cpu")), progress="off")


def test_a_validation_is_recorded_as_returned(loop: Loop, capsys) -> None:
    assert loop.validator is not None
    first = loop.validator.run(loop.model, 3, epoch=1, lr=0.01)
    second = loop.validator.run(loop.model, 6, epoch=1, lr=0.005)
    assert read_history(run.history_file(loop.run_dir)) == [first, second]
    assert first.ppl == pytest.approx(math.exp(first.loss))
    assert 0.0 <= first.bleu <= 100.0 and (first.epoch, first.lr) == (1, 0.01)
    assert "aer" in first.attention  # the shipped corpus has gold links
    assert f"step 6: val loss {second.loss:.3f}" in capsys.readouterr().out
    assert len(loop.validator.subset) == 12  # train.val_max_sentences


def test_a_resumed_run_keeps_its_history_up_to_the_checkpoint(loop: Loop) -> None:
    assert loop.validator is not None
    for step in (2, 4, 6):
        loop.validator.run(loop.model, step)
    loop.validator.rewind(4, elapsed=30.0)
    assert [v.step for v in read_history(run.history_file(loop.run_dir))] == [2, 4]
    resumed = loop.validator.run(loop.model, 5).elapsed_s
    assert resumed is not None and resumed >= 30.0  # its clock goes on


def test_a_line_cut_short_is_left_out_with_a_warning(tmp_path: Path, capsys) -> None:
    record = {"step": 4, "loss": 2.0, "ppl": 7.4, "bleu": 1.0, "chrf": 9.0}
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(record) + "\n" + '{"step": 8, "lo' + "\n\n")
    assert [v.step for v in read_history(path)] == [4]
    assert capsys.readouterr().err == (
        f"warning: {path}:2: not a validation record, left out\n"
    )
    assert read_history(tmp_path / "missing.jsonl") == []
