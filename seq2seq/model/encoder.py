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
from seq2seq.model.recurrence import PYTHON, Loops, Weights, run_gru, run_lstm
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
        loops: Loops | None = None,
    ) -> None:
        super().__init__()
        # A GRU encoder's path, chosen once (seq2seq/fastpath.py): the packed
        # nn.GRU (None), or each layer as one node run by ``loops``.
        self.loops = loops if rnn is nn.GRU else None
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
        """Returns the annotations (B, S, D) and the final summary (B, D).
        With ``loops`` (a GRU): :meth:`forward_sequence`, the same mathematics.
        An LSTM stays packed: ``nn.LSTM`` has a oneDNN kernel on the CPU, and
        the demo's step trained faster with it (docs/speed.md)."""
        if self.loops is not None:
            return self.forward_sequence(src, src_len, mask)
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

    def forward_sequence(
        self, src: Tensor, src_len: Tensor, mask: Tensor, loops: Loops | None = None
    ) -> tuple[Tensor, Tensor]:
        """:meth:`forward` with each direction of each layer as one autograd
        node (recurrence.py) instead of the packed ``nn.GRU`` or ``nn.LSTM``.
        Packing is not needed: a right-padded row read forward reaches its
        padding only after its last word, and the backward direction reads
        each row's words reversed in place (:func:`reversed_order`), padding
        still last. The states at padding are set to 0, as packing leaves
        them. ``loops``: whose step loops (default: the encoder's own, else
        recurrence.PYTHON; tests compare the packed LSTM with this)."""
        loops = loops or self.loops or PYTHON
        x = self.dropout(self.embed(src))  # (B, S, E)
        order = reversed_order(src_len.to(src.device), src.size(1))  # (B, S)
        if self.reverse:
            x = _permute(x, order)
        keep = mask.unsqueeze(-1).to(x.dtype)  # (B, S, 1)
        directions = ["", "_reverse"] if self.bidirectional else [""]
        h0 = x.new_zeros(len(directions), x.size(0), self.rnn.hidden_size)
        for layer in range(self.rnn.num_layers):
            if layer > 0:  # nn.GRU's dropout between layers
                x = nn.functional.dropout(x, self.rnn.dropout, self.training)
            # both directions in one recurrence: the backward one reads each
            # row's words reversed (K, B, S, E)
            inputs = [x, _permute(x, order)][: len(directions)]
            weights = [self._weights(layer, d) for d in directions]
            if isinstance(self.rnn, nn.LSTM):  # c0 = 0 as well
                out = run_lstm(loops, torch.stack(inputs), h0, h0, weights)[0]
            else:
                out = run_gru(loops, torch.stack(inputs), h0, weights)  # (K, B, S, H)
            if self.bidirectional:
                out = torch.cat([out[0], _permute(out[1], order)], dim=-1)  # (B, S, 2H)
            else:
                out = out[0]
            x = out * keep  # zeros on padding
        states = _permute(x, order) if self.reverse else x  # source order
        final = final_state(states, mask, self.bidirectional, self.reverse)  # (B, D)
        return states, final

    def _weights(self, layer: int, suffix: str) -> Weights:
        """nn.GRU's or nn.LSTM's (w_ih, w_hh, b_ih, b_hh) of one layer and direction."""
        w_ih, w_hh, b_ih, b_hh = (
            getattr(self.rnn, f"{n}_l{layer}{suffix}")
            for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )
        return w_ih, w_hh, b_ih, b_hh


def _permute(x: Tensor, order: Tensor) -> Tensor:
    """Rows of x (B, S, F) reordered along S by ``order`` (B, S)."""
    return x.gather(1, order.unsqueeze(-1).expand_as(x))


def reversed_order(lengths: Tensor, max_len: int) -> Tensor:
    """Index (B, S) that reverses each row's first ``lengths[b]`` positions and
    leaves its padding where it is; applied twice it is the identity."""
    pos = torch.arange(max_len, device=lengths.device).unsqueeze(0)  # (1, S)
    last = lengths.unsqueeze(1) - 1  # (B, 1)
    return torch.where(pos <= last, last - pos, pos)  # (B, S)
