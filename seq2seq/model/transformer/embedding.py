"""Token embeddings with positions (Vaswani et al. 2017, Sec. 3.4-3.5).

Attention itself is blind to order: permuting the keys permutes nothing
in its output but the weights' columns. So each position's vector gets its
position added: ``E[token] * sqrt(d_model) + P[position]``, with P the
paper's sinusoids (any length, nothing learned) or a learned table of
``max_positions`` rows (Gehring et al. 2017; an option).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from seq2seq.errors import UserError
from seq2seq.specials import PAD


def sinusoids(steps: int, d_model: int, start: int = 0) -> Tensor:
    """P (steps, d_model) for positions start.. : PE(pos, 2i) = sin(pos /
    10000^(2i/d)), PE(pos, 2i+1) = cos(the same) (Sec. 3.5)."""
    pos = torch.arange(start, start + steps, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    table = torch.zeros(steps, d_model)
    table[:, 0::2] = torch.sin(pos * rate)
    table[:, 1::2] = torch.cos(pos * rate[: d_model // 2])
    return table


class Embedding(nn.Module):
    def __init__(
        self, vocab: int, d_model: int, dropout: float, learned: int | None
    ) -> None:
        """``learned``: the learned table's rows, or None for sinusoids."""
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.positions = nn.Embedding(learned, d_model) if learned else None
        self.scale = math.sqrt(d_model)  # Sec. 3.4: embeddings times sqrt(d)
        self.dropout = nn.Dropout(dropout)
        # The sinusoids of the longest sentence seen, computed once (a search
        # step reads one row): a cache, not a weight or a buffer (not in
        # checkpoints, not synchronised between processes).
        self.table = torch.empty(0, d_model)

    def forward(self, ids: Tensor, start: int = 0) -> Tensor:
        """ids (B, T) at positions start.. : (B, T, d_model)."""
        steps = ids.size(1)
        x = self.tokens(ids) * self.scale  # (B, T, d_model)
        if self.positions is None:
            if start + steps > len(self.table) or self.table.device != x.device:
                rows = max(2 * len(self.table), start + steps, 128)
                self.table = sinusoids(rows, x.size(-1)).to(x.device)
            table = self.table[start : start + steps].to(x.dtype)
        else:
            rows = self.positions.num_embeddings
            if start + steps > rows:
                raise UserError(
                    f"a sentence of {start + steps} subwords is longer than "
                    f"model.max_positions ({rows}) learned positions; shorten "
                    "it or train with positions: sinusoidal"
                )
            index = torch.arange(start, start + steps, device=ids.device)
            table = self.positions(index)
        out: Tensor = self.dropout(x + table)
        return out
