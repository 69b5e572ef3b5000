"""The lesson's single-head attention (notebooks 1, 2 and 5): scaled
dot-product attention over whole sequences of queries, as the lesson writes it,
with its padding and causal masks. The translation model's own attention is
one query per decoder step (seq2seq.model.attention); this one is the
building block of a Transformer layer, for comparison.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seq2seq.model.masks import causal_mask  # the one owner; the lesson's too

__all__ = ["SingleHeadAttention", "causal_mask", "padding_mask"]


class SingleHeadAttention(nn.Module):
    """Scaled dot-product attention over sequences of queries (Vaswani et al.
    2017, Eq. 1): softmax(Q K^T / sqrt(d_k)) V with Q = x_q W_Q, K = x_kv W_K,
    V = x_kv W_V, projections without bias. Self-attention: ``x_kv = x_q``.

    ``mask`` broadcasts to (B, Tq, Tk) and is True where a query may look at a
    key (:func:`padding_mask`, :func:`causal_mask`, or both with ``&``). As in
    the lesson, a 0/1 mask of integers or floats (``torch.tril(torch.ones(n, n))``)
    means the same: 0 = may not look. Masked keys get exactly zero weight, and a
    query with no key allowed gets zero weights and a zero output.
    """

    def __init__(self, d_model: int, d_k: int) -> None:
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_k, bias=False)
        self.scale = d_k**-0.5

    def forward(
        self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.w_q(x_q)  # (B, Tq, d_k)
        k, v = self.w_k(x_kv), self.w_v(x_kv)  # (B, Tk, d_k)
        scores = q @ k.transpose(1, 2) * self.scale  # (B, Tq, Tk)
        if mask is not None:
            mask = mask != 0  # the lesson's `mask == 0` rule, for any dtype
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (B, Tq, Tk)
        if mask is not None:  # rows with every key masked: 0 instead of NaN
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        return weights @ v, weights  # (B, Tq, d_k), (B, Tq, Tk)


def padding_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """(B, 1, T): True on the first ``lengths[b]`` positions (the real keys)."""
    positions = torch.arange(max_len or int(lengths.max()), device=lengths.device)
    return (positions < lengths.unsqueeze(1)).unsqueeze(1)
