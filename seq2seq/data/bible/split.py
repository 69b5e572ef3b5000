"""A split of verse pairs that leaks nothing from training into test.

Neighbouring verses share names, phrases and context, and the Bible repeats
itself: Kings and Chronicles tell the same reigns, the Synoptic Gospels the
same sayings, the Law its formulas. So

- test and validation are whole chapters, never single verses;
- a held-out verse with a **near copy** in training is left out of the
  held-out set (counted): a copy is a training verse that holds more than
  OVERLAP of the held-out verse's word 4-grams (lowercased, punctuation
  kept), on the source or the target side (shorter verses: their n-grams of
  their own length);
- the test chapters are drawn so that every source-length bucket (1-10 ...
  41-50 and 51+ words) has at least TEST_PER_BUCKET verses: for the longest
  bucket first, chapters in a seeded random order that hold a verse of a
  bucket still short, counting only verses with no near copy in any other
  chapter (so the counts hold whatever the rest of the split);
- validation is further chapters in the same order, to VAL_VERSES verses;
- test and validation stop at TEST_SHARE and VAL_SHARE of the verses.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from seq2seq.data.bible.pairs import Pair

# Upper edges of the source-length buckets the test set is stratified by (a
# last one: 51+). configs/bible_esen/ evaluates by the same buckets
# (eval.buckets); tests/test_bible.py checks that the two agree.
EDGES = (10, 20, 30, 40, 50)
TEST_PER_BUCKET = 150
VAL_VERSES = 1000
# and never more than these shares of the corpus (a small one keeps most
# of its verses for training)
TEST_SHARE, VAL_SHARE = 0.2, 0.1
OVERLAP = 0.5
N = 4

Chapter = tuple[str, int]


@dataclass(frozen=True)
class Split:
    train: list[Pair]
    val: list[Pair]
    test: list[Pair]
    near_copies: dict[str, int]  # held-out verses left out, by split
    overlap_before: dict[str, float]  # held-out share with a near copy in train


def bucket(words: int) -> int:
    """Index of the length bucket of a verse of ``words`` source words."""
    return sum(words > edge for edge in EDGES)


def bucket_names() -> list[str]:
    lows = [1, *(e + 1 for e in EDGES)]
    return [f"{lo}-{hi}" for lo, hi in zip(lows, EDGES, strict=False)] + [
        f"{EDGES[-1] + 1}+"
    ]


def grams(text: str) -> set[tuple[str, ...]]:
    words = text.lower().split()
    n = min(N, len(words))
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


class CopyFinder:
    """For each verse, whether another verse (of a set of chapters) holds
    more than OVERLAP of its n-grams on either side."""

    def __init__(self, pairs: Sequence[Pair]) -> None:
        self.pairs = pairs
        self.grams = [(grams(p.src), grams(p.tgt)) for p in pairs]
        self.index: list[dict[tuple[str, ...], list[int]]] = [
            defaultdict(list),
            defaultdict(list),
        ]
        for i, sides in enumerate(self.grams):
            for side, gs in enumerate(sides):
                for g in gs:
                    self.index[side][g].append(i)

    def copied(self, i: int, among: set[Chapter]) -> bool:
        """Whether verse i has a near copy in a chapter of ``among`` other
        than its own."""
        own = _chapter(self.pairs[i])
        for side, gs in enumerate(self.grams[i]):
            shared: Counter[int] = Counter()
            for g in gs:
                shared.update(self.index[side][g])
            for j, n in shared.most_common():
                if n <= OVERLAP * len(gs):
                    break
                chapter = _chapter(self.pairs[j])
                if chapter != own and chapter in among:
                    return True
        return False


def _chapter(p: Pair) -> Chapter:
    return p.ref.book, p.ref.chapter


def split_pairs(pairs: Sequence[Pair], seed: int) -> Split:
    """Train, validation and test by whole chapters (module docstring)."""
    finder = CopyFinder(pairs)
    by_chapter: dict[Chapter, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by_chapter[_chapter(p)].append(i)
    chapters = list(by_chapter)
    everywhere = set(chapters)
    unique = {i for i in range(len(pairs)) if not finder.copied(i, everywhere)}
    order = chapters[:]
    random.Random(seed).shuffle(order)
    test = _stratified(order, by_chapter, pairs, unique, TEST_SHARE * len(pairs))
    val: list[Chapter] = []
    val_cap = min(VAL_VERSES, VAL_SHARE * len(pairs))
    for c in order:
        if sum(len(by_chapter[v]) for v in val) >= val_cap:
            break
        if c not in test:
            val.append(c)
    train = everywhere - set(test) - set(val)
    held: dict[str, list[Pair]] = {}
    copies, before = {}, {}
    for name, chosen in (("val", val), ("test", test)):
        index = [i for c in sorted(chosen, key=chapters.index) for i in by_chapter[c]]
        leaked = {i for i in index if finder.copied(i, train)}
        held[name] = [pairs[i] for i in index if i not in leaked]
        copies[name] = len(leaked)
        before[name] = len(leaked) / len(index) if index else 0.0
    kept = [pairs[i] for c in chapters if c in train for i in by_chapter[c]]
    return Split(kept, held["val"], held["test"], copies, before)


def _stratified(
    order: Iterable[Chapter],
    by_chapter: dict[Chapter, list[int]],
    pairs: Sequence[Pair],
    unique: set[int],
    cap: float,
) -> list[Chapter]:
    order = list(order)
    counts = [0] * (len(EDGES) + 1)
    taken: list[Chapter] = []
    size = 0
    for b in reversed(range(len(counts))):
        for c in order:
            if counts[b] >= TEST_PER_BUCKET:
                break
            if c in taken or size + len(by_chapter[c]) > cap:
                continue
            kinds = [bucket(pairs[i].src_words) for i in by_chapter[c] if i in unique]
            if b in kinds:
                taken.append(c)
                size += len(by_chapter[c])
                for k in kinds:
                    counts[k] += 1
    return taken


def counts_by_bucket(pairs: Iterable[Pair]) -> list[int]:
    counts = [0] * (len(EDGES) + 1)
    for p in pairs:
        counts[bucket(p.src_words)] += 1
    return counts
