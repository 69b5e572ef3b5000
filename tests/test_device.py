"""Device choice and the CPU allocator setting."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest
import torch

from seq2seq.errors import SettingError, UserError
from seq2seq.training.device import pick_device


def test_pick_device() -> None:
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("auto").type in ("cpu", "cuda")
    with pytest.raises(SettingError, match="^device tpu: choose auto, cpu or cuda"):
        pick_device("tpu")  # a library caller reads the setting's name


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_missing_cuda_is_a_user_error() -> None:
    with pytest.raises(UserError, match="no CUDA device"):
        pick_device("cuda")


PROBE = """
import sys, torch
from seq2seq.training.device import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
x = torch.ones(6_000_000)  # 24 MB, touched
before = rss_mb()
del x
print(before - rss_mb())
"""


def freed_mb(mode: str) -> float:
    """How much memory a fresh process gives back when it frees a 24 MB tensor."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return float(out.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_freed_memory_stays_for_the_next_tensor() -> None:
    """glibc alone unmaps a freed 24 MB block (the next one will fault in fresh
    pages); with keep_freed_memory the block stays in the heap for reuse."""
    assert freed_mb("default") > 20
    assert freed_mb("keep") < 1
