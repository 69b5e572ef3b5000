"""The RNN encoder-decoder (``Seq2Seq``, built from its config section by
``build_rnn``), and ``build_model``: any family's model from its section."""

from __future__ import annotations

from typing import cast

import torch
from torch import Tensor, nn

from seq2seq import families
from seq2seq.config import ModelConfig, RNNConfig
from seq2seq.errors import UserError
from seq2seq.model import attention as att
from seq2seq.model.ablation import Ablation, Rule
from seq2seq.model.decoder import Decoder, DecoderState, Memory
from seq2seq.model.encoder import Encoder
from seq2seq.model.fast.path import RecurrencePath, choose_path, unsupported
from seq2seq.model.interface import NO_MAPS, EncoderDecoder, Maps, Model, Reading
from seq2seq.model.loss import chunked_cross_entropy, cross_entropy
from seq2seq.modes import Sizes, mode
from seq2seq.specials import PAD


class Seq2Seq(EncoderDecoder[Memory, DecoderState]):
    """The RNN encoder-decoder (Bahdanau et al. 2015; Luong et al. 2015):
    its parts are encoder.py's and decoder.py's; this class is where the
    interface (interface.py) meets them."""

    family = "rnn"

    def __init__(
        self, encoder: Encoder, decoder: Decoder, mode: str, path: RecurrencePath
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.mode = mode  # the context mode's name (model.attention), for reports
        self.path = path  # how its recurrences train (model/fast/path.py)

    def encode(self, src: Tensor, src_len: Tensor) -> Memory:
        mask = src != PAD  # (B, S)
        states, final = self.path.encode(self.encoder, src, src_len, mask)
        return self.decoder.memory(states, final, mask)

    def forward(
        self, src: Tensor, src_len: Tensor, tgt_in: Tensor, maps: bool = True
    ) -> tuple[Tensor, Maps]:
        """The attentional vectors h~ (B, T, H) under teacher forcing (``logits``
        takes them to the vocabulary), and the cross-attention, one layer and
        one head (B, 1, 1, T, S), where the mode has weights (computed
        whatever ``maps`` says: every step needs them)."""
        memory = self.encode(src, src_len)
        out, weights = self.path.teacher_forcing(self.decoder, tgt_in, memory)
        return out, cross(weights)

    def init_state(self, memory: Memory) -> DecoderState:
        return self.decoder.init_state(memory)

    def step(
        self, prev: Tensor, state: DecoderState, memory: Memory
    ) -> tuple[Tensor, DecoderState, Maps]:
        out, state, weights = self.decoder.step(prev, state, memory)  # (B, S)
        return out, state, cross(None if weights is None else weights.unsqueeze(1))

    def logits(self, out: Tensor) -> Tensor:
        return self.decoder.logits(out)  # (..., V)

    def token_loss(
        self, out: Tensor, tgt_out: Tensor, smoothing: float, chunked: bool
    ) -> Tensor:
        h = self.decoder.dropout(out).flatten(0, 1)  # (B*T, H)
        loss = chunked_cross_entropy if chunked else cross_entropy
        return loss(h, self.decoder.output, tgt_out.flatten(), smoothing)

    @property
    def vocab_size(self) -> int:
        return self.decoder.output.out_features

    @property
    def has_alignment(self) -> bool:
        return self.decoder.attention.has_alignment

    def read_source(self, src: Tensor, src_len: Tensor, tgt_in: Tensor) -> Reading:
        """The context c_t = sum_j a_tj h_j at each step for the modes with
        attention; the encoder summary c, through which ``none`` reads the
        source (h_0 = tanh(W_b c)), for every mode."""
        memory = self.encode(src, src_len)
        _, weights = self.decoder(tgt_in, memory)  # (B, T, S) or None
        if weights is None:
            return Reading(None, None, memory.final)
        contexts = torch.bmm(weights, memory.keys)  # (B, T, D)
        return Reading(weights, contexts, memory.final)

    def training_path(self) -> str:
        note = f" ({self.path.note})" if self.path.note else ""
        return f"recurrence={self.path.name}{note}"

    def ablate(self, ablation: Ablation) -> None:
        if not self.has_alignment:
            raise UserError(
                f"--ablate {ablation.how}: mode '{self.mode}' has no attention "
                "to ablate"
            )
        if not ablation.whole:
            raise UserError(
                f"--ablate {ablation.how}: an RNN has one attention, cross, of one "
                "layer and one head; drop --attention, --layers and --heads"
            )
        rule = Rule(ablation.how, None, ablation.seed)
        self.decoder.attention = att.Ablated(self.decoder.attention, rule)
        # The fast paths fuse the trained attention into their nodes (feeding
        # one additive step, vmapping a mode's rule); the replaced weights are
        # the reference's to compute, step by step, as search computes them.
        self.path = RecurrencePath("steps", None, "an ablated attention")


def cross(weights: Tensor | None) -> Maps:
    """The RNN's one attention, (B, T, S) weights, as the interface's maps:
    cross-attention of one layer and one head (B, 1, 1, T, S)."""
    return NO_MAPS if weights is None else Maps(cross=weights[:, None, None])


def loss_sum(
    model: nn.Module,  # a model, or DistributedDataParallel around one
    src: Tensor,
    src_len: Tensor,
    tgt_in: Tensor,
    tgt_out: Tensor,
    smoothing: float = 0.0,
    chunked: bool = False,
    maps: bool = True,
) -> tuple[Tensor, Maps]:
    """Summed token cross-entropy under teacher forcing (padding ignored), and
    the attention maps of the pass (``maps`` False: a family may skip them,
    as training does). ``model`` may be wrapped in DistributedDataParallel;
    ``chunked`` picks seq2seq.model.loss's chunked loss."""
    out, found = model(src, src_len, tgt_in, maps=maps)  # (B, T, H)
    inner = cast(Model, getattr(model, "module", model))  # DDP: in .module
    return inner.token_loss(out, tgt_out, smoothing, chunked), found


def build_attention(cfg: RNNConfig, query_dim: int, key_dim: int) -> att.Attention:
    """The mode ``cfg.attention`` from the registry (attention.py registers
    every mode; seq2seq/modes.py holds them)."""
    sizes = Sizes(
        query_dim,
        key_dim,
        cfg.attention_dim,
        cfg.encoder.bidirectional,
        cfg.encoder.reverse,
    )
    attention: att.Attention = mode(cfg.attention).build(sizes)
    return attention


def build_model(
    cfg: ModelConfig, src_vocab: int, tgt_vocab: int, recurrence: str = "steps"
) -> Model:
    """The model of the section ``cfg``, by its family's builder
    (seq2seq/families.py), on the training path ``recurrence`` where the
    family has several."""
    family = families.family(cfg.family)
    model: Model = family.build(cfg, src_vocab, tgt_vocab, recurrence)
    return model


def build_rnn(
    cfg: RNNConfig, src_vocab: int, tgt_vocab: int, recurrence: str = "steps"
) -> Seq2Seq:
    """The RNN encoder-decoder of ``cfg``, its recurrences on the path
    ``recurrence`` (train.recurrence) resolves to on this machine
    (:func:`choose_path`)."""
    enc, dec = cfg.encoder, cfg.decoder
    path = choose_path(cfg, recurrence)
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
    model = Seq2Seq(encoder, decoder, cfg.attention, path)
    _init(model, xavier_rnns=cfg.rnn_init == "xavier")
    return model


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


# The RNN family's registration (seq2seq/families.py): model.family's
# default, and every config written before there were families.
families.register(
    "rnn",
    RNNConfig,
    build_rnn,
    unsupported,
    "an RNN encoder-decoder whose decoder reads the source through one "
    "attention mode (model.attention)",
    label=str,  # an RNN run is called by its attention mode (families.run_label)
)
