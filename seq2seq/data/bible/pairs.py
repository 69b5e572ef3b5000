"""Verses of two modules paired by reference, and the pairs that are not
translations of each other left out, each kind counted.

- **one side only**: a verse that one module has and the other lacks (the
  English module's deuterocanonical books), or whose text is empty.
- **renumbered chapters**: a module may number a chapter as the Hebrew text
  does (Numbers 13:1 there is 12:16 in English Bibles), so verse v of one is
  verse v +- 1 of the other for the whole chapter or its end. Translations
  keep lengths in proportion (Gale & Church 1993), so the pairing is wrong
  where pairing each verse with its neighbour fits the lengths far better:
  the whole chapter is left out when that holds over the chapter, or over
  three or more five-verse windows of it.
- **lengths out of proportion**: target/source words outside
  [RATIO_LOW, RATIO_HIGH] times the corpus's median ratio (0.1 % of the
  verses of es-en fall outside, a verse merged into its neighbour).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from seq2seq.data.bible.sword import Ref

RATIO_LOW, RATIO_HIGH = 0.4, 2.5
FIT = 0.6  # a shifted pairing this much closer in lengths is the right one
POOR = 0.25  # and only where the pairing as numbered fits poorly (typical: 0.1)
WINDOW = 5
MIN_WINDOWS = 3


@dataclass(frozen=True)
class Pair:
    ref: Ref
    src: str
    tgt: str

    @property
    def src_words(self) -> int:
        return len(self.src.split())


@dataclass
class Dropped:
    """How many verses each check left out, and the chapters renumbered."""

    one_side: int = 0
    renumbered: int = 0
    out_of_proportion: int = 0
    chapters: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.one_side + self.renumbered + self.out_of_proportion


def pair_verses(src: dict[Ref, str], tgt: dict[Ref, str]) -> tuple[list[Pair], Dropped]:
    """The verses both sides have with text, in canonical order, and what
    was left out."""
    dropped = Dropped()
    order = {r: i for i, r in enumerate([*src, *(r for r in tgt if r not in src)])}
    refs = sorted(
        (r for r in src.keys() & tgt.keys() if src[r] and tgt[r]),
        key=order.__getitem__,
    )
    full = [Pair(r, src[r], tgt[r]) for r in refs]
    dropped.one_side = len(order) - len(full)
    if not full:
        return [], dropped
    lengths = {p.ref: (p.src_words, len(p.tgt.split())) for p in full}
    mu = statistics.median(math.log(t / s) for s, t in lengths.values())
    chapters: dict[tuple[str, int], dict[int, tuple[int, int]]] = defaultdict(dict)
    for r, n in lengths.items():
        chapters[r.book, r.chapter][r.verse] = n
    bad = [key for key, verses in chapters.items() if _renumbered(verses, mu)]
    dropped.chapters = [f"{b} {c}" for b, c in bad]
    kept = []
    for p in full:
        s, t = lengths[p.ref]
        if (p.ref.book, p.ref.chapter) in bad:
            dropped.renumbered += 1
        elif not RATIO_LOW <= math.exp(math.log(t / s) - mu) <= RATIO_HIGH:
            dropped.out_of_proportion += 1
        else:
            kept.append(p)
    return kept, dropped


Lengths = dict[int, tuple[int, int]]  # verse -> (source words, target words)


def _misfit(verses: Lengths, numbers: list[int], shift: int, mu: float) -> float | None:
    """Mean distance of log length ratios from the corpus's, pairing source
    verse v with target verse v + shift; None with under 4 such pairs."""
    errors = [
        abs(math.log(verses[v + shift][1] / verses[v][0]) - mu)
        for v in numbers
        if v + shift in verses
    ]
    return statistics.mean(errors) if len(errors) >= 4 else None


def _better_shifted(verses: Lengths, numbers: list[int], mu: float) -> bool:
    here = _misfit(verses, numbers, 0, mu)
    shifted = [m for s in (-1, 1) if (m := _misfit(verses, numbers, s, mu)) is not None]
    return (
        here is not None and here > POOR and bool(shifted) and min(shifted) < FIT * here
    )


def _renumbered(verses: Lengths, mu: float) -> bool:
    numbers = sorted(verses)
    if _better_shifted(verses, numbers, mu):
        return True
    windows = sum(
        _better_shifted(verses, numbers[i : i + WINDOW], mu)
        for i in range(len(numbers) - WINDOW + 1)
    )
    return windows >= MIN_WINDOWS
