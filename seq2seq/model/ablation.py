"""Attention ablations: how much does a trained model rely on its weights?

Attention maps are useful but not guaranteed explanations (Jain & Wallace
2019). ``seq2seq evaluate --ablate HOW`` decodes with a trained model's
attention weights replaced, at every step, by

- ``uniform``: the same weight on every position the query may read (mean
  pooling);
- ``shuffle``: the model's own weights permuted at random over those
  positions (same sharpness, wrong places);
- ``none``: no weights at all, so the attention adds nothing (the RNN's
  c_t = 0, as in mode ``none``; a Transformer head's output zero, the head
  masking of Michel et al. 2019, "Are Sixteen Heads Really Better than One?").

An :class:`Ablation` says how and where: which attention (an RNN has only
``cross``), which layers and which heads (all by default; an RNN has one
of each). The family applies it (the interface's ``ablate``); the rules
here act on weights of any shape whose last dimension is the keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

HOWS = ("uniform", "shuffle", "none")


@dataclass(frozen=True)
class Ablation:
    how: str  # one of HOWS
    attention: str = "cross"  # one of families.ATTENTION_KINDS
    layers: tuple[int, ...] | None = None  # 1-based, as TensorBoard's tags; all
    heads: tuple[int, ...] | None = None  # 1-based; None: every head
    seed: int = 0  # shuffle's permutations, so that an evaluation repeats

    @property
    def whole(self) -> bool:
        """Whether it acts on all of the cross-attention (evaluate's columns in
        ``compare`` are these)."""
        return self.attention == "cross" and not (self.layers or self.heads)

    @property
    def tag(self) -> str:
        """For file names: ``uniform``, ``none-cross-layer2-head1+3``."""
        if self.whole:
            return self.how
        parts = [self.how, self.attention]
        if self.layers:
            parts.append("layer" + "+".join(map(str, self.layers)))
        if self.heads:
            parts.append("head" + "+".join(map(str, self.heads)))
        return "-".join(parts)


class Rule:
    """One attention module's replacement of its weights: called with the
    trained weights (..., Q, K) or (B, K) and where the query may read (a
    mask broadcasting to them, nonzero where it may; None: everywhere).
    With ``heads`` (0-based, weights (B, h, Q, K)) only those heads change."""

    def __init__(self, how: str, heads: tuple[int, ...] | None, seed: int) -> None:
        self.how, self.heads = how, heads
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, weights: Tensor, mask: Tensor | None) -> Tensor:
        allowed = (
            torch.ones_like(weights, dtype=torch.bool)
            if mask is None
            else (mask != 0).expand_as(weights)
        )
        replaced = self.replace(weights, allowed)
        if self.heads is None:
            return replaced
        chosen = torch.zeros(weights.size(1), dtype=torch.bool, device=weights.device)
        chosen[list(self.heads)] = True
        return torch.where(chosen[:, None, None], replaced, weights)  # (B, h, Q, K)

    def replace(self, weights: Tensor, allowed: Tensor) -> Tensor:
        if self.how == "none":
            return torch.zeros_like(weights)
        if self.how == "uniform":
            even = allowed.to(weights.dtype)
            return even / even.sum(dim=-1, keepdim=True).clamp(min=1.0)
        noise = torch.rand(allowed.shape, generator=self.generator)
        # The readable positions are a prefix of every row (padding on the
        # right, the future after the present), and padding sorts last, so
        # the first n positions of ``order`` are a permutation of the n
        # readable ones, and weight zero stays where it may not read.
        order = noise.to(weights.device).masked_fill(~allowed, 2.0).argsort(dim=-1)
        return weights.gather(-1, order)
