"""Notebook 3's real-text curve: the Bible experiment (es→en verses, 2 seeds
of each family; docs/results.md) read from its committed ``compare.json``,
so that the notebook draws it in a second instead of retraining 4 hours."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from seq2seq.results import Bucket, ComparedRun

# What `seq2seq compare runs/bible_esen/* --out docs/results/bible_esen` wrote
# (docs/results.md gives the command), committed with the repository.
BIBLE_RESULTS = Path("docs/results/bible_esen/compare.json")


def seed_means(rows: Sequence[ComparedRun]) -> dict[str, tuple[Bucket, ...]]:
    """{label: its buckets}, BLEU and chrF the mean over the label's seeds,
    in the order the labels first appear."""
    by_label: dict[str, list[ComparedRun]] = {}
    for row in rows:
        by_label.setdefault(row.label, []).append(row)
    return {label: mean_buckets(runs) for label, runs in by_label.items()}


def mean_buckets(runs: Sequence[ComparedRun]) -> tuple[Bucket, ...]:
    """The runs' buckets (the same test set's), scores averaged."""
    out = []
    for parts in zip(*(r.buckets for r in runs), strict=True):
        first = parts[0]
        bleus = [b.bleu for b in parts if b.bleu is not None]
        chrfs = [b.chrf for b in parts if b.chrf is not None]
        out.append(
            Bucket(
                first.lo,
                first.hi,
                first.n,
                statistics.mean(bleus) if bleus else None,
                statistics.mean(chrfs) if chrfs else None,
            )
        )
    return tuple(out)


def kept(buckets: Sequence[Bucket]) -> float:
    """The longest filled bucket's BLEU over the shortest's: 1 holds, 0.5 is
    half lost (the shape of Fig. 2 of Bahdanau et al. 2015)."""
    filled = [b for b in buckets if b.n and b.bleu is not None]
    first, last = filled[0].bleu, filled[-1].bleu
    assert first is not None and last is not None
    return last / first if first else 0.0
