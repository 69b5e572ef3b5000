"""The causal mask, the one owner of it: the Transformer's decoder
(model/transformer/) and the lesson's attention (seq2seq/lesson/attention.py)
both read it."""

from __future__ import annotations

import torch
from torch import Tensor


def causal_mask(n: int, device: torch.device | None = None) -> Tensor:
    """(n, n): True where key position <= query position, so that no query
    reads a later position (Vaswani et al. 2017, Sec. 3.2.3)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()
