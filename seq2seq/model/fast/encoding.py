"""The encoder on the fast paths: each direction of each layer as one
autograd node (recurrence.py) instead of the packed ``nn.GRU`` or
``nn.LSTM`` of encoder.py, the reference, whose weights it reads.

Packing is not needed: a right-padded row read forward reaches its padding
only after its last word, and the backward direction reads each row's words
reversed in place (encoder.reversed_order), padding still last. The states at
padding are set to 0, as packing leaves them.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seq2seq.model.attention import final_state
from seq2seq.model.encoder import Encoder, reversed_order
from seq2seq.model.fast.recurrence import Loops, Weights, run_gru, run_lstm


def encode_sequence(
    encoder: Encoder, src: Tensor, src_len: Tensor, mask: Tensor, loops: Loops
) -> tuple[Tensor, Tensor]:
    """``encoder(src, src_len, mask)``: the annotations (B, S, D) and the
    summary (B, D), the same mathematics run by ``loops`` (a GRU on the fast
    paths; tests also run an LSTM this way against the packed one)."""
    rnn = encoder.rnn
    x = encoder.dropout(encoder.embed(src))  # (B, S, E)
    order = reversed_order(src_len.to(src.device), src.size(1))  # (B, S)
    if encoder.reverse:
        x = _permute(x, order)
    keep = mask.unsqueeze(-1).to(x.dtype)  # (B, S, 1)
    directions = ["", "_reverse"] if encoder.bidirectional else [""]
    h0 = x.new_zeros(len(directions), x.size(0), rnn.hidden_size)
    for layer in range(rnn.num_layers):
        if layer > 0:  # nn.GRU's dropout between layers
            x = nn.functional.dropout(x, rnn.dropout, encoder.training)
        # both directions in one recurrence: the backward one reads each
        # row's words reversed (K, B, S, E)
        inputs = [x, _permute(x, order)][: len(directions)]
        weights = [_weights(rnn, layer, d) for d in directions]
        if isinstance(rnn, nn.LSTM):  # c0 = 0 as well
            out = run_lstm(loops, torch.stack(inputs), h0, h0, weights)[0]
        else:
            out = run_gru(loops, torch.stack(inputs), h0, weights)  # (K, B, S, H)
        if encoder.bidirectional:
            out = torch.cat([out[0], _permute(out[1], order)], dim=-1)  # (B, S, 2H)
        else:
            out = out[0]
        x = out * keep  # zeros on padding
    states = _permute(x, order) if encoder.reverse else x  # source order
    final = final_state(states, mask, encoder.bidirectional, encoder.reverse)
    return states, final  # (B, S, D), (B, D)


def _weights(rnn: nn.GRU | nn.LSTM, layer: int, suffix: str) -> Weights:
    """nn.GRU's or nn.LSTM's (w_ih, w_hh, b_ih, b_hh) of one layer and direction."""
    w_ih, w_hh, b_ih, b_hh = (
        getattr(rnn, f"{n}_l{layer}{suffix}")
        for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    )
    return w_ih, w_hh, b_ih, b_hh


def _permute(x: Tensor, order: Tensor) -> Tensor:
    """Rows of x (B, S, F) reordered along S by ``order`` (B, S)."""
    return x.gather(1, order.unsqueeze(-1).expand_as(x))
