"""Context mechanisms: what the decoder sees of the source at each step.

Every mode has one interface, ``(query, keys, mask) -> (context, weights)``:

- ``query``   (B, Hq)  the decoder's current hidden state h_t,
- ``keys``    (B, S, D) the encoder states (also the values),
- ``mask``    (B, S)   True on real source positions,
- ``context`` (B, D)   what is passed to the output layer and fed forward,
- ``weights`` (B, S)   a distribution over source positions, or None where
  the mode has no alignment to show (``none``, ``context``).

Each mode is registered once, at the end of this file (seq2seq/modes.py): its
name in ``model.attention`` and how to build it from the model's sizes.

Score functions whose keys go through a matrix project them once per batch in
:meth:`Attention.project_keys`; the decoder passes the result back on every
step (``projected=``) instead of recomputing it. Nothing is stored on the
module between calls. These are the reference, one step at a time; the
sequence path's every-step-at-once rules live in model/fast/steps.py.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq.model.ablation import Rule
from seq2seq.modes import register


class Attention(nn.Module):
    """Base class. Subclasses define :meth:`scores` (or override forward)."""

    has_alignment = True

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        """Per-batch precomputation over the keys (default: none)."""
        return keys

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        raise NotImplementedError

    def distribution(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> Tensor:
        """Softmax of the scores over real source positions (B, S)."""
        if projected is None:
            projected = self.project_keys(keys, mask)
        scores = self.scores(query, projected)  # (B, S)
        # exp(-inf) = 0: padding gets exactly zero weight.
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        weights = self.distribution(query, keys, mask, projected)
        return attend(weights, keys), weights  # (B, D), (B, S)


class NoContext(Attention):
    """``none`` (Sutskever et al. 2014): the source reaches the decoder only
    through its initial state. The context is a zero vector, so the decoder's
    cell and output layer keep the same shapes as in every other mode."""

    has_alignment = False

    def __init__(self, key_dim: int) -> None:
        super().__init__()
        self.key_dim = key_dim

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, None]:
        return query.new_zeros(query.size(0), self.key_dim), None  # (B, D)


class FinalState(Attention):
    """``context`` (Cho et al. 2014): the encoder's summary c, the same at every
    step. c is the top layer's last forward state concatenated with its first
    backward state (the states that read the whole sentence); for an encoder
    that read the source reversed, its state at source position 0."""

    has_alignment = False

    def __init__(self, bidirectional: bool, reverse: bool = False) -> None:
        super().__init__()
        self.bidirectional = bidirectional
        self.reverse = reverse

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return final_state(keys, mask, self.bidirectional, self.reverse)  # (B, D)

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, None]:
        summary = self.project_keys(keys, mask) if projected is None else projected
        return summary, None


class MeanPool(Attention):
    """``mean``: uniform weights over the real source positions."""

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        weights = mask.to(keys.dtype)
        weights = weights / weights.sum(dim=1, keepdim=True)  # (B, S)
        return attend(weights, keys), weights


class Additive(Attention):
    """Bahdanau et al. 2015, Eq. 6 / App. A.1.2: e = v^T tanh(W q + U k)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)  # W
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=False)  # U
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return cast(Tensor, self.key_proj(keys))  # (B, S, A): U k, once per batch

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        # tanh(W q + U k) (B, S, A), Bahdanau Eq. 6 / Luong Eq. 8 (concat)
        hidden = torch.tanh(self.query_proj(query).unsqueeze(1) + projected)
        return cast(Tensor, self.v(hidden)).squeeze(-1)  # (B, S)


class Hard(Additive):
    """``hard``: attend to exactly one source position, the argmax of the
    additive scores. Straight-through estimator (Bengio et al. 2013): the
    forward pass uses the one-hot choice, the backward pass the softmax's
    gradient, so the scorer still learns."""

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        soft = self.distribution(query, keys, mask, projected)  # (B, S)
        pick = soft.argmax(-1)  # (B,)
        one_hot = F.one_hot(pick, soft.size(-1)).to(soft.dtype)  # (B, S)
        weights = one_hot + soft - soft.detach()  # value: one_hot; gradient: soft's
        return attend(weights, keys), weights


class Dot(Attention):
    """Luong et al. 2015, Eq. 8 (dot): e = h_t^T h_s. Needs Hq == D."""

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        return torch.bmm(projected, query.unsqueeze(2)).squeeze(2)  # (B, S)


class ScaledDot(Dot):
    """Dot product divided by sqrt(d) (Vaswani et al. 2017, Sec. 3.2.1), which
    keeps score variance near 1 as the dimension grows."""

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        return super().scores(query, projected) / math.sqrt(query.size(-1))


class General(Dot):
    """Luong et al. 2015, Eq. 8 (general): e = h_t^T W_a h_s."""

    def __init__(self, query_dim: int, key_dim: int) -> None:
        super().__init__()
        self.key_proj = nn.Linear(key_dim, query_dim, bias=False)  # W_a

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return cast(Tensor, self.key_proj(keys))  # (B, S, Hq): W_a h_s, once


class Ablated(Attention):
    """A trained mode whose weights are replaced at every step
    (model/ablation.py, ``evaluate --ablate``); ``none`` gives c_t = 0."""

    def __init__(self, inner: Attention, rule: Rule) -> None:
        super().__init__()
        self.inner, self.rule = inner, rule

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return self.inner.project_keys(keys, mask)

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if self.rule.how == "none":
            return keys.new_zeros(keys.size(0), keys.size(2)), None  # (B, D)
        _, weights = self.inner(query, keys, mask, projected)  # (B, S)
        assert weights is not None, "ablation checks the mode has weights"
        weights = self.rule(weights, mask)
        return attend(weights, keys), weights


def attend(weights: Tensor, keys: Tensor) -> Tensor:
    """The context: the weighted sum of encoder states, (B, S) x (B, S, D) -> (B, D)."""
    return torch.bmm(weights.unsqueeze(1).to(keys.dtype), keys).squeeze(1)


def final_state(
    states: Tensor, mask: Tensor, bidirectional: bool, reverse: bool = False
) -> Tensor:
    """The top RNN layer's final state, read from its outputs (B, S, D) in
    source order.

    Forward direction: the output at the last real position. Backward
    direction (second half of D): the output at position 0. A unidirectional
    RNN that read the source reversed (``reverse``) ends at position 0 too.
    """
    if reverse:
        return states[:, 0]  # (B, D)
    last = mask.long().sum(dim=1) - 1  # (B,)
    rows = torch.arange(states.size(0), device=states.device)
    forward = states[rows, last]  # (B, D)
    if not bidirectional:
        return forward
    half = states.size(-1) // 2
    return torch.cat([forward[:, :half], states[:, 0, half:]], dim=-1)  # (B, D)


# ---------------------------------------------------------------- the registry
# One registration per mode: its name in model.attention, how to build it from
# the model's sizes (modes.Sizes), one line on what the decoder sees, and the
# same in a student's words (the lesson's legends). The
# config, build_model, the config reference and the tests all read this list.

register(
    "none",
    lambda s: NoContext(s.key),
    "no context: the source reaches the decoder only through its initial state "
    "(Sutskever et al. 2014)",
    "no attention (one vector, h₀)",
)
register(
    "context",
    lambda s: FinalState(s.bidirectional, s.reverse),
    "the encoder's final state c at every step (Cho et al. 2014)",
    "one vector at every step",
)
register(
    "mean",
    lambda s: MeanPool(),
    "the mean of the encoder states",
    "mean of the encoder states",
)
register(
    "hard",
    lambda s: Hard(s.query, s.key, s.attention),
    "one source position, the argmax of the additive scores (straight-through)",
    "hard attention (one state)",
)
register(
    "additive",
    lambda s: Additive(s.query, s.key, s.attention),
    "Bahdanau et al. 2015: e = v^T tanh(W q + U k)",
    "additive attention",
)
register(
    "dot",
    lambda s: Dot(),
    "Luong et al. 2015: e = h_t^T h_s",
    "dot-product attention",
    query_is_key=True,
)
register(
    "general",
    lambda s: General(s.query, s.key),
    "Luong et al. 2015: e = h_t^T W_a h_s",
    "general (bilinear) attention",
)
register(
    "scaled_dot",
    lambda s: ScaledDot(),
    "dot product / sqrt(d) (Vaswani et al. 2017)",
    "scaled dot-product attention",
    query_is_key=True,
)
