"""Long sentences from real text: k consecutive pairs joined into one pair.

Multi30k captions average 13 words, too short to show the single-vector
bottleneck at its worst (Bahdanau et al. 2015, Fig. 2, goes to 60 words).
Joining k = 1, 2, 3, 4, 1, 2, 3, 4, ... consecutive pairs of a split gives
natural text up to ~80 words whose sentence-level alignment is known by
construction: the i-th source sentence of a group translates to the i-th target
sentence. Word alignments, where a split has them, are shifted along.

``--split test_joined`` evaluates on the joined test set (1,000 Multi30k pairs
become 400: 100 of each k); ``data.join_train: 4`` trains on joined pairs.
"""

from __future__ import annotations

from dataclasses import replace

from seq2seq.data.parallel import Alignment, Split

SUFFIX = "_joined"
MAX_K = 4  # the evaluation set joins 1..4 pairs


def groups(n: int, max_k: int) -> list[list[int]]:
    """Consecutive index groups of sizes 1, 2, ..., max_k, 1, 2, ... covering n
    items; the last group is shorter when n runs out."""
    out: list[list[int]] = []
    start, k = 0, 1
    while start < n:
        out.append(list(range(start, min(start + k, n))))
        start += k
        k = k % max_k + 1
    return out


def _join_alignments(split: Split, group: list[int]) -> Alignment:
    """Concatenate word alignments, offsetting each by the words before it."""
    assert split.align is not None
    joined: Alignment = []
    src_off = tgt_off = 0
    for i in group:
        joined += [(s + src_off, t + tgt_off) for s, t in split.align[i]]
        src_off += len(split.src[i].split())
        tgt_off += len(split.tgt[i].split())
    return joined


def join(split: Split, max_k: int = MAX_K) -> Split:
    """Join consecutive pairs of ``split`` (see the module docstring); the
    result's ``groups`` say which pairs each joined pair holds."""
    return join_groups(split, groups(len(split), max_k))


def join_groups(split: Split, index: list[list[int]]) -> Split:
    """One pair per group of ``index`` (consecutive pair indices of
    ``split``): their sources joined, their targets joined, their word
    alignments shifted along. The explorer's "grow it" joins a chosen group."""
    align = (
        [_join_alignments(split, g) for g in index] if split.align is not None else None
    )
    return replace(
        split,
        name=split.name + SUFFIX,
        src=[" ".join(split.src[i].strip() for i in g) for g in index],
        tgt=[" ".join(split.tgt[i].strip() for i in g) for g in index],
        align=align,
        joined_from=index,
    )


def base_split(name: str) -> tuple[str, bool]:
    """``test_joined`` -> (``test``, True); ``test`` -> (``test``, False)."""
    if name.endswith(SUFFIX):
        return name[: -len(SUFFIX)], True
    return name, False
