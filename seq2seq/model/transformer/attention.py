"""Multi-head scaled dot-product attention (Vaswani et al. 2017, Sec. 3.2):
the Transformer's one attention, used three ways (layers.py): the encoder's
self-attention over the source, the decoder's causal self-attention over the
target prefix, and the decoder's cross-attention over the source.

    head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i        Eq. 1, per head
    out    = [head_1; ...; head_h] W^O                 Sec. 3.2.2

with Q_i, K_i, V_i the queries', keys' and values' projections cut into h
slices of d_k = d_model / h. A mask says where a query may look: True (or
any nonzero) where it may, and ``mask == 0`` becomes -inf before the
softmax, as in the lesson (seq2seq/lesson/attention.py), so a masked key
gets exactly zero weight.

Two ways to compute the same numbers, chosen once when the model is built
(``model.fused_attention``): :func:`attend_reference` writes Eq. 1 out
(project, score, mask, softmax, mix), and :func:`attend_fused` calls
``torch.nn.functional.scaled_dot_product_attention``, one fused kernel that
never forms the weights. A caller that asks for the weights (drawing, AER,
the explorer) gets the reference, whose weights are the ones that mixed the
values; tests/test_transformer.py holds the two equal.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq.model.ablation import Rule


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, heads: int, dropout: float, fused: bool) -> None:
        super().__init__()
        assert d_model % heads == 0, "config.py checks d_model % heads"
        self.heads, self.d_k = heads, d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)  # W^Q, every head's side by side
        # No bias on K: it would add q . b_K to every score of a query, the same
        # for every key, which the softmax ignores (its gradient is zero but for
        # rounding, which Adam would turn into steps of full size).
        self.k_proj = nn.Linear(d_model, d_model, bias=False)  # W^K
        self.v_proj = nn.Linear(d_model, d_model)  # W^V
        self.out_proj = nn.Linear(d_model, d_model)  # W^O
        self.dropout = dropout  # on the weights, in training
        self.fused = fused
        # None: the weights as trained; a Rule (model/ablation.py) while
        # evaluate --ablate replaces them
        self.ablated: Rule | None = None

    def split(self, x: Tensor) -> Tensor:
        """(B, T, d_model) -> (B, h, T, d_k): one slice per head."""
        batch, steps, _ = x.shape
        return x.view(batch, steps, self.heads, self.d_k).transpose(1, 2)

    def keys_values(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """K and V of positions x (B, T, d_model), each (B, h, T, d_k): once per
        source for cross-attention, once per new token in incremental decoding."""
        return self.split(self.k_proj(x)), self.split(self.v_proj(x))

    def forward(
        self,
        x: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None,
        need_weights: bool = False,
        causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Queries from x (B, Tq, d_model) over ``keys``/``values``
        (B, h, Tk, d_k); ``mask`` broadcasts to (B, 1, Tq, Tk), None where
        every key may be read (a search step's own prefix). ``causal``: the
        mask is the decoder's under teacher forcing, no later position and no
        padding, the padding all after the real tokens, so that the fused
        kernel may build the causal mask itself (``is_causal``: no mask
        tensor read); every real query's output is the same. The output
        (B, Tq, d_model), and the weights (B, h, Tq, Tk) if asked for."""
        q = self.split(self.q_proj(x))  # (B, h, Tq, d_k)
        p = self.dropout if self.training else 0.0
        if self.ablated is not None:
            _, trained = attend_reference(q, keys, values, mask)
            weights = self.ablated(trained, mask)  # (B, h, Tq, Tk)
            mixed = weights @ values
        elif self.fused and not need_weights:
            mixed, weights = attend_fused(q, keys, values, mask, p, causal), None
        else:
            mixed, weights = attend_reference(q, keys, values, mask, p)
        batch, _, steps, _ = mixed.shape
        joined = mixed.transpose(1, 2).reshape(batch, steps, -1)  # (B, Tq, d_model)
        out: Tensor = self.out_proj(joined)
        return out, (weights if need_weights else None)


def attend_reference(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout: float = 0.0
) -> tuple[Tensor, Tensor]:
    """Eq. 1 written out: the mixed values (B, h, Tq, d_k) and the weights
    (B, h, Tq, Tk), 0 where ``mask == 0``."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, h, Tq, Tk)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    dropped = F.dropout(weights, dropout) if dropout > 0 else weights
    return dropped @ v, weights


def attend_fused(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    dropout: float = 0.0,
    causal: bool = False,
) -> Tensor:
    """The same in torch's fused kernel (its boolean mask: True may attend).
    ``causal``: ``mask`` is causal with the padding after the real tokens
    (MultiHeadAttention.forward), and the kernel masks the later positions
    itself, which also keeps every real query off the padding: a padded
    query, whose output no loss reads, may then read padded keys."""
    if causal:
        return F.scaled_dot_product_attention(
            q, k, v, dropout_p=dropout, is_causal=True
        )
    allowed = mask if mask is None or mask.dtype == torch.bool else mask != 0
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=dropout)
