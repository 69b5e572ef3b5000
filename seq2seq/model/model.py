"""The encoder-decoder, and ``build_model``: the only code that reads model config."""

from __future__ import annotations

from torch import Tensor, nn

from seq2seq.config import ModelConfig
from seq2seq.model import attention as att
from seq2seq.model.decoder import Decoder, Memory
from seq2seq.model.encoder import Encoder
from seq2seq.model.loss import cross_entropy, fused_cross_entropy
from seq2seq.modes import Sizes, mode
from seq2seq.specials import PAD


class Seq2Seq(nn.Module):
    def __init__(self, encoder: Encoder, decoder: Decoder, mode: str) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.mode = mode  # the context mode's name (model.attention), for reports

    def encode(self, src: Tensor, src_len: Tensor, fused: bool = False) -> Memory:
        mask = src != PAD  # (B, S)
        states, final = self.encoder(src, src_len, mask, fused)
        return self.decoder.memory(states, final, mask)

    def forward(
        self, src: Tensor, src_len: Tensor, tgt_in: Tensor, fused: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """The attentional vectors h~ (B, T, H) under teacher forcing (``logits``
        takes them to the vocabulary), and attention (B, T, S) or None.
        ``fused``: the decoder's whole-sequence path (Decoder.forward_fused)."""
        return self.decoder(tgt_in, self.encode(src, src_len, fused), fused)

    def logits(self, attentional: Tensor) -> Tensor:
        return self.decoder.logits(attentional)  # (..., V)

    @property
    def has_alignment(self) -> bool:
        return self.decoder.attention.has_alignment

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def loss_sum(
    model: Seq2Seq,
    src: Tensor,
    src_len: Tensor,
    tgt_in: Tensor,
    tgt_out: Tensor,
    smoothing: float = 0.0,
    fused: bool = False,
    fused_recurrence: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Summed token cross-entropy under teacher forcing (padding ignored), and
    the attention weights (B, T, S) or None. ``model`` may be wrapped in
    DistributedDataParallel; ``fused`` picks seq2seq.model.loss's chunked loss,
    ``fused_recurrence`` the decoder's whole-sequence path."""
    attentional, weights = model(src, src_len, tgt_in, fused_recurrence)  # (B, T, H)
    decoder = getattr(model, "module", model).decoder  # DDP keeps it in .module
    h = decoder.dropout(attentional).flatten(0, 1)  # (B*T, H)
    loss = fused_cross_entropy if fused else cross_entropy
    return loss(h, decoder.output, tgt_out.flatten(), smoothing), weights


def build_attention(cfg: ModelConfig, query_dim: int, key_dim: int) -> att.Attention:
    """The mode ``cfg.attention`` from the registry (attention.py registers
    every mode; seq2seq/modes.py holds them)."""
    sizes = Sizes(
        query_dim,
        key_dim,
        cfg.attention_dim,
        cfg.encoder.bidirectional,
        cfg.encoder.reverse,
    )
    return mode(cfg.attention).build(sizes)


def build_model(cfg: ModelConfig, src_vocab: int, tgt_vocab: int) -> Seq2Seq:
    enc, dec = cfg.encoder, cfg.decoder
    encoder = Encoder(
        nn.GRU if enc.rnn == "gru" else nn.LSTM,
        src_vocab,
        enc.embed_dim,
        enc.hidden_size,
        enc.layers,
        enc.bidirectional,
        enc.dropout,
        enc.reverse,
    )
    key_dim = encoder.output_size
    decoder = Decoder(
        nn.GRUCell if dec.rnn == "gru" else nn.LSTMCell,
        build_attention(cfg, dec.hidden_size, key_dim),
        tgt_vocab,
        dec.embed_dim,
        dec.hidden_size,
        key_dim,
        dec.layers,
        dec.dropout,
        dec.input_feeding,
    )
    model = Seq2Seq(encoder, decoder, cfg.attention)
    _init(model, xavier_rnns=cfg.rnn_init == "xavier")
    return model


def describe(cfg: ModelConfig) -> dict[str, str | int]:
    """The model settings that TensorBoard's HPARAMS tab compares runs by."""
    return {
        "mode": cfg.attention,
        "rnn": cfg.encoder.rnn,
        "embed_dim": cfg.encoder.embed_dim,
        "enc_hidden": cfg.encoder.hidden_size,
        "dec_hidden": cfg.decoder.hidden_size,
    }


RNNS = (nn.GRU, nn.LSTM, nn.GRUCell, nn.LSTMCell)


def _init(model: nn.Module, xavier_rnns: bool) -> None:
    """Xavier for projections, N(0, 0.1) embeddings, zero biases. RNNs keep
    PyTorch's uniform(-1/sqrt(H), 1/sqrt(H)), or with ``xavier_rnns`` get
    Xavier per gate (each gate's (H, in) block is one matrix to Glorot &
    Bengio 2010, not the stacked (3H or 4H, in) one) and zero biases."""
    for module in model.modules():
        if xavier_rnns and isinstance(module, RNNS):
            gates = 4 if isinstance(module, (nn.LSTM, nn.LSTMCell)) else 3
            for name, p in module.named_parameters():
                if name.startswith("weight"):
                    for block in p.data.chunk(gates, dim=0):  # views: in place
                        nn.init.xavier_uniform_(block)
                else:
                    nn.init.zeros_(p)
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.1)
            nn.init.zeros_(module.weight[module.padding_idx])
