"""What everything above the model may use of one: the encoder-decoder's
interface, the same for every model family.

Training, search, scoring and the lab call these methods and nothing else of
a model: they never reach into its encoder or decoder (an architecture test
holds them to it). A family writes them once for its parts, as the Annotated
Transformer's ``EncoderDecoder`` does with ``encode``/``decode``:

- :meth:`~EncoderDecoder.encode` reads the source once into a memory;
- :meth:`~EncoderDecoder.init_state` and :meth:`~EncoderDecoder.step` write
  the target one token at a time (search), each step's output going through
  :meth:`~EncoderDecoder.logits` to the vocabulary;
- ``forward(src, src_len, tgt_in, maps=True)`` runs teacher forcing over a
  whole target (training, forced decoding), and
  :meth:`~EncoderDecoder.token_loss` takes its output to the summed
  cross-entropy. ``maps=False`` says no caller reads the attention (a
  training step): a family may then skip forming it.

Both return every attention map they computed as one value, :class:`Maps`
(by kind, each layers x heads); where one matrix is wanted, the family's
:class:`Display` picks it (:meth:`~EncoderDecoder.shown`).

A memory and a decoder state keep the rows of the batch: ``select(index)``
keeps rows ``index`` (beam search's reordering, fairseq's
``reorder_incremental_state``), whatever layout the family's tensors have.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

from torch import Tensor, nn

from seq2seq.errors import UserError
from seq2seq.families import ATTENTION_KINDS
from seq2seq.model.ablation import Ablation


class Rows(Protocol):
    """A batch's memory or decoder state: its rows can be kept or reordered."""

    def select(self, index: Tensor) -> Self: ...


MemoryT = TypeVar("MemoryT", bound=Rows)
StateT = TypeVar("StateT", bound=Rows)


KINDS = ATTENTION_KINDS
# What each kind's queries (rows) and keys (columns) are, of the three sides
# of a pair a pass reads: the source pieces with EOS (``source``), the
# target the decoder writes, with EOS (``target``: its outputs), and BOS
# with the target (``prefix``: its inputs). Every label and size of a map
# comes from here (by_side).
SIDES = {
    "cross": ("target", "source"),
    "encoder_self": ("source", "source"),
    "decoder_self": ("prefix", "prefix"),
}
T = TypeVar("T")


def by_side(kind: str, source: T, target: T, prefix: T) -> tuple[T, T]:
    """(what the rows are, what the columns are) of a map of ``kind``,
    picked from the three sides of one pair (labels, lengths, titles)."""
    sides = {"source": source, "target": target, "prefix": prefix}
    queries, keys = SIDES[kind]
    return sides[queries], sides[keys]


@dataclass(frozen=True)
class Maps:
    """Every attention map one forward pass (or one step) computed, by kind,
    each (B, layers, heads, queries, keys), or None where the model has no
    such attention:

    - ``cross``: decoder queries over the source (the RNN's attention, one
      layer and one head; Bahdanau et al. 2015);
    - ``encoder_self``: source positions over the source (bidirectional);
    - ``decoder_self``: target positions over the target prefix (causal).

    A step of search has one query per sentence. Returned, never stashed on
    a module."""

    cross: Tensor | None = None
    encoder_self: Tensor | None = None
    decoder_self: Tensor | None = None

    def of(self, kind: str) -> Tensor | None:
        if kind not in KINDS:
            raise ValueError(f"attention kind {kind!r}: one of {', '.join(KINDS)}")
        found: Tensor | None = getattr(self, kind)
        return found

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds this pass computed."""
        return tuple(k for k in KINDS if getattr(self, k) is not None)

    @property
    def several(self) -> bool:
        """Whether there is more than one matrix a sentence to show (kinds,
        layers or heads: a Transformer's), not just the RNN's one."""
        found = [m for m in (self.of(k) for k in self.kinds) if m is not None]
        return len(found) > 1 or any(m.size(1) * m.size(2) > 1 for m in found)


NO_MAPS = Maps()


@dataclass(frozen=True)
class Display:
    """Which map stands for a model where one matrix is wanted (a heatmap,
    AER, ``translate --alignments``, the explorer): a kind, a layer, and
    the heads averaged (``head`` None) or one of them. A family says its
    own (``EncoderDecoder.display``)."""

    kind: str = "cross"
    layer: int = -1  # the last
    head: int | None = None

    def of(self, maps: Maps) -> Tensor | None:
        """That map (B, queries, keys), or None where there is none."""
        found = maps.of(self.kind)
        if found is None:
            return None
        layer = found[:, self.layer]  # (B, heads, Q, K)
        if self.head is not None:
            return layer[:, self.head]
        # one head (the RNN's, at every search step): itself, not a mean's copy
        return layer[:, 0] if layer.size(1) == 1 else layer.mean(dim=1)


@dataclass(frozen=True)
class Reading:
    """What the decoder reads of the source, step by step (the probe's
    vectors): with attention, its weights (B, T, S) and the contexts
    c_t = sum_j a_tj h_j (B, T, D); without, only the summary (B, D) every
    step reads."""

    weights: Tensor | None
    contexts: Tensor | None
    summary: Tensor


class EncoderDecoder(nn.Module, ABC, Generic[MemoryT, StateT]):
    """An encoder-decoder of some family: its ``family`` (the registered
    name) and its ``mode``, what tells its runs apart within the family (an
    RNN's attention mode, a Transformer's variant), from which the family's
    label names a run in tables (families.run_label)."""

    family: str
    mode: str
    display: Display = Display()  # which map stands for the model (Display)

    @abstractmethod
    def encode(self, src: Tensor, src_len: Tensor) -> MemoryT:
        """The source (B, S) read once, for every decoder step."""

    @abstractmethod
    def init_state(self, memory: MemoryT) -> StateT:
        """The decoder's state before the first target token."""

    @abstractmethod
    def step(
        self, prev: Tensor, state: StateT, memory: MemoryT
    ) -> tuple[Tensor, StateT, Maps]:
        """One step from the previous tokens (B,): the output (B, H) that
        :meth:`logits` takes, the next state, and this step's attention
        maps (one query each)."""

    def shown(self, maps: Maps) -> Tensor | None:
        """The map that stands for the model (its :attr:`display`):
        (B, queries, keys), or None where it has none."""
        return self.display.of(maps)

    @abstractmethod
    def logits(self, out: Tensor) -> Tensor:
        """Outputs (..., H) to next-token logits (..., V)."""

    @abstractmethod
    def token_loss(
        self, out: Tensor, tgt_out: Tensor, smoothing: float, chunked: bool
    ) -> Tensor:
        """The summed token cross-entropy of teacher forcing's outputs
        (B, T, H) against ``tgt_out`` (B, T), padding ignored; ``chunked``
        takes seq2seq.model.loss's chunked path."""

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """The target vocabulary's size (the logits' last dimension)."""

    @property
    def has_alignment(self) -> bool:
        """Whether the decoder attends over the source (weights to draw):
        a family's models do unless they say otherwise (an RNN's
        single-vector modes, model.py)."""
        return True

    def read_source(self, src: Tensor, src_len: Tensor, tgt_in: Tensor) -> Reading:
        """The vectors through which the decoder reads the source under
        teacher forcing, for ``seq2seq probe``."""
        raise UserError(
            f"probe: a {self.family} model reads the source through no single "
            "vector, so there is nothing to probe"
        )

    def ablate(self, ablation: Ablation) -> None:
        """Replace the trained weights where ``ablation`` says, from now on
        (model/ablation.py; ``evaluate --ablate``), or say in one line why
        this model cannot."""
        raise UserError(f"--ablate: a {self.family} model has no attention to ablate")

    def training_path(self) -> str:
        """How it trains, where the family has fast paths to choose from
        (chosen once, when it is built): words for the start-up line."""
        return ""

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


Model = EncoderDecoder[Any, Any]  # a model of any family, as callers see it
