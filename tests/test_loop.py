"""The training loop (seq2seq/training/loop.py): when it validates and
checkpoints, which checkpoint is the best, a callback that stops it, and time
off the clock. Tiny runs of a few steps (seconds)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides, transformer_overrides

from seq2seq import run
from seq2seq.config import Config, load_config
from seq2seq.data.synth import write_corpus
from seq2seq.results import Validation
from seq2seq.training.checkpoint import load_checkpoint
from seq2seq.training.distributed import Ranks
from seq2seq.training.loop import Callback, Loop
from seq2seq.training.train import build_loop
from seq2seq.training.validate import read_history


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("loop") / "corpus"
    write_corpus(folder, seed=5, sizes={"train": 300, "val": 20, "test": 20})
    return folder


def config(corpus: Path, runs: Path, *extra: str) -> Config:
    items = [*tiny_overrides(corpus, runs, "loop"), *extra]
    return load_config(REPO / "configs/synth_ende/additive.yaml", items)


class Recorder(Callback):
    """Records each validation's step; asks to stop at ``stop_at``."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.steps: list[int] = []
        self.stop_at = stop_at

    def after_validation(self, loop: Loop, result: Validation | None) -> bool:
        self.steps.append(loop.step)
        return loop.step == self.stop_at


def test_it_validates_every_val_every_steps_and_at_the_end(
    corpus: Path, tmp_path: Path
) -> None:
    cfg = config(corpus, tmp_path, "train.max_steps=10", "train.val_every=4")
    seen = Recorder()
    build_loop(cfg, Ranks(device=torch.device("cpu")), callbacks=[seen]).run()
    assert seen.steps == [4, 8, 10]  # the last step validated once more
    history = read_history(run.history_file(cfg.run_dir))
    assert [v.step for v in history] == [4, 8, 10]
    last = load_checkpoint(run.checkpoint_file(cfg.run_dir, "last"))
    assert last["state"]["step"] == 10 and last["state"]["finished"]
    # best.pt: the first validation no later one beat, by train.stop_metric
    best = history[0]
    for v in history[1:]:
        best = v if v.beats(best, cfg.train.stop_metric) else best
    saved = load_checkpoint(run.checkpoint_file(cfg.run_dir, "best"))
    assert saved["state"]["step"] == best.step


def test_a_callback_stops_it_after_its_validation(corpus: Path, tmp_path: Path) -> None:
    cfg = config(corpus, tmp_path, "train.max_steps=40", "train.val_every=4")
    seen = Recorder(stop_at=8)
    build_loop(cfg, Ranks(device=torch.device("cpu")), callbacks=[seen]).run()
    assert seen.steps == [4, 8]
    last = load_checkpoint(run.checkpoint_file(cfg.run_dir, "last"))
    assert last["state"]["step"] == 8 and last["state"]["finished"]


def test_time_off_the_clock_does_not_count(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(corpus, tmp_path, "train.max_steps=4")
    loop = build_loop(cfg, Ranks(device=torch.device("cpu")), progress="off")
    now = [1000.0]
    monkeypatch.setattr("seq2seq.training.loop.time.monotonic", lambda: now[0])
    loop.start = now[0]
    with loop.off_the_clock():
        now[0] += 600.0  # ten minutes of a callback's extra evaluation
    assert loop.minutes() == 0.0
    now[0] += 60.0
    assert loop.minutes() == 1.0


@pytest.mark.parametrize("family", ["rnn", "transformer"])
def test_accumulated_batches_update_as_one_batch_of_them_all(
    corpus: Path, tmp_path: Path, family: str
) -> None:
    """train.accumulate: N batches' gradients, each loss divided by the
    tokens of all N, add up to the gradient of one batch holding them all,
    so the update is the same up to float rounding (padding to another
    length changes the order of the sums, not the value)."""
    if family == "transformer":
        base = REPO / "configs/synth_ende/transformer.yaml"
        items = [*transformer_overrides(corpus, tmp_path, "t", 16), "model.dropout=0"]
    else:
        base = REPO / "configs/synth_ende/additive.yaml"
        items = [*tiny_overrides(corpus, tmp_path, "r")]
        items += ["model.encoder.dropout=0", "model.decoder.dropout=0"]
    items.append("train.clip_norm=0")  # clipping is per update: the same too
    cpu = Ranks(device=torch.device("cpu"))
    one = build_loop(load_config(base, items), cpu, progress="off")
    items = [*items, "train.accumulate=3", "runs_dir=" + str(tmp_path / "acc")]
    three = build_loop(load_config(base, items), cpu, progress="off")
    batches = one.first_batches(6)
    for k in (0, 3):  # two updates: Adam's state after the first counts too
        part = batches[k : k + 3]
        whole = one.train_step([i for b in part for i in b])
        split = three.train_step(*part)
        assert whole[2] == split[2]  # the same target tokens
        assert split[0] == pytest.approx(whole[0], rel=1e-5)  # loss per token
    for (name, a), b in zip(
        one.model.state_dict().items(), three.model.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
    assert three.step == 2 and three.batch_in_epoch == 6


def test_an_epoch_with_accumulate_n_makes_an_update_per_n_batches(
    corpus: Path, tmp_path: Path
) -> None:
    """The last update of an epoch takes what is left (fewer than N)."""
    cfg = config(corpus, tmp_path, "train.max_epochs=1", "train.accumulate=4")
    loop = build_loop(cfg, Ranks(device=torch.device("cpu")), progress="off")
    loop.epoch = 1
    batches = len(loop.epoch_batches())  # epoch 1's, as run() draws them
    loop.epoch = 0
    loop.run()
    assert loop.step == math.ceil(batches / 4)
