"""Decoding as functions outside the model: greedy search (beam search later)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from seq2seq.data import bucket_batches, collate
from seq2seq.model import Seq2Seq
from seq2seq.tokenizer import BOS, EOS


@dataclass
class Hypothesis:
    tokens: list[int]  # without BOS/EOS
    weights: Tensor | None  # (len(tokens) + 1, S_real): rows for tokens and EOS


def max_output_len(src_len: Tensor, ratio: float) -> Tensor:
    """Per-sentence output limit: ratio * source length + 10 tokens."""
    return (src_len.float() * ratio).long() + 10


@torch.no_grad()
def greedy(
    model: Seq2Seq, src: Tensor, src_len: Tensor, ratio: float = 2.0
) -> list[Hypothesis]:
    """Pick the most probable token at every step, for a batch of sources."""
    memory = model.encode(src, src_len)
    state = model.decoder.init_state(memory)
    batch = src.size(0)
    limit = max_output_len(src_len, ratio).to(src.device)  # (B,)
    prev = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
    done = torch.zeros(batch, dtype=torch.bool, device=src.device)
    tokens, weights = [], []
    for t in range(int(limit.max())):
        attentional, state, w = model.decoder.step(prev, state, memory)
        prev = model.decoder.logits(attentional).argmax(dim=-1)  # (B,)
        tokens.append(prev)
        weights.append(w)
        done |= (prev == EOS) | (t + 1 >= limit)
        if bool(done.all()):
            break
    steps = torch.stack(tokens, dim=1).tolist()  # (B, T)
    alignment = None if weights[0] is None else torch.stack(weights, dim=1).float()
    return [
        _hypothesis(steps[b], alignment, b, int(src_len[b]), int(limit[b]))
        for b in range(batch)
    ]


def _hypothesis(
    steps: list[int], alignment: Tensor | None, b: int, n_src: int, limit: int
) -> Hypothesis:
    out = steps[:limit]
    n = out.index(EOS) if EOS in out else len(out)
    rows = min(n + 1, len(out))  # keep the EOS row when there is one
    w = None if alignment is None else alignment[b, :rows, :n_src].cpu()
    return Hypothesis(out[:n], w)


def decode_corpus(
    model: Seq2Seq,
    src_ids: list[list[int]],
    batch_sentences: int,
    ratio: float,
    device: torch.device,
) -> list[Hypothesis]:
    """Greedy-decode many sentences in length-sorted batches; input order kept."""
    model.eval()
    lengths = [(len(s) + 1, 0) for s in src_ids]
    out: list[Hypothesis | None] = [None] * len(src_ids)
    for index in bucket_batches(
        lengths, max_tokens=10**9, max_sentences=batch_sentences
    ):
        batch = collate(src_ids, None, index)
        hyps = greedy(model, batch.src.to(device), batch.src_len, ratio)
        for i, hyp in zip(index, hyps, strict=True):
            out[i] = hyp
    return out  # type: ignore[return-value]
