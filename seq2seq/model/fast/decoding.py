"""The decoder under teacher forcing on the fast paths: the reference step
loop's mathematics (decoder.py) in whole-sequence operations.

Without input feeding h_t does not depend on the attention, so each layer
runs over all steps as one autograd node (recurrence.py), then the attention
of every step at once (steps.py), then Eq. 5 for all steps through the
decoder's own :meth:`Decoder.attentional`, the reference's one line. With
input feeding step t reads h~_{t-1}: the whole step is one node
(feeding.py), for the one configuration it covers. Dropout masks are drawn
for the whole sequence.
"""

from __future__ import annotations

from typing import cast

from torch import Tensor, nn

from seq2seq.model.attention import Additive
from seq2seq.model.decoder import Decoder, Memory
from seq2seq.model.fast.feeding import additive_feeding
from seq2seq.model.fast.recurrence import Loops, gru_sequence, lstm_sequence
from seq2seq.model.fast.steps import attend_steps


def teacher_forcing(
    decoder: Decoder, tgt_in: Tensor, memory: Memory, loops: Loops
) -> tuple[Tensor, Tensor | None]:
    """``decoder(tgt_in, memory)``: the attentional vectors h~ (B, T, H) and
    the weights (B, T, S) or None, each layer's steps run by ``loops``."""
    state = decoder.init_state(memory)
    x = decoder.dropout(decoder.embed(tgt_in))  # (B, T, E)
    if decoder.input_feeding:  # the whole step in one node (feeding.py)
        cell = decoder.cells[0]
        assert type(decoder.attention) is Additive and len(decoder.cells) == 1
        assert isinstance(cell, nn.GRUCell), "steps does LSTMs with input feeding"
        return additive_feeding(
            loops, cell, decoder.attention, decoder.combine, x, state.hidden[0], memory
        )
    for layer, cell in enumerate(decoder.cells):
        if state.cell is not None:  # an LSTM
            lstm = cast(nn.LSTMCell, cell)
            h = lstm_sequence(loops, lstm, x, state.hidden[layer], state.cell[layer])
        else:
            gru = cast(nn.GRUCell, cell)
            h = gru_sequence(loops, gru, x, state.hidden[layer])  # (B, T, H)
        if layer + 1 < len(decoder.cells):  # between layers, as decoder.py
            x = decoder.dropout(h)
    context, weights = attend_steps(
        decoder.attention, h, memory.keys, memory.mask, memory.projected
    )  # (B, T, D), (B, T, S) or None
    return decoder.attentional(h, context), weights  # (B, T, H), Luong Eq. 5
