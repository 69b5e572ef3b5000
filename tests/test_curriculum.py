"""The length curriculum: competence grows as sqrt to 1, short batches first,
every batch once it is over, and training always advances."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides

from seq2seq.config import load_config
from seq2seq.data.curriculum import Curriculum
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.training.train import train

LENGTHS = [3, 4, 5, 6, 8, 10, 12, 15, 20, 30]  # source lengths of 10 pairs


def test_competence_grows_like_a_square_root_to_one() -> None:
    c = Curriculum(LENGTHS, steps=100, start=0.1)
    assert c.competence(0) == pytest.approx(0.1)
    assert c.competence(50) == pytest.approx(math.sqrt(0.5 * 0.99 + 0.01))
    values = [c.competence(t) for t in range(0, 150, 10)]
    assert values == sorted(values) and values[-1] == 1.0 and c.competence(100) == 1.0


def test_short_batches_first_every_batch_at_the_end() -> None:
    c = Curriculum(LENGTHS, steps=100, start=0.2)
    short, middle, long = [0, 1], [4, 5], [8, 9]
    assert c.difficulty(short) == pytest.approx(0.2)
    assert c.difficulty(long) == 1.0
    assert c.admits(short, 1) and not c.admits(middle, 1) and not c.admits(long, 1)
    assert c.admits(middle, 40) and not c.admits(long, 40)
    assert all(c.admits(b, 100) for b in (short, middle, long))


def test_off_admits_everything_and_the_shortest_are_always_open() -> None:
    off = Curriculum(LENGTHS, steps=0, start=0.1)
    assert off.competence(0) == 1.0 and off.admits([9], 1)
    same = Curriculum([5] * 10 + [9], steps=100, start=0.01)  # 91 % share one length
    assert same.admits([0, 1], 1) and not same.admits([10], 1)


def test_a_curriculum_run_trains_its_steps(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    sets = tiny_overrides(corpus, tmp_path / "runs", "curriculum")
    cfg = load_config(
        REPO / "configs/synth_ende/none.yaml",
        [*sets, "train.curriculum_steps=12", "train.curriculum_start=0.05"],
    )
    run = train(cfg, "cpu")
    state = torch.load(run / "last.pt", weights_only=True)["state"]
    assert state["step"] == 16 and state["finished"]


def test_bad_curriculum_settings_are_refused() -> None:
    for bad in ("train.curriculum_start=0", "train.curriculum_steps=-1"):
        with pytest.raises(UserError, match=bad.split("=")[0]):
            load_config(REPO / "configs/synth_ende/none.yaml", [bad])
