"""Padded batches grouped by length (seq2seq/data/batching.py)."""

from __future__ import annotations

import torch

from seq2seq.data.batching import bucket_batches, collate
from seq2seq.specials import BOS, EOS, PAD


def test_collate_shifts_target_and_pads() -> None:
    batch = collate([[5, 6, 7], [8]], [[9], [10, 11]], [0, 1])
    assert batch.src.tolist() == [[5, 6, 7, EOS], [8, EOS, PAD, PAD]]
    assert batch.src_len.tolist() == [4, 2]
    assert batch.tgt_in.tolist() == [[BOS, 9, PAD], [BOS, 10, 11]]
    assert batch.tgt_out.tolist() == [[9, EOS, PAD], [10, 11, EOS]]
    assert batch.n_tgt_tokens == 5


def test_buckets_cover_everything_once_within_budget() -> None:
    g = torch.Generator().manual_seed(0)
    lengths = [(int(a), int(b)) for a, b in torch.randint(2, 60, (500, 2), generator=g)]
    batches = bucket_batches(lengths, max_tokens=600, seed=1)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(500))
    for b in batches:
        assert len(b) * max(max(lengths[i]) for i in b) <= 600 or len(b) == 1
    # similar lengths together: little padding
    pad = sum(
        len(b) * max(lengths[i][0] for i in b) - sum(lengths[i][0] for i in b)
        for b in batches
    )
    assert pad / sum(s for s, _ in lengths) < 0.25


def test_batches_shuffle_per_seed_and_fixed_sentences() -> None:
    lengths = [(i % 17 + 1, i % 13 + 1) for i in range(300)]
    a = bucket_batches(lengths, 200, seed=1)
    assert a == bucket_batches(lengths, 200, seed=1)
    assert a != bucket_batches(lengths, 200, seed=2)
    fixed = bucket_batches(lengths, 10**9, max_sentences=64, seed=3)
    assert (
        sorted(len(b) for b in fixed) == [44, 64, 64, 64, 64]
        and sum(map(len, fixed)) == 300
    )
