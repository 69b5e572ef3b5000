"""Resume: a run killed with SIGKILL mid-epoch and resumed ends bit for bit where
an uninterrupted run ends; a resumed run keeps its config; checkpoint writes
that fail part-way leave the previous checkpoint loadable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sentencepiece
import torch
from conftest import REPO, tiny_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import seq2seq.training.checkpoint as checkpoint
from seq2seq.cli import main
from seq2seq.data.synth import write_corpus
from seq2seq.results import Validation
from seq2seq.training.checkpoint import atomic_save, load_checkpoint
from seq2seq.training.validate import read_history

STEPS = 60  # 93 batches per epoch here: the kill lands inside epoch 1
KILL_AFTER = 20  # steps on disk in last.pt before the kill


def command(corpus: Path, runs: Path, name: str, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "seq2seq", "train"]
    args += ["--config", str(REPO / "configs/synth_ende/additive.yaml")]
    for item in tiny_overrides(corpus, runs, name):
        args += ["--set", item]
    for item in ("train.val_every=30", "train.checkpoint_every=7", "train.log_every=1"):
        args += ["--set", item]
    for item in extra:
        args += ["--set", item]
    return args


def run(args: list[str]) -> None:
    env = os.environ | {"OMP_NUM_THREADS": "1"}  # same threads, same sums
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def step_on_disk(path: Path) -> int:
    try:
        return torch.load(path, weights_only=True)["state"]["step"]
    except Exception:  # not there yet (the rename is atomic, so never torn)
        return 0


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("resume")
    corpus, runs = root / "corpus", root / "runs"
    write_corpus(corpus, seed=5, sizes={"train": 400, "val": 20, "test": 20})
    run(command(corpus, runs, "straight", f"train.max_steps={STEPS}"))
    # The same run with no step limit, killed once last.pt holds KILL_AFTER steps,
    # then resumed with the limit: the kill cannot come too late.
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    args = command(corpus, runs, "killed", "train.max_steps=100000")
    proc = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
    last = runs / "killed" / "last.pt"
    deadline = time.monotonic() + 240
    while step_on_disk(last) < KILL_AFTER and time.monotonic() < deadline:
        assert proc.poll() is None, "training ended before it could be killed"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = step_on_disk(last)
    run(
        [sys.executable, "-m", "seq2seq", "train", "--resume", str(runs / "killed")]
        + ["--set", f"train.max_steps={STEPS}"]
    )
    return {"runs": runs, "killed_at": killed_at, "corpus": corpus}


def test_killed_run_resumes_to_the_same_weights(killed_and_resumed: dict) -> None:
    runs = killed_and_resumed["runs"]
    assert KILL_AFTER <= killed_and_resumed["killed_at"] < STEPS
    for name in ("last", "best"):
        a = torch.load(runs / "straight" / f"{name}.pt", weights_only=True)
        b = torch.load(runs / "killed" / f"{name}.pt", weights_only=True)
        assert a["state"]["step"] == b["state"]["step"]
        for key, value in a["model"].items():
            assert torch.equal(value, b["model"][key]), (name, key)  # bitwise
    a, b = (
        [json.loads(line) for line in (runs / r / "history.jsonl").open()]
        for r in ("straight", "killed")
    )
    drop = ("elapsed_s",)
    assert [{k: v for k, v in x.items() if k not in drop} for x in a] == [
        {k: v for k, v in x.items() if k not in drop} for x in b
    ]  # same validation loss and BLEU at the same steps, no line twice


def test_tensorboard_curves_continue_without_repeats(killed_and_resumed) -> None:
    runs = killed_and_resumed["runs"]
    steps = {}
    for name in ("straight", "killed"):
        events = EventAccumulator(str(runs / name))
        events.Reload()
        steps[name] = [s.step for s in events.Scalars("train/loss")]
    assert steps["killed"] == steps["straight"] == list(range(1, STEPS + 1))


def test_resume_refuses_what_it_cannot_continue(killed_and_resumed, capsys) -> None:
    run_dir = killed_and_resumed["runs"] / "killed"
    assert main(["train", "--resume", str(run_dir)]) == 2
    assert "finished at step 60" in capsys.readouterr().err
    assert main(["train", "--resume", str(run_dir), "--set", "model.attention=dot"])
    assert "only train.max_steps" in capsys.readouterr().err
    empty = killed_and_resumed["runs"] / "empty"
    empty.mkdir()
    (empty / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    assert main(["train", "--resume", str(empty)]) == 2
    assert "nothing to resume" in capsys.readouterr().err


def test_edited_config_or_vocabulary_is_named(
    killed_and_resumed: dict, tmp_path: Path, capsys
) -> None:
    run_dir = killed_and_resumed["runs"] / "straight"
    config = run_dir / "config.yaml"
    original = config.read_text()
    config.write_text(original.replace("attention: additive", "attention: mean"))
    try:
        assert main(["evaluate", str(run_dir)]) == 2
        err = capsys.readouterr().err
        assert "trained with model.attention='additive'" in err, err
        assert main(["train", "--resume", str(run_dir), "--set", "train.max_steps=99"])
        assert "model.attention" in capsys.readouterr().err
    finally:
        config.write_text(original)
    other = tmp_path / "other"
    sentencepiece.SentencePieceTrainer.train(
        input=str(killed_and_resumed["corpus"] / "train.de"),
        model_prefix=str(other),
        vocab_size=60,
        minloglevel=2,
    )
    spm = run_dir / "spm" / "tgt.model"
    original_bytes = spm.read_bytes()
    spm.write_bytes(other.with_suffix(".model").read_bytes())  # valid, but not its own
    try:
        assert main(["evaluate", str(run_dir)]) == 2
        assert "fingerprints differ" in capsys.readouterr().err
    finally:
        spm.write_bytes(original_bytes)


def test_failed_save_keeps_the_previous_checkpoint(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "last.pt"
    atomic_save({"model": {"w": torch.ones(3)}, "state": {"step": 1}}, path)

    def half_then_fail(payload: dict, f) -> None:
        f.write(b"PK\x03\x04 half a zip file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint.torch, "save", half_then_fail)
    with pytest.raises(OSError, match="No space"):
        atomic_save({"model": {"w": torch.zeros(3)}, "state": {"step": 2}}, path)
    monkeypatch.undo()
    assert load_checkpoint(path)["state"]["step"] == 1
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_a_history_line_cut_short_is_dropped(tmp_path: Path, capsys) -> None:
    """A kill while history.jsonl is written can leave half a line; reading
    the history (resume, compare) leaves it out with a warning naming it."""
    path = tmp_path / "history.jsonl"
    line = {"step": 10, "loss": 4.0, "ppl": 54.6, "bleu": 1.0, "chrf": 9.0}
    path.write_text(json.dumps(line) + '\n{"step": 20, "bl')
    assert read_history(path) == [Validation.from_dict(line)]
    assert "history.jsonl:2: not a validation record" in capsys.readouterr().err
    assert read_history(tmp_path / "none.jsonl") == []
