"""Deterministic synthetic English-to-German corpus with gold word alignments.

A small grammar (noun phrases with German agreement, verb-second main clauses,
verb-final subordinate and relative clauses, perfect tense, separable verbs,
negation, coordination) over the lexicon in :mod:`seq2seq.data.synth.lexicon`.
Sentences are sampled here as trees, rendered with word alignments by
:mod:`seq2seq.data.synth.tree`. See data/synth_ende/README.md.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TypeVar

from seq2seq.data.synth import lexicon as lx
from seq2seq.data.synth import tree as st
from seq2seq.data.synth.tree import NP, PP, Clause, Sentence, Unit, render
from seq2seq.files import atomic_write

__all__ = ["BUCKETS", "SPLITS", "VERSION", "generate_pairs", "render", "write_corpus"]

SPLITS: dict[str, int] = {"train": 50000, "val": 500, "test": 1000}
BUCKETS: tuple[tuple[int, int], ...] = ((3, 10), (11, 20), (21, 30), (31, 40), (41, 60))
# Val and test draw the buckets uniformly (as many sentences to score in each);
# train draws them ~ 1 / mean length, so each holds about as many *words* and
# half the pairs are short: drawn uniformly, 3-10 words were 5 % of the training
# words and `none` learned none of them (docs/results.md, "Making none learn").
TRAIN_WEIGHTS: tuple[float, ...] = (0.503, 0.211, 0.128, 0.092, 0.065)
VERSION = 2  # 1: train drawn uniformly over the buckets, 30,000 pairs
_T = TypeVar("_T")


# ----------------------------------------------------------------- lookups
@cache
def _nouns(classes: str) -> tuple[lx.Noun, ...]:
    return tuple(n for n in lx.NOUNS if n.cls in classes)


@cache
def _adjs(cls: str) -> tuple[lx.Adj, ...]:
    return tuple(a for a in lx.ADJECTIVES if cls in a.cls)


@cache
def _verbs(kind: str, role: str = "", cls: str = "") -> tuple[lx.Verb, ...]:
    """Verbs of a kind (i t d c, or '' for all) that fit a relative-clause head."""
    out = []
    for v in lx.VERBS:
        k = "c" if "c" in v.flags else "d" if v.iobj else "t" if v.obj else "i"
        if kind and k not in kind:
            continue
        if cls and cls not in (v.subj if role == "subj" else v.obj):
            continue
        out.append(v)
    return tuple(out)


_PREPS = {k: tuple(p for p in lx.PREPS if p.kind == k) for k in lx.PP_CLASSES}
_ADJ_RANK = {a: i for i, a in enumerate(lx.ADJECTIVES)}


# ----------------------------------------------------------------- sampling
class _Rng(random.Random):
    """Mersenne Twister with cheap draws built only on ``random()``, which is
    stable across Python versions (so is the corpus)."""

    def choice(self, seq: Sequence[_T]) -> _T:  # type: ignore[override]
        return seq[int(self.random() * len(seq))]

    def randint(self, a: int, b: int) -> int:
        return a + int(self.random() * (b - a + 1))

    def weighted(self, items: str, weights: tuple[float, ...]) -> str:
        r = self.random() * sum(weights)
        for item, w in zip(items, weights, strict=True):
            r -= w
            if r < 0:
                return item
        return items[-1]


# cumulative odds of the determiners (else a possessive), singular and plural
_DET_ODDS: dict[bool, tuple[tuple[float, lx.Det | None], ...]] = {
    False: ((0.55, lx.THE), (0.83, lx.A), (0.9, lx.THIS)),
    True: ((0.45, lx.THE), (0.75, None), (0.85, lx.THIS)),
}


def _np(rng: _Rng, classes: str, pron: bool = False) -> NP:
    if pron and "P" in classes and rng.random() < 0.1:
        pronoun = rng.choice(lx.PRONOUNS)
        return NP(pron=pronoun, plural=pronoun.plural)
    noun = rng.choice(_nouns(classes))
    plural, r = rng.random() < 0.3, rng.random()
    for p, det in _DET_ODDS[plural]:
        if r < p:
            return NP(noun, plural, det)
    return NP(noun, plural, rng.choice(lx.POSSESSIVES))


def _pp(rng: _Rng, kind: str) -> PP:
    return PP(rng.choice(_PREPS[kind]), _np(rng, lx.PP_CLASSES[kind]))


def _pick_verb(
    rng: _Rng, budget: int, depth: int, head: NP | None, role: str
) -> lx.Verb | None:
    clausal = depth < 2 and budget >= 8
    if role:  # a relative clause on head, a noun (st.rel_heads)
        assert head is not None and head.noun is not None
        verbs = _verbs("itdc" if clausal else "itd", role, head.noun.cls)
        return rng.choice(verbs) if verbs else None
    weights: tuple[float, ...]
    if budget <= 4:
        kinds, weights = "it", (0.55, 0.45)
    elif not clausal:
        kinds, weights = "itd", (0.3, 0.55, 0.15)
    else:
        kinds, weights = "itdc", (0.2, 0.45, 0.15, 0.2)
    return rng.choice(_verbs(rng.weighted(kinds, weights)))


def _clause(
    rng: _Rng,
    budget: int,
    depth: int,
    head: NP | None = None,
    role: str = "",
    tense: str = "",
) -> Clause | None:
    """A clause of about ``budget`` English words; None if no verb fits the head."""
    verb = _pick_verb(rng, budget, depth, head, role)
    if verb is None:
        return None
    if role == "subj":
        assert head is not None
        subj = head
    else:
        subj = _np(rng, verb.subj, pron=True)
    c = Clause(verb, subj, role=role, fixed=tense != "")
    if verb.obj:
        c.obj = head if role == "obj" else _np(rng, verb.obj)
    if verb.iobj:
        c.iobj, c.to_iobj = _np(rng, verb.iobj), rng.random() < 0.4
    c.perfect = tense == "perf" or (not tense and rng.random() < 0.3)
    if "c" in verb.flags:
        c.comp = _clause(rng, max(3, budget - 4 - rng.randint(0, 2)), depth + 1)
    _fill(rng, c, budget - st.clause_len(c), depth)
    return c


def _fits(adv: lx.Adverb, perfect: bool) -> bool:
    return not adv.tense or (adv.tense == "perf") == perfect


_ADVERBS = {
    (k, p): tuple(a for a in lx.ADVERBS if a.kind == k and _fits(a, p))
    for k in ("time", "freq")
    for p in (False, True)
}


def _fill(rng: _Rng, c: Clause, room: int, depth: int) -> None:
    """Add modifiers at random until the clause has used up ``room`` words.

    A relative clause, if any, comes last and only on the subject of a
    non-relative clause or on the last English phrase, so that no word of the
    host clause follows it in English (no attachment ambiguity)."""
    reserve = 0
    if depth < 2 and room >= 5 and rng.random() < 0.6:
        reserve = rng.randint(4, min(room, 13))
    room -= reserve
    for _ in range(12):
        if room <= 0:
            break
        op = rng.random()
        if op < 0.35:
            room -= _add_adj(rng, c)
        elif op < 0.55:
            room -= _add_pp(rng, c, room)
        elif op < 0.75:
            room -= _add_adverb(rng, c, room)
        elif op < 0.83:
            room -= st.negate(c)
        elif op < 0.91 and not (c.perfect or c.fixed):
            if all(a is None or not a.tense for a in (c.time, c.freq)):
                c.perfect, room = True, room - (not c.neg)
        elif op >= 0.91:
            room -= _add_mod(rng, c, room)
    if reserve:
        _add_rel(rng, c, reserve + room, depth)


def _add_adverb(rng: _Rng, c: Clause, room: int) -> int:
    """A time adverb (English clause end) or a frequency adverb, not both."""
    if c.time or c.freq:
        return 0
    clausal = "c" in c.verb.flags  # no time adverb before a that-clause
    kind = "freq" if (clausal or rng.random() < 0.4) and not c.neg else "time"
    if clausal and kind == "time":
        return 0
    adv = rng.choice(_ADVERBS[kind, c.perfect])
    cost = adv.en.count(" ") + 1
    if cost > room:
        return 0
    setattr(c, kind, adv)
    return cost


def _add_adj(rng: _Rng, c: Clause) -> int:
    nps = [np for np in st.arguments(c) if len(np.adjs) < 2]
    if not nps:
        return 0
    np = rng.choice(nps)
    assert np.noun is not None  # arguments with adjectives are nouns
    adj = rng.choice(_adjs(np.noun.cls))
    if adj in np.adjs or (adj in lx.COLOURS and any(a in lx.COLOURS for a in np.adjs)):
        return 0
    np.adjs = tuple(sorted((*np.adjs, adj), key=_ADJ_RANK.__getitem__))
    return 1


def _add_pp(rng: _Rng, c: Clause, room: int) -> int:
    if room < 2 or len(c.pps) >= 2 or "c" in c.verb.flags:
        return 0
    r = rng.random()
    if "m" in c.verb.flags and r < 0.6:
        kind = "dir"
    else:
        kind = (
            "loc"
            if r < 0.75
            else "com"
            if r < 0.9 or "b" not in c.verb.flags
            else "ben"
        )
    if any(pp.prep.kind == kind for pp in c.pps):
        return 0
    pp = _pp(rng, kind)
    c.pps = (*c.pps, pp)
    return len(pp.prep.en.split()) + st.np_len(pp.np)


def _add_mod(rng: _Rng, c: Clause, room: int) -> int:
    nps = [np for np in st.arguments(c)[:2] if np.mod is None and np.rel is None]
    if room < 3 or not nps:
        return 0
    np = rng.choice(nps)
    np.mod = _pp(rng, "com")
    return len(np.mod.prep.en.split()) + st.np_len(np.mod.np)


def _add_rel(rng: _Rng, c: Clause, room: int, depth: int) -> int:
    heads = st.rel_heads(c)
    if room < 3 or not heads:
        return 0
    np = rng.choice(heads)
    roles = ["subj", "obj"] if rng.random() < 0.6 else ["obj", "subj"]
    for role in roles:
        np.rel = _clause(rng, room - 1, depth + 1, np, role)
        if np.rel is not None:
            return st.clause_len(np.rel)
    return 0


def _unit(rng: _Rng, budget: int) -> Unit:
    if budget >= 9 and rng.random() < 0.5:
        conj = rng.choice(lx.SUBORDINATORS)
        share = max(3, round(budget * rng.uniform(0.3, 0.55)))
        sub = _clause(rng, share - 1, 1, tense=conj.tense)
        main = _clause(rng, budget - share, 0, tense=conj.tense and "pres")
        assert main is not None  # None only for a relative clause's head
        return Unit(main, sub, conj, rng.random() < 0.4)
    main = _clause(rng, budget, 0)
    assert main is not None
    fronts = [
        a for a in ("time", "freq") if getattr(main, a) and getattr(main, a).front
    ]
    if fronts and rng.random() < 0.4:
        main.front = rng.choice(fronts)
    return Unit(main)


def _sentence(rng: _Rng, target: int) -> Sentence:
    n = 1
    if target >= 12:
        n = rng.randint(max(1, -(-target // 24)), min(3, 1 + target // 12))
    weights = [rng.uniform(0.7, 1.3) for _ in range(n)]
    budget = (target - n + 1) / sum(weights)
    units = [_unit(rng, max(3, round(budget * w))) for w in weights]
    return Sentence(units, [rng.choice(lx.COORDINATORS) for _ in range(n - 1)])


def _pairs(
    n: int,
    rng: _Rng,
    keep: Callable[[str], bool] | None = None,
    weights: tuple[float, ...] | None = None,
) -> list[tuple[str, str, str]]:
    """n pairs, each in a length bucket drawn uniformly (or by ``weights``);
    redraws until it fits."""
    pairs = []
    for _ in range(n):
        if weights is None:
            lo, hi = BUCKETS[rng.randint(0, len(BUCKETS) - 1)]
        else:
            lo, hi = BUCKETS[int(rng.weighted("01234", weights))]  # a digit a bucket
        while True:
            s = _sentence(rng, rng.randint(lo, hi))
            en = st.render_en(s)
            text = " ".join(en)
            if lo <= len(en) <= hi and (keep is None or keep(text)):
                break
        de, align = st.render_de(s)
        pairs.append((text, " ".join(de), align))
    return pairs


def generate_pairs(n: int, seed: int) -> list[tuple[str, str, str]]:
    """n pairs (english, german, alignment); alignment is Pharaoh 'i-j ...' with
    i an English and j a German word index (0-based, whitespace words)."""
    return _pairs(n, _Rng(seed))


# ----------------------------------------------------------------- corpus
_HASHED_MAX = 10  # English sentences up to this many words have a home split


def _home(text: str) -> str:
    """The one split a short sentence may occur in, from a hash of its text."""
    h = zlib.crc32(text.encode("utf-8")) % 10
    return "val" if h == 0 else "test" if h == 1 else "train"


def _keeper(split: str, train: set[str]) -> Callable[[str], bool]:
    """Short sentences stay in their home split (so val/test never share one with
    train, whatever the sizes); longer ones, which practically never repeat,
    are checked against train."""

    def keep(text: str) -> bool:
        if text.count(" ") < _HASHED_MAX:
            return _home(text) == split
        return text not in train

    return keep


def _stats(pairs: list[tuple[str, str, str]]) -> dict:
    lens = [e.count(" ") + 1 for e, _, _ in pairs]
    hist = {f"{lo}-{hi}": sum(lo <= n <= hi for n in lens) for lo, hi in BUCKETS}
    return {
        "lines": len(pairs),
        "en_len_min": min(lens, default=0),
        "en_len_mean": round(sum(lens) / len(lens), 2) if lens else 0.0,
        "en_len_max": max(lens, default=0),
        "en_len_buckets": hist,
    }


def write_corpus(
    out_dir: Path, seed: int = 1, sizes: dict[str, int] | None = None
) -> dict:
    """Write {split}.en/.de/.align for train/val/test and MANIFEST.json into
    out_dir, each file atomically; returns the manifest. The manifest is
    removed first and written last, so it marks a complete corpus."""
    sizes = {**SPLITS, **(sizes or {})}
    bad = [
        k
        for k, v in sizes.items()
        if k not in SPLITS or not isinstance(v, int) or v < 0
    ]
    if bad:
        raise ValueError(
            f"bad split sizes {bad}: splits are {list(SPLITS)}, sizes ints >= 0"
        )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "MANIFEST.json").unlink(missing_ok=True)
    manifest: dict = {"corpus": "synth_ende", "version": VERSION, "seed": seed}
    manifest |= {"sizes": sizes, "splits": {}}
    train: set[str] = set()
    for split in SPLITS:
        rng = _Rng(f"synth_ende:{seed}:{split}")
        weights = TRAIN_WEIGHTS if split == "train" else None
        pairs = _pairs(sizes[split], rng, _keeper(split, train), weights)
        if split == "train":
            train = {e for e, _, _ in pairs}
        for k, ext in enumerate(("en", "de", "align")):
            atomic_write(
                out_dir / f"{split}.{ext}", "".join(p[k] + "\n" for p in pairs)
            )
        manifest["splits"][split] = _stats(pairs)
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    atomic_write(out_dir / "MANIFEST.json", text)
    return manifest
