"""The decoder: an RNN language model over the target, conditioned on the source.

One decoder for every mode. At step t (Luong et al. 2015, Sec. 3):

    h_t     = RNN([y_{t-1}; h~_{t-1}], h_{t-1})   input feeding (Sec. 3.3)
    c_t, a  = attention(h_t, encoder states)     the only part that varies
    h~_t    = tanh(W_c [h_t; c_t])               Eq. 5, the attentional vector
    p(y_t)  = softmax(W_s h~_t)                  Eq. 6

``none`` passes c_t = 0 (the source enters only through h_0, the bridged
encoder summary), ``context`` passes the same summary at every step (Cho et
al. 2014), the attention modes pass a weighted sum of encoder states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
from torch import Tensor, nn

from seq2seq.model.attention import Attention
from seq2seq.specials import PAD


@dataclass
class Memory:
    """The encoded source, as the decoder reads it at every step."""

    keys: Tensor  # (B, S, D) encoder states
    mask: Tensor  # (B, S) True on real positions
    projected: Tensor  # attention.project_keys(keys), computed once per batch
    final: Tensor  # (B, D) encoder summary

    def select(self, index: Tensor) -> Memory:
        """Rows ``index`` of every tensor (for beam search)."""
        return Memory(
            self.keys.index_select(0, index),
            self.mask.index_select(0, index),
            self.projected.index_select(0, index),
            self.final.index_select(0, index),
        )


@dataclass
class DecoderState:
    hidden: Tensor  # (L, B, H)
    cell: Tensor | None  # (L, B, H) LSTM cell state, None for a GRU
    feed: Tensor  # (B, H) previous attentional vector h~_{t-1}

    def select(self, index: Tensor) -> DecoderState:
        """Rows ``index`` of the batch: dimension 1 of (L, B, H), 0 of (B, H)."""
        cell = None if self.cell is None else self.cell.index_select(1, index)
        return DecoderState(
            self.hidden.index_select(1, index), cell, self.feed.index_select(0, index)
        )


class Decoder(nn.Module):
    def __init__(
        self,
        cell: type[nn.GRUCell] | type[nn.LSTMCell],
        attention: Attention,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        key_dim: int,
        layers: int,
        dropout: float,
        input_feeding: bool,
    ) -> None:
        super().__init__()
        self.attention = attention
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        self.input_feeding = input_feeding
        in_dim = embed_dim + (hidden_size if input_feeding else 0)
        self.cells = nn.ModuleList(
            cell(in_dim if i == 0 else hidden_size, hidden_size) for i in range(layers)
        )
        self.is_lstm = cell is nn.LSTMCell
        # "bridge": h_0 = tanh(W_b c), the encoder summary (Bahdanau 2015 App. A.2.2)
        self.bridge = nn.Linear(key_dim, hidden_size)
        self.combine = nn.Linear(hidden_size + key_dim, hidden_size)  # W_c, Eq. 5
        self.output = nn.Linear(hidden_size, vocab_size)  # W_s, Eq. 6

    def memory(self, states: Tensor, final: Tensor, mask: Tensor) -> Memory:
        return Memory(states, mask, self.attention.project_keys(states, mask), final)

    def init_state(self, memory: Memory) -> DecoderState:
        h0 = torch.tanh(self.bridge(memory.final))  # (B, H)
        hidden = h0.unsqueeze(0).repeat(len(self.cells), 1, 1)  # (L, B, H)
        cell = torch.zeros_like(hidden) if self.is_lstm else None
        return DecoderState(hidden, cell, torch.zeros_like(h0))

    def step(
        self, prev: Tensor, state: DecoderState, memory: Memory
    ) -> tuple[Tensor, DecoderState, Tensor | None]:
        """One step from the previous tokens (B,): (h~_t (B, H), state, weights)."""
        return self.advance(self.dropout(self.embed(prev)), state, memory)

    def advance(
        self, x: Tensor, state: DecoderState, memory: Memory
    ) -> tuple[Tensor, DecoderState, Tensor | None]:
        """One step from the embedded previous tokens x (B, E)."""
        if self.input_feeding:
            x = torch.cat([x, state.feed], dim=-1)  # (B, E + H)
        hidden, cells = [], []
        for layer, rnn in enumerate(self.cells):
            if state.cell is not None:  # an LSTM
                h, c = rnn(x, (state.hidden[layer], state.cell[layer]))  # (B, H) each
                cells.append(c)
            else:
                h = rnn(x, state.hidden[layer])  # (B, H)
            hidden.append(h)
            if layer + 1 < len(self.cells):  # between layers only: the fast
                x = self.dropout(h)  # paths draw the same masks in this order
        # context (B, D); weights (B, S), None for the modes without alignment
        context, weights = self.attention(h, memory.keys, memory.mask, memory.projected)
        attentional = self.attentional(h, context)  # (B, H)
        new = DecoderState(
            torch.stack(hidden), torch.stack(cells) if cells else None, attentional
        )
        return attentional, new, weights

    def attentional(self, h: Tensor, context: Tensor) -> Tensor:
        """h~ = tanh(W_c [h; c]), Luong Eq. 5: (..., H) from h (..., H) and the
        context (..., D), one step's or every step's (model/fast/decoding.py)."""
        return torch.tanh(self.combine(torch.cat([h, context], dim=-1)))

    def logits(self, attentional: Tensor) -> Tensor:
        return cast(Tensor, self.output(self.dropout(attentional)))  # (..., V)

    def forward(self, tgt_in: Tensor, memory: Memory) -> tuple[Tensor, Tensor | None]:
        """Teacher forcing over (B, T) inputs: the attentional vectors h~ (B, T, H)
        and the weights (B, T, S). ``logits`` (or the loss, seq2seq.model.loss) takes
        h~ on to the vocabulary. This step loop is the reference; the fast paths
        (model/fast/) compute the same in whole-sequence operations."""
        state = self.init_state(memory)
        embedded = self.dropout(self.embed(tgt_in))  # (B, T, E), once for all steps
        outputs: list[Tensor] = []
        weights: list[Tensor] = []  # stays empty for the modes without alignment
        # unbind, not embedded[:, t]: its backward stacks T gradients once instead
        # of writing each into a zero-filled (B, T, E) tensor.
        for x in embedded.unbind(dim=1):
            attentional, state, w = self.advance(x, state, memory)
            outputs.append(attentional)
            if w is not None:
                weights.append(w)
        alignment = torch.stack(weights, dim=1) if weights else None
        return torch.stack(outputs, dim=1), alignment  # (B, T, H), (B, T, S)
