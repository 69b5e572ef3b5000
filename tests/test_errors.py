"""One-line errors (seq2seq/errors.py): a setting named in the words of
whoever set it, the system's refusals with what to do, and the exit status."""

from __future__ import annotations

import copy
import errno
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq.errors import (
    SettingError,
    UserError,
    exit_status,
    first_line,
    literal,
    os_error,
    out_of_memory,
)
from seq2seq.training.checkpoint import open_run


def test_a_setting_error_reads_the_setting_or_its_option() -> None:
    err = SettingError("{beam} 5 needs 9 GiB; lower {beam} or {batch_size}")
    assert isinstance(err, UserError)
    assert str(err) == "beam 5 needs 9 GiB; lower beam or batch_size"
    assert err.as_option() == "--beam 5 needs 9 GiB; lower --beam or --batch-size"


def test_values_with_braces_stay_as_they_are() -> None:
    err = SettingError(f"{{out}} {literal('a{b}.png')}: refused")
    assert str(err) == "out a{b}.png: refused"
    assert err.as_option() == "--out a{b}.png: refused"


def test_a_setting_error_survives_pickling_and_copying() -> None:
    err = SettingError(f"{{split}} {literal('v{0}')}: no data.{literal('v{0}')}")
    for again in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
        assert str(again) == str(err) == "split v{0}: no data.v{0}"
        assert again.as_option() == "--split v{0}: no data.v{0}"


def test_exit_status_prints_the_options_words(
    capsys: pytest.CaptureFixture,
) -> None:
    assert exit_status(SettingError("{device} tpu: choose auto, cpu or cuda")) == 2
    assert capsys.readouterr().err == "error: --device tpu: choose auto, cpu or cuda\n"
    assert exit_status(UserError("plain")) == 2
    assert capsys.readouterr().err == "error: plain\n"
    assert exit_status(ValueError("a bug")) is None  # let it raise


def test_the_library_and_the_cli_word_one_error_each_their_way(
    tmp_path: Path,
) -> None:
    """The model's checkpoint named by a caller of open_run, and by the user
    of `seq2seq evaluate --checkpoint`."""
    run_dir = tmp_path / "additive"
    shutil.copytree(REPO / "tests" / "fixtures" / "saved_run" / "additive", run_dir)
    with pytest.raises(SettingError, match="^checkpoint nope.pt: no such file"):
        open_run(run_dir, "nope.pt")
    done = subprocess.run(
        [sys.executable, "-m", "seq2seq", "evaluate", str(run_dir)]
        + ["--checkpoint", "nope.pt"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: --checkpoint nope.pt: no such file; pass")
    assert done.stderr.count("\n") == 1


def test_a_system_refusal_says_where_why_and_what_to_do() -> None:
    full = OSError(errno.ENOSPC, "No space left on device", "runs/x/last.pt")
    line = os_error(full)
    assert (
        line
        == "runs/x/last.pt: No space left on device; free some disk space and run again"
    )
    moved = OSError(errno.EACCES, "Permission denied", "a", None, "b")
    assert os_error(moved).startswith("a -> b: Permission denied; check its")


def test_first_line_and_out_of_memory() -> None:
    assert first_line(RuntimeError("one\ntwo")) == "one"
    assert first_line(RuntimeError("")) == "RuntimeError"
    assert out_of_memory(MemoryError())
    assert out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory"))
    assert not out_of_memory(RuntimeError("shape mismatch"))
