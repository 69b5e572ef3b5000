"""The Transformer's layers (Vaswani et al. 2017, Sec. 3.1), built from
parts: attention (attention.py), a position-wise feed-forward, and the
residual connection with its layer normalisation around each.

    encoder layer:  x = sub(x, self-attention over the source)
                    x = sub(x, feed-forward)
    decoder layer:  y = sub(y, causal self-attention over the target prefix)
                    y = sub(y, cross-attention over the encoder's output)
                    y = sub(y, feed-forward)

``sub`` is the residual sublayer (:class:`Sublayer`): post-norm
``LayerNorm(x + Dropout(f(x)))`` as in the paper (Sec. 5.4), or pre-norm
``x + Dropout(f(LayerNorm(x)))`` (Xiong et al. 2020: trains without a long
warmup; the default), and the lesson's ablations: no norm, no residual.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from seq2seq.model.transformer.attention import MultiHeadAttention


@dataclass(frozen=True)
class Spec:
    """What every layer is built from (the config's section, model.py)."""

    d_model: int
    heads: int
    ffn: int
    dropout: float  # on sublayer outputs and inside the feed-forward
    attention_dropout: float  # on the attention weights
    norm: str  # pre, post or none
    residual: bool
    fused: bool  # attention.py's fused kernel where no weights are asked for

    def attention(self) -> MultiHeadAttention:
        return MultiHeadAttention(
            self.d_model, self.heads, self.attention_dropout, self.fused
        )

    def sublayer(self) -> Sublayer:
        return Sublayer(self.d_model, self.norm, self.residual, self.dropout)


class Sublayer(nn.Module):
    """The residual connection and normalisation around one sublayer f: call
    :meth:`before` on x to get f's input, and :meth:`after` with x and f's
    output to get the next x."""

    def __init__(self, d_model: int, norm: str, residual: bool, dropout: float):
        super().__init__()
        self.norm = nn.LayerNorm(d_model) if norm != "none" else nn.Identity()
        self.pre, self.post = norm == "pre", norm == "post"
        self.residual = residual
        self.dropout = nn.Dropout(dropout)

    def before(self, x: Tensor) -> Tensor:
        normed: Tensor = self.norm(x) if self.pre else x
        return normed

    def after(self, x: Tensor, fx: Tensor) -> Tensor:
        y = self.dropout(fx)
        y = x + y if self.residual else y  # the residual path (He et al. 2016)
        normed: Tensor = self.norm(y) if self.post else y
        return normed


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, at every position (Eq. 2)."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.inner = nn.Linear(spec.d_model, spec.ffn)
        self.outer = nn.Linear(spec.ffn, spec.d_model)
        self.dropout = nn.Dropout(spec.dropout)

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.outer(self.dropout(torch.relu(self.inner(x))))
        return out


class EncoderLayer(nn.Module):
    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.self_attn, self.sub_attn = spec.attention(), spec.sublayer()
        self.ffn, self.sub_ffn = FeedForward(spec), spec.sublayer()

    def forward(
        self, x: Tensor, mask: Tensor, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        """x (B, S, d_model), mask (B, 1, 1, S): the next x and the
        self-attention's weights (B, h, S, S) if asked for."""
        h = self.sub_attn.before(x)
        a, weights = self.self_attn(
            h, *self.self_attn.keys_values(h), mask, need_weights
        )
        x = self.sub_attn.after(x, a)
        x = self.sub_ffn.after(x, self.ffn(self.sub_ffn.before(x)))
        return x, weights


KV = tuple[Tensor, Tensor]  # keys and values (B, h, T, d_k) each


@dataclass(frozen=True)
class DecoderOut:
    """One decoder layer's output, the self-attention's keys and values
    (the cache the next search step extends) and its weights if asked for."""

    y: Tensor  # (B, T, d_model)
    cache: KV  # (B, h, prefix length, d_k) each
    self_weights: Tensor | None  # (B, h, T, prefix length)
    cross_weights: Tensor | None  # (B, h, T, S)


class DecoderLayer(nn.Module):
    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.self_attn, self.sub_self = spec.attention(), spec.sublayer()
        self.cross_attn, self.sub_cross = spec.attention(), spec.sublayer()
        self.ffn, self.sub_ffn = FeedForward(spec), spec.sublayer()

    def forward(
        self,
        y: Tensor,
        self_mask: Tensor | None,
        cross: KV,
        cross_mask: Tensor,
        past: KV | None = None,
        need_weights: bool = False,
        causal: bool = False,
    ) -> DecoderOut:
        """y (B, T, d_model): the whole target under teacher forcing
        (``self_mask`` (B, 1, T, T) causal and padding), or one new position
        of search (T = 1) after the prefix ``past`` (self_mask None: it
        reads its whole prefix). ``cross``: the source's keys and values
        for this layer (B, h, S, d_k), ``cross_mask`` (B, 1, 1, S);
        ``causal``: self_mask is causal (MultiHeadAttention.forward)."""
        h = self.sub_self.before(y)
        k, v = self.self_attn.keys_values(h)  # (B, h, T, d_k)
        if past is not None:  # the prefix's, computed at earlier steps
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        a, self_weights = self.self_attn(h, k, v, self_mask, need_weights, causal)
        y = self.sub_self.after(y, a)
        h = self.sub_cross.before(y)
        c, cross_weights = self.cross_attn(h, *cross, cross_mask, need_weights)
        y = self.sub_cross.after(y, c)
        y = self.sub_ffn.after(y, self.ffn(self.sub_ffn.before(y)))
        return DecoderOut(y, (k, v), self_weights, cross_weights)
