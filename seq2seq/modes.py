"""The registry of attention modes: ``model.attention``'s name -> the part.

A mode is registered once, beside its class in model/attention.py::

    register("additive", lambda s: Additive(s.query, s.key, s.attention),
             "Bahdanau et al. 2015: e = v^T tanh(W q + U k)")

and everything else reads it here: the values ``model.attention`` accepts
(checked when a config loads), ``build_model``, the config reference
(docs/config.md), the list of modes in the docs, and the tests, which run
every registered mode through the shared attention, model and search tests.

The registry sits beside the layers, so that the config (below the model)
can check a name; the model layer fills it. ``seq2seq/__init__.py`` imports
model/attention.py, so every mode is registered before any config is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seq2seq.errors import UserError


@dataclass(frozen=True)
class Sizes:
    """What a mode may be built from: the model's sizes."""

    query: int  # the decoder's hidden size (h_t)
    key: int  # the encoder's output size (2H when bidirectional)
    attention: int  # model.attention_dim, the additive score's hidden width
    bidirectional: bool  # the encoder's; where its final state lies
    reverse: bool  # the encoder read the source reversed


@dataclass(frozen=True)
class Mode:
    name: str
    build: Callable[[Sizes], Any]  # -> an attention.Attention
    summary: str  # one line: what the decoder sees
    query_is_key: bool = False  # scores need decoder size == encoder output size


MODES: dict[str, Mode] = {}


def register(
    name: str, build: Callable[[Sizes], Any], summary: str, query_is_key: bool = False
) -> None:
    """Add a mode; a name is registered once."""
    if name in MODES:
        raise ValueError(f"attention mode {name!r} is registered twice")
    MODES[name] = Mode(name, build, summary, query_is_key)


def names() -> tuple[str, ...]:
    """Every registered mode, in registration order."""
    return tuple(MODES)


def mode(name: str) -> Mode:
    if name not in MODES:
        raise UserError(
            f"config key 'model.attention': {name!r} is not one of {', '.join(MODES)}"
        )
    return MODES[name]
