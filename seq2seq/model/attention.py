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
module between calls.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

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

    # --- every decoder step at once (the sequence path, seq2seq/fastpath.py) ----

    def scores_steps(self, queries: Tensor, projected: Tensor) -> Tensor:
        """:meth:`scores` for queries (B, T, Hq) at once: (B, T, S)."""
        raise NotImplementedError

    def forward_steps(
        self, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, Tensor | None]:
        """:meth:`forward` for every query of (B, T, Hq): contexts (B, T, D),
        weights (B, T, S) or None. A mode defined by its scores, with
        :meth:`scores_steps`, takes one softmax over (B, T, S) and one bmm;
        any other mode runs its own forward vectorised over T (vmap)."""
        batched = type(self).scores_steps is not Attention.scores_steps
        if type(self).forward is not Attention.forward or not batched:
            return forward_by_vmap(self, queries, keys, mask, projected)
        weights = self.distribution_steps(queries, mask, projected)
        return torch.bmm(weights.to(keys.dtype), keys), weights  # (B, T, D)

    def distribution_steps(
        self, queries: Tensor, mask: Tensor, projected: Tensor
    ) -> Tensor:
        """:meth:`distribution` for every step: (B, T, S), 0 on padding."""
        scores = self.scores_steps(queries, projected)  # (B, T, S)
        return torch.softmax(scores.masked_fill(~mask[:, None], float("-inf")), -1)


def forward_by_vmap(
    module: Attention, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
) -> tuple[Tensor, Tensor | None]:
    """``module``'s one-step forward for every query of (B, T, Hq) (vmap)."""

    def one_step(query: Tensor) -> tuple[Tensor, Tensor]:
        context, weights = module(query, keys, mask, projected)
        # vmap stacks only outputs that depend on the step; a context or weights
        # that do not get the step's empty sum added, an exact 0 (B, 1).
        zero = query[:, :0].sum(dim=1, keepdim=True)
        weights = context if weights is None else weights
        return context + zero, weights + zero

    context, weights = torch.vmap(one_step, in_dims=1, out_dims=1)(queries)
    return context, weights if module.has_alignment else None


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

    def forward_steps(
        self, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, None]:
        return queries.new_zeros(*queries.shape[:2], self.key_dim), None  # (B, T, D)


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

    def forward_steps(
        self, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, None]:
        steps = queries.size(1)
        return projected.unsqueeze(1).expand(-1, steps, -1), None  # (B, T, D)


class MeanPool(Attention):
    """``mean``: uniform weights over the real source positions."""

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        weights = mask.to(keys.dtype)
        weights = weights / weights.sum(dim=1, keepdim=True)  # (B, S)
        return attend(weights, keys), weights

    def forward_steps(
        self, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, Tensor]:
        context, weights = self(queries[:, 0], keys, mask)  # the same every step
        steps = queries.size(1)
        return (
            context.unsqueeze(1).expand(-1, steps, -1),  # (B, T, D)
            weights.unsqueeze(1).expand(-1, steps, -1),  # (B, T, S)
        )


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

    def scores_steps(self, queries: Tensor, projected: Tensor) -> Tensor:
        # (B, T, 1, A) + (B, 1, S, A): every step's tanh(W q + U k) (B, T, S, A)
        hidden = torch.tanh(self.query_proj(queries).unsqueeze(2) + projected[:, None])
        return cast(Tensor, self.v(hidden)).squeeze(-1)  # (B, T, S)


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

    def forward_steps(
        self, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, Tensor]:
        soft = self.distribution_steps(queries, mask, projected)  # (B, T, S)
        one_hot = F.one_hot(soft.argmax(-1), soft.size(-1)).to(soft.dtype)
        weights = one_hot + soft - soft.detach()
        return torch.bmm(weights.to(keys.dtype), keys), weights  # (B, T, D)


class Dot(Attention):
    """Luong et al. 2015, Eq. 8 (dot): e = h_t^T h_s. Needs Hq == D."""

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        return torch.bmm(projected, query.unsqueeze(2)).squeeze(2)  # (B, S)

    def scores_steps(self, queries: Tensor, projected: Tensor) -> Tensor:
        return torch.bmm(queries, projected.transpose(1, 2))  # (B, T, S)


class ScaledDot(Dot):
    """Dot product divided by sqrt(d) (Vaswani et al. 2017, Sec. 3.2.1), which
    keeps score variance near 1 as the dimension grows."""

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        return super().scores(query, projected) / math.sqrt(query.size(-1))

    def scores_steps(self, queries: Tensor, projected: Tensor) -> Tensor:
        return super().scores_steps(queries, projected) / math.sqrt(queries.size(-1))


class General(Dot):
    """Luong et al. 2015, Eq. 8 (general): e = h_t^T W_a h_s."""

    def __init__(self, query_dim: int, key_dim: int) -> None:
        super().__init__()
        self.key_proj = nn.Linear(key_dim, query_dim, bias=False)  # W_a

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return cast(Tensor, self.key_proj(keys))  # (B, S, Hq): W_a h_s, once


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
