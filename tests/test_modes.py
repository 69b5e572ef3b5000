"""The registry of attention modes: filled on its first read, each name once,
an unknown name one line listing the others."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seq2seq import modes
from seq2seq.errors import UserError


def test_reading_the_registry_registers_every_mode_first() -> None:
    # In a fresh interpreter: nothing is registered until it is read.
    code = (
        "import sys\n"
        "from seq2seq import modes\n"
        "assert not modes.MODES and 'torch' not in sys.modules\n"
        "print(','.join(modes.names()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    names = out.stdout.strip().split(",")
    assert {"none", "context", "mean", "hard", "additive", "dot"} <= set(names)
    assert names == list(modes.names())  # registration order


def test_a_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        modes.register("additive", lambda s: None, "again", "again")


def test_an_unknown_mode_names_the_key_and_the_choices() -> None:
    with pytest.raises(UserError, match="'model.attention': 'adittive' is not one"):
        modes.mode("adittive")
    assert modes.mode("additive").name == "additive"
