"""The compiled step loops (seq2seq/model/fast/compiled.py): where they can run,
their build keyed by what went into it, a missing or damaged build said in one
line, and the tensors they do not take sent to the Python loops. (That they
compute what the Python loops compute is test_recurrence.py's.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from seq2seq.model.fast import compiled
from seq2seq.model.fast.recurrence import PYTHON


@pytest.fixture
def fresh_load() -> Iterator[None]:
    compiled.load.cache_clear()
    yield
    compiled.load.cache_clear()


def test_another_architecture_or_an_old_cpu_is_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compiled.platform, "machine", lambda: "aarch64")
    assert compiled.unsupported() == (
        "built for x86-64 with AVX2, this machine is aarch64"
    )
    monkeypatch.setattr(compiled.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "DEFAULT")
    assert compiled.unsupported() == "built for AVX2, this CPU offers DEFAULT"


def test_the_build_folder_changes_with_the_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change of source, flags, torch or Python is a new build, never a
    stale one."""
    key = compiled.build_dir()
    assert key == compiled.build_dir() and key.parent == compiled.CSRC / "build"
    monkeypatch.setattr(compiled, "FLAGS", [*compiled.FLAGS, "-O2"])
    assert compiled.build_dir() != key


def test_no_build_and_a_damaged_one_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_load: None
) -> None:
    monkeypatch.setattr(compiled, "unsupported", lambda: None)
    monkeypatch.setattr(compiled, "build_dir", lambda: tmp_path)
    module, why = compiled.load()
    assert module is None and why.startswith("the compiled loops are not built")
    (tmp_path / f"{compiled.NAME}.so").write_bytes(b"not a library")
    compiled.load.cache_clear()
    module, why = compiled.load()
    assert module is None and why.startswith("the compiled loops do not load (")
    assert why.endswith("rerun make install") and "\n" not in why


def test_bf16_and_other_devices_go_to_the_python_loops() -> None:
    class Built:  # stands in for the compiled module
        pass

    loops = compiled.CompiledLoops(Built())  # type: ignore[arg-type]
    assert loops._for(torch.zeros(2)) is loops.module
    assert loops._for(torch.zeros(2, dtype=torch.float64)) is loops.module
    assert loops._for(torch.zeros(2, dtype=torch.bfloat16)) is PYTHON
    assert loops._for(torch.zeros(2, device="meta")) is PYTHON
