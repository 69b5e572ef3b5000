"""Which path trains the recurrences (``train.recurrence``), and what each
supports: the one place that says so.

- ``steps``: the cells step by step (decoder.py's ``advance``, the packed
  ``nn.GRU``/``nn.LSTM`` encoder). Every model; the reference the others are
  tested against.
- ``sequence``: each GRU or LSTM layer over all steps as one autograd node
  with backward written by hand, its step loops in Python
  (model/recurrence.py). The decoder with input feeding runs this way only
  as a one-layer GRU with ``additive`` attention (model/feeding.py).
- ``compiled``: the same nodes with the step loops in C++
  (model/compiled.py, built by ``make install``); the input-feeding step
  keeps feeding.py's Python loop, and a model on a GPU runs the Python loops.
- ``auto``: ``compiled`` where it is built and runs on this CPU, else
  ``sequence``; ``steps`` for a model the others do not support.

In every path an LSTM encoder stays the packed ``nn.LSTM`` (its oneDNN
kernel is faster on the CPU, docs/speed.md), and search decodes step by
step: the paths differ in training speed, not in what they compute (the
same weights and mathematics, equal to rounding, tested).
"""

from __future__ import annotations

from typing import Any

PATHS = ("auto", "compiled", "sequence", "steps")


def unsupported(model: Any, path: str) -> str | None:
    """Why ``path`` cannot train ``model`` (the RNN family's section,
    config.RNNConfig), or None."""
    if path in ("steps", "auto"):
        return None
    dec = model.decoder
    feeding = dec.rnn == "gru" and dec.layers == 1 and model.attention == "additive"
    if dec.input_feeding and not feeding:
        return (
            f"{path}: with model.decoder.input_feeding it needs a one-layer GRU "
            "decoder with additive attention (model/feeding.py)"
        )
    return None
