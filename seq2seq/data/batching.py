"""Batches: pairs padded into tensors, grouped by length."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from seq2seq.specials import BOS, EOS, PAD


@dataclass
class Batch:
    """Padded ids of one batch. Source ends in EOS; target is shifted by one."""

    src: Tensor  # (B, S) source ids + EOS, PAD-padded
    src_len: Tensor  # (B,) lengths including EOS (on CPU, for packing)
    tgt_in: Tensor  # (B, T) BOS + target ids: the decoder's inputs
    tgt_out: Tensor  # (B, T) target ids + EOS: what it must predict
    index: list[int]  # positions of these pairs in their split

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())

    def to(self, device: torch.device) -> Batch:
        return Batch(
            self.src.to(device, non_blocking=True),
            self.src_len,
            self.tgt_in.to(device, non_blocking=True),
            self.tgt_out.to(device, non_blocking=True),
            self.index,
        )


def collate(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]] | None,
    index: Sequence[int],
) -> Batch:
    """Pad the given pairs into a :class:`Batch` (target may be absent)."""
    src = [list(src_ids[i]) + [EOS] for i in index]
    src_t = _pad(src)
    if tgt_ids is None:
        empty = torch.zeros(len(index), 0, dtype=torch.long)
        return Batch(
            src_t, torch.tensor([len(s) for s in src]), empty, empty, list(index)
        )
    tgt_in = _pad([[BOS] + list(tgt_ids[i]) for i in index])
    tgt_out = _pad([list(tgt_ids[i]) + [EOS] for i in index])
    return Batch(
        src_t, torch.tensor([len(s) for s in src]), tgt_in, tgt_out, list(index)
    )


def _pad(rows: list[list[int]]) -> Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), PAD, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def bucket_batches(
    lengths: Sequence[tuple[int, int]],
    max_tokens: int,
    max_sentences: int = 0,
    seed: int | None = None,
) -> list[list[int]]:
    """Group pair indices into batches of similar length.

    Pairs are sorted by (source, target) length after a seeded shuffle, so equal
    lengths mix differently every epoch; consecutive pairs form a batch while
    ``sentences * longest side`` stays within ``max_tokens`` (or exactly
    ``max_sentences`` pairs if that is set). The batch order is shuffled too.
    ``seed=None`` keeps the sorted order (for evaluation).
    """
    order = list(range(len(lengths)))
    rng = random.Random(seed)
    if seed is not None:
        rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        width = max(max(lengths[i]), longest)
        full = (
            len(current) >= max_sentences
            if max_sentences
            else (len(current) + 1) * width > max_tokens
        )
        if current and full:
            batches.append(current)
            current, width = [], max(lengths[i])
        current.append(i)
        longest = width
    if current:
        batches.append(current)
    if seed is not None:
        rng.shuffle(batches)
    return batches
