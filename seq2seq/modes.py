"""The registry of attention modes: ``model.attention``'s name -> the part.

A mode is registered once, beside its class in model/attention.py::

    register("additive", lambda s: Additive(s.query, s.key, s.attention),
             "Bahdanau et al. 2015: e = v^T tanh(W q + U k)",
             "additive attention")

and everything else reads it here: the values ``model.attention`` accepts
(checked when a config loads), ``build_model``, the config reference
(docs/config.md), the list of modes in the docs, and the tests, which run
every registered mode through the shared attention, model and search tests.

The registry sits beside the layers, so that the config (below the model)
can check a name; the model layer fills it. Every reader goes through
:func:`registry`, which imports model/attention.py (and with it torch) the
first time, so every mode is registered before any config is checked, and a
command that reads no config (``seq2seq --help``) never loads torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seq2seq.registry import Registry


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
    plain: str  # the same in a student's words, for legends and slides
    query_is_key: bool = False  # scores need decoder size == encoder output size


REGISTRY = Registry[Mode](
    "attention mode", "model.attention", "seq2seq.model.attention"
)
MODES = REGISTRY.items  # read it through registry()


def register(
    name: str,
    build: Callable[[Sizes], Any],
    summary: str,
    plain: str,
    query_is_key: bool = False,
) -> None:
    """Add a mode; a name is registered once."""
    REGISTRY.add(name, Mode(name, build, summary, plain, query_is_key))


def registry() -> dict[str, Mode]:
    """Every mode, registered by model/attention.py on its first import."""
    return REGISTRY.all()


def names() -> tuple[str, ...]:
    """Every registered mode, in registration order."""
    return tuple(registry())


def mode(name: str) -> Mode:
    return REGISTRY.get(name)
