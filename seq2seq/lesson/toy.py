"""A task trained in seconds, for notebook 6's experiments on a Transformer's
parts: reverse a sequence of random tokens.

The target is the source backwards, so every output token is one source
token chosen by position: what cross-attention does, with nothing to learn
about language. Small models learn it in a few hundred steps on a CPU core,
which lets the notebook train the same model several ways (without the
causal mask, without residuals or LayerNorm) and compare them by their
outputs: the loss under teacher forcing, the gradient reaching each layer,
and what greedy search writes.

Its ``random`` variant keeps the sources and draws every target symbol at
random instead, unrelated to the source: a model that reads only the past
cannot predict them, so its loss cannot fall below guessing, about 2.6 per
token (:data:`GUESSING`); a loss under that says the decoder read the
future.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from seq2seq.config import ModelConfig
from seq2seq.model.interface import Model
from seq2seq.model.model import build_model, loss_sum
from seq2seq.model.search import greedy
from seq2seq.specials import BOS, EOS, PAD

VOCAB = 24  # the specials, then 20 symbols
FIRST = EOS + 1  # the first symbol's id
LENGTHS = (4, 10)  # symbols in a source, inclusive
Target = Literal["reversed", "random"]  # what a source's target is

# The least loss per target token a model that reads only the past can
# expect on ``random`` targets of LENGTHS: ln 20 for each of the k symbols,
# 0 for EOS (the source's length gives it away), over the k + 1 tokens of
# each of k = 4 ... 10 alike (the loss is summed over a batch's tokens). 2.62
_KS = range(LENGTHS[0], LENGTHS[1] + 1)
GUESSING = math.log(VOCAB - FIRST) * sum(_KS) / sum(k + 1 for k in _KS)


def reversal_batch(
    size: int,
    lengths: tuple[int, int],
    generator: torch.Generator,
    target: Target = "reversed",
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``size`` random sources of ``lengths`` (inclusive) symbols and EOS, and
    their targets as decoder input (BOS first) and output (EOS last): the
    source backwards, or as many ``random`` symbols drawn apart from it.
    src (B, S), src_len (B,), tgt_in and tgt_out (B, S), padded with PAD."""
    low, high = lengths
    n = torch.randint(low, high + 1, (size,), generator=generator)  # (B,)
    width = high + 1
    src = torch.full((size, width), PAD, dtype=torch.long)
    tgt_in, tgt_out = src.clone(), src.clone()
    for b, k in enumerate(n.tolist()):
        words = torch.randint(FIRST, VOCAB, (k,), generator=generator)
        src[b, : k + 1] = torch.cat([words, torch.tensor([EOS])])
        if target == "random":
            out = torch.randint(FIRST, VOCAB, (k,), generator=generator)
        else:
            out = words.flip(0)
        tgt_in[b, : k + 1] = torch.cat([torch.tensor([BOS]), out])
        tgt_out[b, : k + 1] = torch.cat([out, torch.tensor([EOS])])
    return src, n + 1, tgt_in, tgt_out


@dataclass
class ToyRun:
    """A model trained on the reversal task, and what training measured."""

    model: Model
    losses: list[float]  # per target token, every step
    gradients: dict[str, float]  # each layer's gradient norm, at the first step


def train_reversal(
    cfg: ModelConfig,
    steps: int,
    lengths: tuple[int, int] = LENGTHS,
    batch: int = 64,
    lr: float = 1e-3,
    seed: int = 0,
    target: Target = "reversed",
) -> ToyRun:
    """Train a model of section ``cfg`` (any family) on reversal (or ``random`` targets)
    for ``steps`` Adam steps (the same batches for every ``cfg`` of one
    ``seed``)."""
    torch.manual_seed(seed)
    model = build_model(cfg, VOCAB, VOCAB)
    data = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses, gradients = [], {}
    model.train()
    for step in range(steps):
        src, src_len, tgt_in, tgt_out = reversal_batch(batch, lengths, data, target)
        total, _ = loss_sum(model, src, src_len, tgt_in, tgt_out, maps=False)
        loss = total / (tgt_out != PAD).sum()
        opt.zero_grad()
        loss.backward()
        if step == 0:
            gradients = layer_gradients(model)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return ToyRun(model.eval(), losses, gradients)


LAYER = re.compile(r"^(encoder|decoder)\.(\d+)\.")


def layer_gradients(model: Model) -> dict[str, float]:
    """The norm of each encoder and decoder layer's gradient ("encoder 1",
    ... counted from the input), read off its parameters' names."""
    squares: dict[str, float] = {}
    for name, p in model.named_parameters():
        found = LAYER.match(name)
        if found is None or p.grad is None:
            continue
        layer = f"{found[1]} {int(found[2]) + 1}"
        squares[layer] = squares.get(layer, 0.0) + float(p.grad.pow(2).sum())
    return {layer: s**0.5 for layer, s in squares.items()}


@torch.no_grad()
def reversal_accuracy(model: Model, size: int = 200, seed: int = 1) -> float:
    """The share of ``size`` new sources that greedy search reverses exactly."""
    src, src_len, _, tgt_out = reversal_batch(
        size, LENGTHS, torch.Generator().manual_seed(seed)
    )
    right = 0
    for b, hyp in enumerate(greedy(model.eval(), src, src_len)):
        want = tgt_out[b, : int(src_len[b]) - 1].tolist()
        right += hyp.tokens == want
    return right / size


@torch.no_grad()
def teacher_forced_loss(
    model: Model, size: int = 200, seed: int = 1, target: Target = "reversed"
) -> float:
    """Loss per target token on ``size`` new pairs, the reference fed in."""
    src, src_len, tgt_in, tgt_out = reversal_batch(
        size, LENGTHS, torch.Generator().manual_seed(seed), target
    )
    total, _ = loss_sum(model.eval(), src, src_len, tgt_in, tgt_out, maps=False)
    return float(total / (tgt_out != PAD).sum())
