"""The encoder: embeddings, then a (bidirectional) GRU or LSTM over the source.

Bahdanau et al. 2015, Sec. 3.2: a bidirectional RNN gives each position an
annotation h_j = [h_j(forward); h_j(backward)] that summarises the words
around j. Padded positions are skipped with packed sequences, so the
backward direction starts at each sentence's real last word.

A unidirectional encoder may read the source right to left instead
(``reverse``, Sutskever et al. 2014, Sec. 3.3): its final state is then the
one after word 1, close to the first target words, and the annotations are
put back in source order so that attention, heatmaps and AER are unchanged.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2seq.model.attention import final_state
from seq2seq.specials import PAD


class Encoder(nn.Module):
    def __init__(
        self,
        rnn: type[nn.GRU] | type[nn.LSTM],
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        layers: int,
        bidirectional: bool,
        dropout: float,
        reverse: bool = False,
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        self.rnn = rnn(
            embed_dim,
            hidden_size,
            num_layers=layers,
            bidirectional=bidirectional,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.bidirectional = bidirectional
        self.reverse = reverse
        self.output_size = hidden_size * (2 if bidirectional else 1)

    def forward(
        self, src: Tensor, src_len: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Returns the annotations (B, S, D) and the final summary (B, D). The
        reference; the fast paths run a GRU's layers as nodes of their own
        (model/fast/encoding.py), the same mathematics."""
        x = self.dropout(self.embed(src))  # (B, S, E)
        if self.reverse:
            order = reversed_order(src_len.to(src.device), src.size(1))  # (B, S)
            x = x.gather(1, order.unsqueeze(-1).expand_as(x))
        packed = pack_padded_sequence(
            x, src_len.cpu(), batch_first=True, enforce_sorted=False
        )
        out, _ = self.rnn(packed)
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        # states: (B, S, D), zeros on padding
        if self.reverse:  # back to source order: the same permutation undoes itself
            states = states.gather(1, order.unsqueeze(-1).expand_as(states))
        final = final_state(states, mask, self.bidirectional, self.reverse)  # (B, D)
        return states, final


def reversed_order(lengths: Tensor, max_len: int) -> Tensor:
    """Index (B, S) that reverses each row's first ``lengths[b]`` positions and
    leaves its padding where it is; applied twice it is the identity."""
    pos = torch.arange(max_len, device=lengths.device).unsqueeze(0)  # (1, S)
    last = lengths.unsqueeze(1) - 1  # (B, 1)
    return torch.where(pos <= last, last - pos, pos)  # (B, S)
