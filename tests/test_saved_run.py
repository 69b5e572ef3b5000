"""A run folder written by older code still loads, scores and translates.

tests/fixtures/saved_run/ was written before the package was split into
layers (its README says by which commit). Checkpoints hold plain tensors and
data, not pickled classes, so moving a module must not break them; this test
proves it for the model's weights, the vocabularies, the config and the
history.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from seq2seq.cli import main
from seq2seq.data.batching import collate
from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.model.model import loss_sum
from seq2seq.training.checkpoint import open_run

FIXTURE = Path(__file__).parent / "fixtures" / "saved_run"


@pytest.fixture
def saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture as the working folder (its config's data paths
    are relative to it); the run is ``additive``."""
    shutil.copytree(FIXTURE, tmp_path / "saved")
    monkeypatch.chdir(tmp_path / "saved")
    return Path("additive")


def test_the_saved_weights_give_the_losses_the_old_code_computed(saved: Path) -> None:
    """Per-pair summed cross-entropy, teacher-forced, against expected.json.
    The tolerance (1e-4 relative) is far above float32 rounding on any CPU
    (about 1e-6 here) and far below what a misplaced weight would change."""
    expected = json.loads(Path("expected.json").read_text())
    opened = open_run(saved)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    assert opened.step == expected["step"]
    # written before model families: no model.family, read as an RNN
    assert "family:" not in (saved / "config.yaml").read_text()
    assert cfg.model.family == model.family == "rnn"
    data = encode(load_split(cfg.data, "test"), tok)
    got = []
    with torch.no_grad():
        for i in range(len(data.src_ids)):
            b = collate(data.src_ids, data.tgt_ids, [i])
            loss, _ = loss_sum(model, b.src, b.src_len, b.tgt_in, b.tgt_out)
            got.append(loss.item())
    assert got == pytest.approx(expected["test_loss_sums"], rel=1e-4)


def test_the_saved_run_evaluates_and_translates(
    saved: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["evaluate", str(saved), "--device", "cpu"]) == 0
    result = json.loads((saved / "eval_test.json").read_text())
    assert result["n"] == 20 and result["step"] == 8 and 0 <= result["aer"] <= 1
    joined = ["evaluate", str(saved), "--split", "test_joined", "--device", "cpu"]
    assert main(joined) == 0
    src = Path("in.txt")
    src.write_text("the man sees the dog .\na woman reads a book .\n")
    args = ["translate", str(saved), "-i", str(src), "-o", "out.txt", "--device", "cpu"]
    assert main(args) == 0
    assert len(Path("out.txt").read_text().splitlines()) == 2
