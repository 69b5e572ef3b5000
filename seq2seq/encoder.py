"""The encoder: embeddings, then a (bidirectional) GRU or LSTM over the source.

Bahdanau et al. 2015, Sec. 3.2: a bidirectional RNN gives each position an
annotation h_j = [h_j(forward); h_j(backward)] that summarises the words
around j. Padded positions are skipped with packed sequences, so the
backward direction starts at each sentence's real last word.
"""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2seq.attention import final_state
from seq2seq.tokenizer import PAD


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
        self.output_size = hidden_size * (2 if bidirectional else 1)

    def forward(
        self, src: Tensor, src_len: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Returns the annotations (B, S, D) and the final summary (B, D)."""
        x = self.dropout(self.embed(src))  # (B, S, E)
        packed = pack_padded_sequence(
            x, src_len.cpu(), batch_first=True, enforce_sorted=False
        )
        out, _ = self.rnn(packed)
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        # states: (B, S, D), zeros on padding
        return states, final_state(states, mask, self.bidirectional)
