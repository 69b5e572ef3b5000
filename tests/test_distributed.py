"""torchrun with 2 gloo processes: the same weights as 1 process on the same
global batches, only rank 0 writes, and resume works the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides, torchrun

from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.training.distributed import Ranks
from seq2seq.training.train import train

# 2 processes average gradients in another order than 1 process sums them;
# after 12 Adam steps the weights (|w| up to ~1) differ by ~1e-7 here.
TOLERANCE = 1e-5
SAME = [
    "model.encoder.dropout=0",  # dropout draws differ between 1 and 2 processes
    "model.decoder.dropout=0",
    "train.batch_sentences=16",  # a global batch of 16 sentences, 8 per rank
    "train.val_every=6",
    "train.checkpoint_every=0",
]


def test_batches_are_split_without_overlap() -> None:
    index = list(range(11))
    shards = [Ranks(rank, 3).shard(index) for rank in range(3)]
    assert sorted(sum(shards, [])) == index
    assert [len(s) for s in shards] == [4, 4, 3]


def new_run(corpus: Path, runs: Path, name: str, *extra: str) -> list[str]:
    """``train`` arguments for a tiny additive run with :data:`SAME` settings."""
    args = ["--config", str(REPO / "configs/synth_ende/additive.yaml")]
    for item in [*tiny_overrides(corpus, runs, name), *SAME, *extra]:
        args += ["--set", item]
    return args


def weights(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "last.pt", weights_only=True)["model"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ddp")
    corpus, runs = root / "corpus", root / "runs"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    cfg = load_config(
        REPO / "configs/synth_ende/additive.yaml",
        [*tiny_overrides(corpus, runs, "one"), *SAME, "train.max_steps=12"],
    )
    train(cfg, "cpu")
    two, resumed = runs / "two", runs / "two_resumed"
    train_two(new_run(corpus, runs, two.name, "train.max_steps=12"), fresh=(two,))
    # Stopped at step 6 (as a killed run would be), then resumed to 12.
    train_two(new_run(corpus, runs, resumed.name, "train.max_steps=6"), (resumed,))
    train_two(["--resume", str(resumed), "--set", "train.max_steps=12"])
    return runs


def train_two(args: list[str], fresh: tuple[Path, ...] = ()) -> None:
    """``seq2seq train ARGS`` in 2 processes, one thread each (``fresh``: the
    folders a repeated try removes first, see conftest.torchrun)."""
    torchrun(["-m", "seq2seq", "train", *args], fresh, OMP_NUM_THREADS="1")


def test_two_processes_match_one(runs: Path) -> None:
    one, two = weights(runs / "one"), weights(runs / "two")
    state = torch.load(runs / "two" / "last.pt", weights_only=True)["state"]
    assert state["step"] == 12 and state["world"] == 2
    for key, value in one.items():
        torch.testing.assert_close(two[key], value, rtol=0, atol=TOLERANCE)
    assert any(not torch.equal(two[k], v) for k, v in one.items())  # really 2 ranks


def test_only_rank_zero_writes(runs: Path) -> None:
    assert len(list((runs / "two").glob("events.out.tfevents.*"))) == 1
    lines = (runs / "two" / "history.jsonl").read_text().splitlines()
    assert len(lines) == 2  # validations at steps 6 and 12, written once


def test_resume_with_two_processes(runs: Path) -> None:
    resumed, straight = weights(runs / "two_resumed"), weights(runs / "two")
    for key, value in straight.items():
        assert torch.equal(resumed[key], value), key


def test_a_process_that_left_a_group_ends_without_the_teardown() -> None:
    """end_process: after a normal end in a group, the status and the output
    flushed, and no interpreter teardown (where gloo's threads can abort);
    alone, an ordinary exit."""
    script = (
        "import atexit, sys\n"
        "from seq2seq.training import distributed\n"
        "atexit.register(print, 'teardown ran')\n"
        "print('work done', end='')\n"  # left in the buffer: flushed by end_process
        "if sys.argv[1] == 'group':\n"
        "    distributed.LEFT_A_GROUP.append(0)\n"
        "distributed.end_process(3)\n"
    )
    for how, teardown in (("group", False), ("alone", True)):
        done = subprocess.run(
            [sys.executable, "-c", script, how], capture_output=True, text=True
        )
        assert done.returncode == 3, done.stderr
        assert done.stdout.startswith("work done")
        assert ("teardown ran" in done.stdout) is teardown, (how, done.stdout)
