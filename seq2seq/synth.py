"""Deterministic synthetic English-to-German corpus with gold word alignments.

A small grammar (noun phrases with German agreement, verb-second main clauses,
verb-final subordinate and relative clauses, perfect tense, separable verbs,
negation, coordination) over the lexicon in :mod:`seq2seq.synth_lexicon`.
Each sentence is built as a tree, rendered in English first (which numbers the
English words), then in German, each German word carrying the indices of the
English words it translates. See data/synth_ende/README.md.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeVar

from seq2seq import synth_lexicon as lx

SPLITS: dict[str, int] = {"train": 30000, "val": 500, "test": 1000}
BUCKETS: tuple[tuple[int, int], ...] = ((3, 10), (11, 20), (21, 30), (31, 40), (41, 60))
VERSION = 1
_GENDER = {"m": 0, "f": 1, "n": 2}
Tok = tuple[str, list[int]]  # a German word and the English indices it links to
_T = TypeVar("_T")


@dataclass(slots=True, eq=False)
class NP:
    """A noun phrase (or a subject pronoun) with its English word indices."""

    noun: lx.Noun | None = None
    plural: bool = False
    det: lx.Det | None = None
    adjs: tuple[lx.Adj, ...] = ()
    mod: PP | None = None  # "with the hat"
    rel: Clause | None = None
    pron: lx.Pron | None = None
    i_det: list[int] = field(init=False)  # English indices, set when rendered
    i_adj: list[int] = field(init=False)
    i_noun: list[int] = field(init=False)


@dataclass(slots=True, eq=False)
class PP:
    """A prepositional phrase."""

    prep: lx.Prep
    np: NP
    i_prep: list[int] = field(init=False)


@dataclass(slots=True, eq=False)
class Clause:
    """One clause; ``role`` makes it a relative clause on its subj or obj."""

    verb: lx.Verb
    subj: NP
    obj: NP | None = None
    iobj: NP | None = None
    to_iobj: bool = False  # English "gives a book to the child"
    pps: tuple[PP, ...] = ()
    time: lx.Adverb | None = None
    freq: lx.Adverb | None = None
    front: str = ""  # "time" or "freq": that adverb opens the main clause
    perfect: bool = False
    neg: bool = False
    comp: Clause | None = None  # that-clause
    role: str = ""
    fixed: bool = False  # tense fixed by a subordinator
    ix: dict[str, list[int]] = field(init=False)


@dataclass(slots=True, eq=False)
class Unit:
    """A main clause with an optional adverbial subordinate clause."""

    main: Clause
    sub: Clause | None = None
    conj: lx.Conj | None = None
    front: bool = False
    i_conj: list[int] = field(init=False)


@dataclass(slots=True, eq=False)
class Sentence:
    """Main units joined by coordinators."""

    units: list[Unit]
    coords: list[lx.Conj] = field(default_factory=list)
    i_coords: list[list[int]] = field(init=False)


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


# ----------------------------------------------------------------- English
def _emit(en: list[str], text: str) -> list[int]:
    if " " not in text:
        en.append(text)
        return [len(en) - 1]
    start = len(en)
    en.extend(text.split())
    return list(range(start, len(en)))


def _np_en(np: NP, en: list[str]) -> None:
    if np.pron:
        np.i_noun = _emit(en, np.pron.en)
        return
    noun = np.noun
    assert noun is not None
    if np.det:
        word = np.det.en_pl if np.plural else np.det.en
        first = np.adjs[0].en if np.adjs else noun.en
        np.i_det = _emit(en, "an" if word == "a" and first[0] in "aeiou" else word)
    np.i_adj = list(range(len(en), len(en) + len(np.adjs)))
    en.extend(a.en for a in np.adjs)
    np.i_noun = _emit(en, noun.en_pl if np.plural else noun.en)
    if np.mod:
        _pp_en(np.mod, en)
    if np.rel:
        _clause_en(np.rel, en)


def _pp_en(pp: PP, en: list[str]) -> None:
    pp.i_prep = _emit(en, pp.prep.en)
    _np_en(pp.np, en)


def _verb_en(c: Clause, en: list[str]) -> None:
    v, pl, ix = c.verb, c.subj.plural, c.ix
    if c.perfect:
        ix["aux"] = _emit(en, "have" if pl else "has")
        if c.neg:
            ix["not"] = _emit(en, "not")
        form = v.en_part
    elif c.neg:
        ix["aux"] = _emit(en, "do" if pl else "does")
        ix["not"] = _emit(en, "not")
        form = v.en_pl
    else:
        form = v.en_pl if pl else v.en
    if c.freq and c.front != "freq":
        ix["freq"] = _emit(en, c.freq.en)
    words = form.split()
    ix["verb"] = _emit(en, words[0])
    ix["part"] = _emit(en, words[1]) if len(words) > 1 else []


def _clause_en(c: Clause, en: list[str]) -> None:
    c.ix = ix = {}
    if c.front:
        ix[c.front] = _emit(en, getattr(c, c.front).en)
    if c.role:
        head = c.subj if c.role == "subj" else c.obj
        who = c.role == "subj" and head is not None and head.noun.cls == "P"
        ix["rel"] = _emit(en, "who" if who else "that")
    if c.role != "subj":
        _np_en(c.subj, en)
    _verb_en(c, en)
    if c.iobj and not c.to_iobj:
        _np_en(c.iobj, en)
    if c.obj and c.role != "obj":
        _np_en(c.obj, en)
    if c.iobj and c.to_iobj:
        ix["to"] = _emit(en, "to")
        _np_en(c.iobj, en)
    for pp in c.pps:
        _pp_en(pp, en)
    if c.time and c.front != "time":
        ix["time"] = _emit(en, c.time.en)
    if c.comp:
        ix["that"] = _emit(en, "that")
        _clause_en(c.comp, en)


def _render_en(s: Sentence) -> list[str]:
    en: list[str] = []
    s.i_coords = []
    for k, u in enumerate(s.units):
        if k:
            s.i_coords.append(_emit(en, s.coords[k - 1].en))
        if u.sub and u.front:
            u.i_conj = _emit(en, u.conj.en)
            _clause_en(u.sub, en)
            en[-1] += ","
        _clause_en(u.main, en)
        if u.sub and not u.front:
            u.i_conj = _emit(en, u.conj.en)
            _clause_en(u.sub, en)
    en[0] = en[0][0].upper() + en[0][1:]
    en[-1] += "."
    return en


# ----------------------------------------------------------------- German
def _comma(out: list[Tok]) -> None:
    """Attach a comma to the last word (once)."""
    word, idx = out[-1]
    if word[-1] != ",":
        out[-1] = (word + ",", idx)


def _phrase(de: str, idx: list[int]) -> list[Tok]:
    """German words for an English phrase: one-to-one if equally long, else all."""
    words = de.split()
    if len(words) == len(idx):
        return [(w, [i]) for w, i in zip(words, idx, strict=True)]
    return [(w, idx) for w in words]


def _np_de(np: NP, case: str, out: list[Tok]) -> None:
    if np.pron:
        out.append((np.pron.de, np.i_noun))
        return
    noun, det = np.noun, np.det
    g = 3 if np.plural else _GENDER[noun.gender]
    table = lx.ADJ_STRONG
    if det is None:
        pass
    elif det.kind == "def":
        out.append((lx.DEF_ARTICLE[case][g], np.i_det))
        table = lx.ADJ_WEAK
    else:
        ends = lx.DER_ENDINGS if det.kind == "dem" else lx.EIN_ENDINGS
        out.append((det.de + ends[case][g], np.i_det))
        table = lx.ADJ_MIXED if det.kind != "dem" and not np.plural else lx.ADJ_WEAK
    end = table[case][g]
    out.extend((a.de + end, [i]) for a, i in zip(np.adjs, np.i_adj, strict=True))
    word = noun.de_pl if np.plural else noun.de
    if np.plural and case == "dat" and word[-1] not in "ns":
        word += "n"
    out.append((word, np.i_noun))
    if np.mod:
        _pp_de(np.mod, out)
    if np.rel:
        _comma(out)
        _clause_de(np.rel, "rel", out)
        _comma(out)


def _pp_de(pp: PP, out: list[Tok]) -> None:
    start = len(out)
    out.append((pp.prep.de, pp.i_prep))
    _np_de(pp.np, pp.prep.case, out)
    if pp.np.det is lx.THE and not pp.np.plural:
        art, links = out[start + 1]
        short = lx.CONTRACTIONS.get((pp.prep.de, art))
        if short:
            out[start : start + 2] = [(short, pp.i_prep + links)]


def _verb_de(c: Clause, final: bool) -> tuple[Tok, list[Tok]]:
    """The finite verb and what goes to the clause end (participle, prefix)."""
    v, pl, ix = c.verb, c.subj.plural, c.ix
    if c.perfect:
        return (lx.AUX[v.aux][pl], ix["aux"]), [(v.de_part, ix["verb"] + ix["part"])]
    do = ix.get("aux", [])
    words = (v.de_pl if pl else v.de).split()
    if len(words) == 1:
        return (words[0], ix["verb"] + ix["part"] + do), []
    stem, prefix = words
    if final:
        return (prefix + stem, ix["verb"] + ix["part"] + do), []
    return (stem, ix["verb"] + do), [(prefix, ix["part"] or ix["verb"])]


def _clause_de(c: Clause, mode: str, out: list[Tok]) -> None:
    """Mode: main (V2), inv (V2 after a fronted clause), sub or rel (V-final)."""
    ix, final = c.ix, mode in ("sub", "rel")
    fin, tail = _verb_de(c, final)
    obj_case = "dat" if "d" in c.verb.flags else "acc"
    if c.front:
        out.extend(_phrase(getattr(c, c.front).de, ix[c.front]))
        mode = "inv"
    if mode == "rel":
        head = c.subj if c.role == "subj" else c.obj
        g = 3 if head.plural else _GENDER[head.noun.gender]
        out.append((lx.RELATIVE["nom" if c.role == "subj" else obj_case][g], ix["rel"]))
    if mode == "inv":
        out.append(fin)
    if c.role != "subj":
        _np_de(c.subj, "nom", out)
    if mode == "main":
        out.append(fin)
    for adv in ("time", "freq"):
        if getattr(c, adv) and c.front != adv:
            out.extend(_phrase(getattr(c, adv).de, ix[adv]))
    if c.iobj:
        # English "to" goes with the dative article (or the noun if none)
        k = len(out) + (0 if c.iobj.det else len(c.iobj.adjs))
        _np_de(c.iobj, "dat", out)
        out[k] = (out[k][0], out[k][1] + ix.get("to", []))
    if c.obj and c.role != "obj":
        _np_de(c.obj, obj_case, out)
    if c.neg:
        out.append(("nicht", ix["not"]))
    for pp in c.pps:
        _pp_de(pp, out)
    out.extend(tail)
    if final:
        out.append(fin)
    if c.comp:
        _comma(out)
        out.append(("dass", ix["that"]))
        _clause_de(c.comp, "sub", out)
        _comma(out)


def _render_de(s: Sentence) -> tuple[list[str], str]:
    """German words and the Pharaoh alignment."""
    out: list[Tok] = []
    for k, u in enumerate(s.units):
        if k:
            if s.coords[k - 1].en == "but":
                _comma(out)
            out.append((s.coords[k - 1].de, s.i_coords[k - 1]))
        if u.sub and u.front:
            out.append((u.conj.de, u.i_conj))
            _clause_de(u.sub, "sub", out)
            _comma(out)
        _clause_de(u.main, "inv" if u.sub and u.front else "main", out)
        if u.sub and not u.front:
            _comma(out)
            out.append((u.conj.de, u.i_conj))
            _clause_de(u.sub, "sub", out)
            _comma(out)
    words = [w for w, _ in out]
    words[0] = words[0][0].upper() + words[0][1:]
    words[-1] = words[-1].rstrip(",") + "."
    # links as i * 128 + j: ints sort fast, and no sentence has 128 words
    links = sorted({i * 128 + j for j, (_, idx) in enumerate(out) for i in idx})
    return words, " ".join(f"{k >> 7}-{k & 127}" for k in links)


def render(s: Sentence) -> tuple[str, str, str]:
    """(english, german, Pharaoh alignment) of a sentence tree."""
    en = _render_en(s)
    de, align = _render_de(s)
    return " ".join(en), " ".join(de), align


# ----------------------------------------------------------------- sampling
class _Rng(random.Random):
    """Mersenne Twister with cheap draws built only on ``random()``, which is
    stable across Python versions (so is the corpus)."""

    def choice(self, seq: Sequence[_T]) -> _T:
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
        p = rng.choice(lx.PRONOUNS)
        return NP(pron=p, plural=p.plural)
    noun = rng.choice(_nouns(classes))
    plural, r = rng.random() < 0.3, rng.random()
    for p, det in _DET_ODDS[plural]:
        if r < p:
            return NP(noun, plural, det)
    return NP(noun, plural, rng.choice(lx.POSSESSIVES))


def _pp(rng: _Rng, kind: str) -> PP:
    return PP(rng.choice(_PREPS[kind]), _np(rng, lx.PP_CLASSES[kind]))


def _np_len(np: NP | None) -> int:
    if np is None:
        return 0
    if np.pron:
        return 1
    n = (np.det is not None) + len(np.adjs) + np.noun.en.count(" ") + 1
    if np.mod:
        n += len(np.mod.prep.en.split()) + _np_len(np.mod.np)
    return n + (_clause_len(np.rel) if np.rel else 0)


def _clause_len(c: Clause) -> int:
    """Exact English word count (a relative clause's head not included)."""
    v = c.verb
    n = (
        (c.role != "")
        + (c.freq is not None)
        + (c.time.en.count(" ") + 1 if c.time else 0)
    )
    n += _np_len(c.subj) if c.role != "subj" else 0
    n += _np_len(c.obj) if c.role != "obj" else 0
    n += _np_len(c.iobj) + c.to_iobj
    form = v.en_part if c.perfect else v.en_pl if c.neg else v.en
    n += c.perfect + 2 * c.neg - (c.perfect and c.neg) + form.count(" ") + 1
    for pp in c.pps:
        n += len(pp.prep.en.split()) + _np_len(pp.np)
    return n + (1 + _clause_len(c.comp) if c.comp else 0)


def _pick_verb(
    rng: _Rng, budget: int, depth: int, head: NP | None, role: str
) -> lx.Verb | None:
    clausal = depth < 2 and budget >= 8
    if role:
        verbs = _verbs("itdc" if clausal else "itd", role, head.noun.cls)
        return rng.choice(verbs) if verbs else None
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
    subj = head if role == "subj" else _np(rng, verb.subj, pron=True)
    c = Clause(verb, subj, role=role, fixed=tense != "")
    if verb.obj:
        c.obj = head if role == "obj" else _np(rng, verb.obj)
    if verb.iobj:
        c.iobj, c.to_iobj = _np(rng, verb.iobj), rng.random() < 0.4
    c.perfect = tense == "perf" or (not tense and rng.random() < 0.3)
    if "c" in verb.flags:
        c.comp = _clause(rng, max(3, budget - 4 - rng.randint(0, 2)), depth + 1)
    _fill(rng, c, budget - _clause_len(c), depth)
    return c


def _arguments(c: Clause) -> list[NP]:
    nps = [c.subj if c.role != "subj" else None, c.obj if c.role != "obj" else None]
    nps += [c.iobj] + [pp.np for pp in c.pps]
    return [np for np in nps if np is not None and np.noun is not None]


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
            room -= _add_neg(c)
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
    nps = [np for np in _arguments(c) if len(np.adjs) < 2]
    if not nps:
        return 0
    np = rng.choice(nps)
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
    return len(pp.prep.en.split()) + _np_len(pp.np)


def _add_neg(c: Clause) -> int:
    """Negate; indefinite objects become definite (no 'kein' in this grammar)."""
    if c.neg or c.freq:
        return 0
    c.neg, added = True, 1 if c.perfect else 2
    for np in (c.obj if c.role != "obj" else None, c.iobj):
        if np is not None and np.noun is not None and np.det in (None, lx.A):
            added += np.det is None
            np.det = lx.THE
    return added


def _add_mod(rng: _Rng, c: Clause, room: int) -> int:
    nps = [np for np in _arguments(c)[:2] if np.mod is None and np.rel is None]
    if room < 3 or not nps:
        return 0
    np = rng.choice(nps)
    np.mod = _pp(rng, "com")
    return len(np.mod.prep.en.split()) + _np_len(np.mod.np)


def _rel_heads(c: Clause) -> list[NP]:
    """NPs a relative clause may follow: see :func:`_fill`."""
    heads = [c.subj] if not c.role else []
    tail = [c.iobj if not c.to_iobj else None, c.obj if c.role != "obj" else None]
    tail = [np for np in tail + [c.iobj if c.to_iobj else None] if np is not None]
    tail += [pp.np for pp in c.pps]
    if tail and not (c.time or c.comp):
        heads.append(tail[-1])
    return [np for np in heads if np.noun and not (np.rel or np.mod)]


def _add_rel(rng: _Rng, c: Clause, room: int, depth: int) -> int:
    heads = _rel_heads(c)
    if room < 3 or not heads:
        return 0
    np = rng.choice(heads)
    roles = ["subj", "obj"] if rng.random() < 0.6 else ["obj", "subj"]
    for role in roles:
        np.rel = _clause(rng, room - 1, depth + 1, np, role)
        if np.rel is not None:
            return _clause_len(np.rel)
    return 0


def _unit(rng: _Rng, budget: int) -> Unit:
    if budget >= 9 and rng.random() < 0.5:
        conj = rng.choice(lx.SUBORDINATORS)
        share = max(3, round(budget * rng.uniform(0.3, 0.55)))
        sub = _clause(rng, share - 1, 1, tense=conj.tense)
        main = _clause(rng, budget - share, 0, tense=conj.tense and "pres")
        return Unit(main, sub, conj, rng.random() < 0.4)
    main = _clause(rng, budget, 0)
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
    n: int, rng: _Rng, keep: Callable[[str], bool] | None = None
) -> list[tuple[str, str, str]]:
    """n pairs, each in a length bucket drawn uniformly; redraws until it fits."""
    pairs = []
    for _ in range(n):
        lo, hi = BUCKETS[rng.randint(0, len(BUCKETS) - 1)]
        while True:
            s = _sentence(rng, rng.randint(lo, hi))
            en = _render_en(s)
            text = " ".join(en)
            if lo <= len(en) <= hi and (keep is None or keep(text)):
                break
        de, align = _render_de(s)
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


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
        pairs = _pairs(sizes[split], rng, _keeper(split, train))
        if split == "train":
            train = {e for e, _, _ in pairs}
        for k, ext in enumerate(("en", "de", "align")):
            _write_atomic(
                out_dir / f"{split}.{ext}", "".join(p[k] + "\n" for p in pairs)
            )
        manifest["splits"][split] = _stats(pairs)
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    _write_atomic(out_dir / "MANIFEST.json", text)
    return manifest
