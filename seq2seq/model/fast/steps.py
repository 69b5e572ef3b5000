"""Every decoder step's attention at once: the sequence path's half of each
mode (attention.py has the reference, one step at a time).

Without input feeding the queries h_1..h_T exist before any attention is
taken (decoding.py), so a mode's contexts for all of them are a few batched
operations instead of T calls: for a mode defined by its scores, one
(B, T, S) score tensor, one masked softmax and one bmm. One rule per mode,
looked up by the mode's exact class; a mode without a rule (a new one, or
the ablation's wrapper) runs its own one-step forward vectorised over T with
torch.vmap, the same numbers more slowly. tests/test_attention.py checks
every registered mode's rule against its step loop, forward and backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from seq2seq.model import attention as att

# (module, queries (B, T, Hq), keys (B, S, D), mask (B, S), projected) ->
# contexts (B, T, D), weights (B, T, S) or None
Rule = Callable[[Any, Tensor, Tensor, Tensor, Tensor], tuple[Tensor, Tensor | None]]
Scores = Callable[[Any, Tensor, Tensor], Tensor]  # (module, queries, projected)


def attend_steps(
    module: att.Attention,
    queries: Tensor,
    keys: Tensor,
    mask: Tensor,
    projected: Tensor,
) -> tuple[Tensor, Tensor | None]:
    """``module(q, keys, mask, projected)`` for every q of queries (B, T, Hq),
    stacked: contexts (B, T, D), weights (B, T, S) or None."""
    rule = RULES.get(type(module), by_vmap)
    return rule(module, queries, keys, mask, projected)


def by_vmap(
    module: att.Attention,
    queries: Tensor,
    keys: Tensor,
    mask: Tensor,
    projected: Tensor,
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


def softmax_steps(scores: Tensor, mask: Tensor) -> Tensor:
    """Every step's distribution (B, T, S) over real positions, 0 on padding."""
    return torch.softmax(scores.masked_fill(~mask[:, None], float("-inf")), -1)


def scored(scores: Scores) -> Rule:
    """The rule of a mode defined by its scores: softmax, then one bmm."""

    def rule(
        module: Any, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
    ) -> tuple[Tensor, Tensor]:
        weights = softmax_steps(scores(module, queries, projected), mask)  # (B, T, S)
        return torch.bmm(weights.to(keys.dtype), keys), weights  # (B, T, D)

    return rule


def additive_scores(module: att.Additive, queries: Tensor, projected: Tensor) -> Tensor:
    # (B, T, 1, A) + (B, 1, S, A): every step's tanh(W q + U k) (B, T, S, A)
    hidden = torch.tanh(module.query_proj(queries).unsqueeze(2) + projected[:, None])
    scores: Tensor = module.v(hidden).squeeze(-1)  # (B, T, S), Bahdanau Eq. 6
    return scores


def dot_scores(module: att.Dot, queries: Tensor, projected: Tensor) -> Tensor:
    return torch.bmm(queries, projected.transpose(1, 2))  # (B, T, S), Luong Eq. 8


def scaled_dot_scores(module: att.Dot, queries: Tensor, projected: Tensor) -> Tensor:
    return dot_scores(module, queries, projected) / math.sqrt(queries.size(-1))


def hard(
    module: att.Hard, queries: Tensor, keys: Tensor, mask: Tensor, projected: Tensor
) -> tuple[Tensor, Tensor]:
    """The argmax of the additive distribution, straight-through (att.Hard)."""
    soft = softmax_steps(additive_scores(module, queries, projected), mask)
    one_hot = F.one_hot(soft.argmax(-1), soft.size(-1)).to(soft.dtype)  # (B, T, S)
    weights = one_hot + soft - soft.detach()
    return torch.bmm(weights.to(keys.dtype), keys), weights  # (B, T, D)


def no_context(
    module: att.NoContext, queries: Tensor, keys: Tensor, mask: Tensor, _: Tensor
) -> tuple[Tensor, None]:
    return queries.new_zeros(*queries.shape[:2], module.key_dim), None  # (B, T, D)


def final(
    module: att.FinalState, queries: Tensor, keys: Tensor, mask: Tensor, summary: Tensor
) -> tuple[Tensor, None]:
    return summary.unsqueeze(1).expand(-1, queries.size(1), -1), None  # (B, T, D)


def mean(
    module: att.MeanPool, queries: Tensor, keys: Tensor, mask: Tensor, _: Tensor
) -> tuple[Tensor, Tensor]:
    context, weights = module(queries[:, 0], keys, mask)  # the same every step
    steps = queries.size(1)
    return (
        context.unsqueeze(1).expand(-1, steps, -1),  # (B, T, D)
        weights.unsqueeze(1).expand(-1, steps, -1),  # (B, T, S)
    )


RULES: dict[type[att.Attention], Rule] = {
    att.NoContext: no_context,
    att.FinalState: final,
    att.MeanPool: mean,
    att.Hard: hard,
    att.Additive: scored(additive_scores),
    att.Dot: scored(dot_scores),
    att.General: scored(dot_scores),
    att.ScaledDot: scored(scaled_dot_scores),
}
