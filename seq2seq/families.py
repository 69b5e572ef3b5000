"""The registry of model families: ``model.family``'s name -> the family.

A family is registered once, beside its builder (the RNN's at the end of
model/model.py, the Transformer's at the end of model/transformer/model.py;
model/registered.py imports both: a new family's folder adds one line there)::

    register("transformer", TransformerConfig, build_transformer, unsupported,
             "a Transformer encoder-decoder", label)

- its name, the value of ``model.family`` (``rnn`` where a config names
  none: every config written before families were);
- its config dataclass, the ``model`` section for that name (config.py):
  typed_yaml picks it by the ``family`` key, and a key of another family's
  section is a one-line error that says whose key it is;
- its builder, ``(section, source vocabulary size, target vocabulary size,
  train.recurrence) -> model``, a model of the interface in
  model/interface.py, which is all that training, search and the lab use;
- what its fast paths support: why ``train.recurrence`` cannot train a given
  section, or None;
- one line saying what the model is (docs/config.md lists it);
- how tables name its runs: its model's ``mode`` -> a label (by default the
  family's name where the mode is the family's name, else ``family/mode``).

It sits beside modes.py, below the layers, so that the config can pick a
section by name; the model layer fills it. Every reader goes through
:func:`registry`, which imports the registrations the first time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    label: Callable[[str], str]  # its model's mode -> what tables call a run


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
    label: Callable[[str], str] | None = None,
) -> None:
    """Add a family; a name is registered once."""
    named = label or (lambda mode: name if mode == name else f"{name}/{mode}")
    REGISTRY.add(name, Family(name, config, build, unsupported, summary, named))


def registry() -> dict[str, Family]:
    """Every family, registered by model/registered.py on its first import."""
    return REGISTRY.all()


def sections() -> dict[str, type]:
    """Each family's name and its config section's dataclass."""
    return {name: f.config for name, f in registry().items()}


def family(name: str) -> Family:
    return REGISTRY.get(name)


def run_label(family: str, mode: str, mixed: bool = False) -> str:
    """What a table or a legend calls a run of ``family`` whose model's mode
    is ``mode``: the family's own label (an RNN by its attention mode,
    ``additive``; a Transformer by its name, ``transformer``, or with its
    ablation, ``transformer/no-residual``). Where runs of several families
    are shown together (``mixed``) every label starts with its family's
    name (``rnn/additive``). A family no longer registered: ``family/mode``."""
    known = registry().get(family)
    label = known.label(mode) if known else f"{family}/{mode}"
    if mixed and label.split("/")[0] != family:
        return f"{family}/{label}"
    return label


def mixes_families(names: Iterable[str]) -> bool:
    """Whether runs of more than one family are shown together."""
    return len(set(names)) > 1
