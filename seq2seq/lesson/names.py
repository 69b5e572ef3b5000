"""Each mode as a figure's legend says it to a student: the plain name it
is registered with (model/attention.py, seq2seq/modes.py)."""

from __future__ import annotations

from seq2seq import modes


def plain_name(mode: str) -> str:
    """``mode`` for a legend: what the decoder reads (the mode's name when
    no mode of that name is registered)."""
    known = modes.registry().get(mode)
    return mode if known is None else known.plain
