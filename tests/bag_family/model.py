"""The bag family's model, written against seq2seq/model/interface.py only.

Encoder: the source's embeddings x (B, S, D), each plus a self-attention
over the others, softmax(x x^T / sqrt(D)) x (no positions: a bag). Decoder: a
GRU cell over the previous target token; at each step its state h_t scores
the memory by dot product (Luong et al. 2015), and tanh(W [h_t; c_t]) goes to
the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from bag_family.config import BagConfig
from seq2seq.model.interface import EncoderDecoder, Maps
from seq2seq.model.loss import cross_entropy
from seq2seq.specials import PAD


@dataclass
class Bag:
    """The encoder's memory: the mixed embeddings and which are real."""

    keys: Tensor  # (B, S, D)
    mask: Tensor  # (B, S)
    self_weights: Tensor | None  # (B, 1, 1, S, S)

    def select(self, index: Tensor) -> Bag:
        mixed = self.self_weights
        return Bag(
            self.keys.index_select(0, index),
            self.mask.index_select(0, index),
            None if mixed is None else mixed.index_select(0, index),
        )


@dataclass
class Hidden:
    h: Tensor  # (B, D)

    def select(self, index: Tensor) -> Hidden:
        return Hidden(self.h.index_select(0, index))


def attend(query: Tensor, keys: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Dot-product attention of queries (B, Q, D) over keys (B, S, D): the
    contexts (B, Q, D) and the weights (B, Q, S), padding weighted 0."""
    scores = query @ keys.transpose(1, 2) / keys.size(-1) ** 0.5  # (B, Q, S)
    weights = scores.masked_fill(~mask[:, None, :], float("-inf")).softmax(-1)
    return weights @ keys, weights


class BagModel(EncoderDecoder[Bag, Hidden]):
    family = "bag"

    def __init__(self, src_vocab: int, tgt_vocab: int, cfg: BagConfig) -> None:
        super().__init__()
        self.mode = "mixed" if cfg.self_attention else "plain"
        self.mixes = cfg.self_attention
        d = cfg.width
        self.src_embed = nn.Embedding(src_vocab, d, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab, d, padding_idx=PAD)
        self.cell = nn.GRUCell(d, d)
        self.combine = nn.Linear(2 * d, d)
        self.out = nn.Linear(d, tgt_vocab)

    def encode(self, src: Tensor, src_len: Tensor) -> Bag:
        x, mask = self.src_embed(src), src != PAD  # (B, S, D), (B, S)
        if not self.mixes:
            return Bag(x, mask, None)
        mixed, weights = attend(x, x, mask)  # (B, S, D), (B, S, S)
        return Bag(x + mixed, mask, weights[:, None, None])

    def init_state(self, memory: Bag) -> Hidden:
        real = memory.mask.unsqueeze(-1).float()  # (B, S, 1)
        mean = (memory.keys * real).sum(1) / real.sum(1)  # (B, D)
        return Hidden(torch.tanh(mean))

    def step(
        self, prev: Tensor, state: Hidden, memory: Bag
    ) -> tuple[Tensor, Hidden, Maps]:
        h = self.cell(self.tgt_embed(prev), state.h)  # (B, D)
        context, weights = attend(h[:, None], memory.keys, memory.mask)
        out = torch.tanh(self.combine(torch.cat([h, context[:, 0]], dim=-1)))
        return out, Hidden(h), Maps(cross=weights[:, None, None])  # (B, 1, 1, 1, S)

    def forward(
        self, src: Tensor, src_len: Tensor, tgt_in: Tensor, maps: bool = True
    ) -> tuple[Tensor, Maps]:
        memory = self.encode(src, src_len)
        state, outs, cross = self.init_state(memory), [], []
        for t in range(tgt_in.size(1)):
            out, state, step = self.step(tgt_in[:, t], state, memory)
            outs.append(out)
            cross.append(step.cross)
        if not maps:
            return torch.stack(outs, 1), Maps()
        found = Maps(
            cross=torch.cat([c for c in cross if c is not None], dim=3),
            encoder_self=memory.self_weights,
        )
        return torch.stack(outs, 1), found  # (B, T, D), cross (B, 1, 1, T, S)

    def logits(self, out: Tensor) -> Tensor:
        logits: Tensor = self.out(out)
        return logits

    def token_loss(
        self, out: Tensor, tgt_out: Tensor, smoothing: float, chunked: bool
    ) -> Tensor:
        return cross_entropy(out.flatten(0, 1), self.out, tgt_out.flatten(), smoothing)

    @property
    def vocab_size(self) -> int:
        return self.out.out_features


def build_bag(cfg: BagConfig, src_vocab: int, tgt_vocab: int, path: str) -> BagModel:
    return BagModel(src_vocab, tgt_vocab, cfg)


def unsupported(cfg: BagConfig, path: str) -> str | None:
    """The RNN's fast paths (train.recurrence) are not this family's."""
    return None if path in ("auto", "steps") else f"{path}: a bag has no fast path"
