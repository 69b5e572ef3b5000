"""The command line: user errors exit 2 with one line naming the problem."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_parallel

from seq2seq.errors import os_error


def seq2seq(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "seq2seq", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_user_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_help_lists_the_commands() -> None:
    proc = seq2seq("--help")
    assert proc.returncode == 0
    for command in ("prepare", "train", "evaluate"):
        assert command in proc.stdout


@pytest.mark.parametrize(
    "args",
    [["--help"], ["train", "--help"], ["train", "--bogus"], ["evaluate"]],
    ids=["help", "command help", "bad option", "missing argument"],
)
def test_help_and_argument_errors_never_load_torch(args: list[str]) -> None:
    # Not a timing (none here): what makes them slow is importing torch, about
    # a second; without it they answer in under 0.1 s (docs/cli.md).
    code = (
        "import sys\n"
        "from seq2seq.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('torch' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert proc.stderr.strip().splitlines()[-1] == "False", proc.stderr


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("model.atention=none", "did you mean 'model.attention'"),
        ("model.encoder.dropout=1.5", "model.encoder.dropout"),
        ("train.batch_tokens=0", "train.batch_tokens"),
    ],
)
def test_bad_config_values(tmp_path: Path, override: str, needle: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("data:\n  train: {src: a, tgt: b}\n  val: {src: a, tgt: b}\n")
    assert_user_error(seq2seq("train", "--config", str(cfg), "--set", override), needle)


def test_corpus_errors_name_the_file(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "train", ["a", "b"], ["a"])
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"data:\n  train: {{src: {s}, tgt: {t}}}\n  val: {{src: {s}, tgt: {t}}}\n"
    )
    assert_user_error(seq2seq("train", "--config", str(cfg)), "train.src has 2 lines")
    assert not (tmp_path / "runs").exists()


def test_missing_config_and_run_dir(tmp_path: Path) -> None:
    assert_user_error(
        seq2seq("train", "--config", str(tmp_path / "x.yaml")), "not found"
    )
    assert_user_error(seq2seq("evaluate", str(tmp_path)), "not a run directory")


def test_traceback_only_with_debug(tmp_path: Path) -> None:
    proc = seq2seq("--debug", "train", "--config", str(tmp_path / "x.yaml"))
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_bad_language_pair() -> None:
    assert_user_error(
        seq2seq("prepare", "multi30k", "--src", "de", "--tgt", "ja"), "ja"
    )


@pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="this machine has CUDA"
)
def test_cuda_requested_without_cuda(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "train", ["a b"], ["c d"])
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"data:\n  train: {{src: {s}, tgt: {t}}}\n  val: {{src: {s}, tgt: {t}}}\n"
    )
    proc = seq2seq("train", "--config", str(cfg), "--device", "cuda")
    assert_user_error(proc, "no CUDA device")


def test_os_errors_name_the_file_and_what_to_do() -> None:
    full = OSError(errno.ENOSPC, "No space left", "x/last.pt.tmp", None, "x/last.pt")
    assert os_error(full) == (
        "x/last.pt.tmp -> x/last.pt: No space left; free some disk space and run again"
    )
    denied = PermissionError(errno.EACCES, "Permission denied", "runs")
    assert os_error(denied) == "runs: Permission denied; check its permissions"
