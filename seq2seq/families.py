"""The registry of model families: ``model.family``'s name -> the family.

A family is registered once, beside its builder (the RNN's at the end of
model/model.py, the Transformer's at the end of model/transformer/model.py;
model/registered.py imports both)::

    register("rnn", RNNConfig, build_rnn, fast.path.unsupported,
             "an RNN encoder-decoder with one attention over the source")

- its name, the value of ``model.family`` (``rnn`` where a config names
  none: every config written before families were);
- its config dataclass, the ``model`` section for that name (config.py):
  typed_yaml picks it by the ``family`` key, and a key of another family's
  section is a one-line error that says whose key it is;
- its builder, ``(section, source vocabulary size, target vocabulary size,
  train.recurrence) -> model``, a model of the interface in
  model/interface.py, which is all that training, search and the lab use;
- what its fast paths support: why ``train.recurrence`` cannot train a given
  section, or None.

It sits beside modes.py, below the layers, so that the config can pick a
section by name; the model layer fills it. Every reader goes through
:func:`registry`, which imports the registrations the first time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seq2seq.registry import Registry


@dataclass(frozen=True)
class Family:
    name: str
    config: type  # the dataclass of its model section
    build: Callable[[Any, int, int, str], Any]  # -> an interface.EncoderDecoder
    unsupported: Callable[[Any, str], str | None]  # (section, path) -> why not
    summary: str  # one line: what the model is


REGISTRY = Registry[Family]("model family", "model.family", "seq2seq.model.registered")
FAMILIES = REGISTRY.items  # read it through registry()
DEFAULT = "rnn"  # a config that names no family
# The kinds of attention a family's maps may hold (model/interface.py's Maps),
# named here, below every layer, so that the command line's help can list
# them without importing torch: an RNN's one attention is cross.
ATTENTION_KINDS = ("cross", "encoder_self", "decoder_self")


def register(
    name: str,
    config: type,
    build: Callable[[Any, int, int, str], Any],
    unsupported: Callable[[Any, str], str | None],
    summary: str,
) -> None:
    """Add a family; a name is registered once."""
    REGISTRY.add(name, Family(name, config, build, unsupported, summary))


def registry() -> dict[str, Family]:
    """Every family, registered by model/registered.py on its first import."""
    return REGISTRY.all()


def sections() -> dict[str, type]:
    """Each family's name and its config section's dataclass."""
    return {name: f.config for name, f in registry().items()}


def family(name: str) -> Family:
    return REGISTRY.get(name)
