"""seq2seq/files.py: whole files or none, whole history lines, the file named
in every error; a full disk for real (a small tmpfs) and by injection."""

from __future__ import annotations

import errno
import json
import subprocess
import threading
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_overrides

from seq2seq import files
from seq2seq.cli import main
from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.training.checkpoint import load_checkpoint
from seq2seq.training.train import train


def full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


class FullFile:
    """A file object whose writes fail as on a full disk, after half a write."""

    def __init__(self, f) -> None:
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()

    def write(self, data: bytes) -> int:
        self.f.write(bytes(data)[: len(data) // 2])
        full_disk()

    def __getattr__(self, name: str):
        return getattr(self.f, name)


def test_a_failed_write_keeps_the_old_file_and_names_it(tmp_path, monkeypatch) -> None:
    path = tmp_path / "eval_test.json"
    files.atomic_write(path, "old\n")
    fdopen = files.os.fdopen
    monkeypatch.setattr(files.os, "fdopen", lambda *a, **k: FullFile(fdopen(*a, **k)))
    with pytest.raises(OSError) as err:
        files.atomic_write(path, "new\n" * 1000)
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(path)
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval_test.json"]


def test_a_failed_append_leaves_whole_lines(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "history.jsonl"
    files.append_line(path, '{"step": 1}')
    real_open = open

    def failing_open(p, mode="r", *a, **k):
        return FullFile(real_open(p, mode, *a, **k))

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError) as err:
        files.append_line(path, '{"step": 2, "bleu": 10.0}')
    monkeypatch.undo()
    assert err.value.filename == str(path)
    assert path.read_text() == '{"step": 1}\n'


def test_two_writers_of_one_file_both_succeed(tmp_path: Path) -> None:
    """Two trainings may fill the same vocabulary cache at once."""
    path, errors = tmp_path / "joint.model", []

    def write(k: int) -> None:
        try:
            for _ in range(30):
                files.atomic_write(path, f"model {k}\n" * 100)
        except Exception as err:  # noqa: BLE001 - collected, asserted below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_text() in {f"model {k}\n" * 100 for k in range(4)}
    assert [p.name for p in tmp_path.iterdir()] == ["joint.model"]


def test_a_written_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    files.atomic_write(tmp_path / "x", b"1")
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o666 & ~files.UMASK


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 6 MiB tmpfs, where this machine lets the test mount one."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(disk)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> None:
    """Fill the disk to the last byte."""
    with open(disk / "filler", "wb", buffering=0) as f:
        for block in (65536, 1):
            try:
                while True:
                    f.write(b"\0" * block)
            except OSError:
                pass


def test_a_full_disk_mid_training_is_one_line_and_loses_nothing(
    small_disk: Path, tmp_path: Path, capsys
) -> None:
    """Trained for 16 steps on a small disk, then resumed with the disk full:
    one error line naming a file, exit 2, no traceback (TensorBoard's thread
    included), last.pt still the step-16 checkpoint, every history line
    whole, no temporary file."""
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 200, "val": 20, "test": 20}
    )
    items = tiny_overrides(tmp_path / "corpus", small_disk / "runs", "tiny")
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml", items)
    run = train(cfg, "cpu", progress="off")
    fill(small_disk)
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.suffix == ".pt"}
    argv = ["train", "--resume", str(run), "--set", "train.max_steps=48"]
    assert main([*argv, "--progress", "off", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(run) in lines[0] and "free some disk space" in lines[0], lines[0]
    after = {p.name: p.read_bytes() for p in run.iterdir() if p.suffix == ".pt"}
    assert after == before
    assert load_checkpoint(run / "last.pt")["state"]["step"] == 16
    history = (run / "history.jsonl").read_text()
    assert history.endswith("\n")
    assert all(json.loads(line) for line in history.splitlines())
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]


def test_a_full_disk_while_evaluating_keeps_earlier_results(
    small_disk: Path, tmp_path: Path, capsys
) -> None:
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 200, "val": 20, "test": 20}
    )
    items = tiny_overrides(tmp_path / "corpus", small_disk / "runs", "tiny")
    cfg = load_config(REPO / "configs/synth_ende/none.yaml", items)
    run = train(cfg, "cpu", progress="off")
    assert main(["evaluate", str(run), "--device", "cpu"]) == 0
    saved = (run / "eval_test.json").read_bytes()
    fill(small_disk)
    torch.manual_seed(0)
    assert main(["evaluate", str(run), "--beam", "2", "--device", "cpu"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("error: ") and "No space left" in line, line
    assert (run / "eval_test.json").read_bytes() == saved
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]


def test_a_full_disk_under_tensorboard_names_the_event_file(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """TensorBoard writes from a thread: its failure surfaces at the next
    call, naming the event file, and the thread prints no traceback."""
    import time

    from tensorboard.summary.writer import record_writer

    from seq2seq.training.board import Board

    board = Board(tmp_path)
    monkeypatch.setattr(record_writer.RecordWriter, "write", full_disk)
    with pytest.raises(OSError) as err:
        for step in range(200):
            board.scalars({"train/loss": 1.0}, step)
            time.sleep(0.01)  # let the writer thread take the record
    assert err.value.errno == errno.ENOSPC
    assert Path(err.value.filename).name.startswith("events.out.tfevents.")
    assert "Traceback" not in capsys.readouterr().err
