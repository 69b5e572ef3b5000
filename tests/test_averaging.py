"""Checkpoint averaging (training/averaging.py): train.average_last keeps the
last validations' weights, averaged.pt is their mean, `seq2seq average`
writes it again, `evaluate --checkpoint averaged` scores it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides

from seq2seq import run
from seq2seq.cli import main
from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.training.averaging import average_weights
from seq2seq.training.checkpoint import load_checkpoint
from seq2seq.training.distributed import Ranks
from seq2seq.training.train import build_loop


def test_the_average_is_the_element_wise_mean_and_counts_are_the_last() -> None:
    payloads = [
        {"model": {"w": torch.tensor([1.0, 2.0]), "n": torch.tensor(3)}},
        {"model": {"w": torch.tensor([3.0, 6.0]), "n": torch.tensor(5)}},
    ]
    mean = average_weights(payloads)
    torch.testing.assert_close(mean["w"], torch.tensor([2.0, 4.0]))
    assert mean["n"].item() == 5 and mean["n"].dtype == torch.int64


@pytest.fixture(scope="module")
def averaged_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 steps, a validation every 4, the last 3 kept (steps 8, 12, 16)."""
    root = tmp_path_factory.mktemp("averaging")
    write_corpus(root / "corpus", seed=5, sizes={"train": 300, "val": 20, "test": 20})
    items = tiny_overrides(root / "corpus", root / "runs", "avg")
    items += ["train.val_every=4", "train.average_last=3"]
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml", items)
    build_loop(cfg, Ranks(device=torch.device("cpu")), progress="off").run()
    return cfg.run_dir


def weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path)["model"]


def test_training_keeps_the_last_validations_and_writes_their_mean(
    averaged_run: Path,
) -> None:
    kept = run.step_files(averaged_run)
    assert list(kept) == [8, 12, 16]  # step 4's was deleted at step 16
    averaged = weights(run.checkpoint_file(averaged_run, "averaged"))
    for name, tensor in averaged.items():
        mean = sum(weights(p)[name] for p in kept.values()) / 3
        torch.testing.assert_close(tensor, mean, msg=name)
    last = load_checkpoint(run.checkpoint_file(averaged_run, "last"))
    assert last["state"]["finished"]


def test_the_command_averages_the_last_k_and_evaluate_scores_it(
    averaged_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["average", str(averaged_run), "-k", "1"]) == 0
    assert "steps 16 (evaluate --checkpoint averaged)" in capsys.readouterr().out
    newest = weights(run.step_file(averaged_run, 16))
    for name, tensor in weights(run.checkpoint_file(averaged_run, "averaged")).items():
        torch.testing.assert_close(tensor, newest[name], msg=name)
    assert main(["evaluate", str(averaged_run), "--checkpoint", "averaged"]) == 0
    assert "averaged at step 16" in capsys.readouterr().out


def test_asking_for_more_than_was_kept_is_one_line(
    averaged_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = run.checkpoint_file(averaged_run, "averaged").read_bytes()
    assert main(["average", str(averaged_run), "-k", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert "kept 3 checkpoints (steps 8, 12, 16); ask for at most 3" in err
    assert "\n" not in err
    assert run.checkpoint_file(averaged_run, "averaged").read_bytes() == before
    assert main(["average", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
