"""Sentence trees of the synthetic English-German corpus and their rendering.

The tree nodes (noun phrases, prepositional phrases, clauses, units joined by
coordinators) are sampled by :mod:`seq2seq.data.synth.generate`. A tree is
rendered in English first, which numbers the English words (the indices are
stored on the nodes), then in German with agreement and inflection, each
German word carrying the indices of the English words it translates. The
queries at the end (English word counts, attachment sites, negation) serve
the sampler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from seq2seq.data.synth import lexicon as lx

_GENDER = {"m": 0, "f": 1, "n": 2}
Tok = tuple[str, list[int]]  # a German word and the English indices it links to


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
        noun = head.noun if head is not None else None
        who = c.role == "subj" and noun is not None and noun.cls == "P"
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


def render_en(s: Sentence) -> list[str]:
    en: list[str] = []
    s.i_coords = []
    for k, u in enumerate(s.units):
        if k:
            s.i_coords.append(_emit(en, s.coords[k - 1].en))
        if u.sub and u.conj and u.front:
            u.i_conj = _emit(en, u.conj.en)
            _clause_en(u.sub, en)
            en[-1] += ","
        _clause_en(u.main, en)
        if u.sub and u.conj and not u.front:
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
    assert noun is not None  # not a pronoun (above)
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
        assert head is not None and head.noun is not None  # rel_heads's choice
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


def render_de(s: Sentence) -> tuple[list[str], str]:
    """German words and the Pharaoh alignment."""
    out: list[Tok] = []
    for k, u in enumerate(s.units):
        if k:
            if s.coords[k - 1].en == "but":
                _comma(out)
            out.append((s.coords[k - 1].de, s.i_coords[k - 1]))
        if u.sub and u.conj and u.front:
            out.append((u.conj.de, u.i_conj))
            _clause_de(u.sub, "sub", out)
            _comma(out)
        _clause_de(u.main, "inv" if u.sub and u.front else "main", out)
        if u.sub and u.conj and not u.front:
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
    en = render_en(s)
    de, align = render_de(s)
    return " ".join(en), " ".join(de), align


# ----------------------------------------------------------------- queries
def np_len(np: NP | None) -> int:
    """Exact English word count of a noun phrase (0 for None)."""
    if np is None:
        return 0
    if np.pron:
        return 1
    assert np.noun is not None  # not a pronoun (above)
    n = (np.det is not None) + len(np.adjs) + np.noun.en.count(" ") + 1
    if np.mod:
        n += len(np.mod.prep.en.split()) + np_len(np.mod.np)
    return n + (clause_len(np.rel) if np.rel else 0)


def clause_len(c: Clause) -> int:
    """Exact English word count (a relative clause's head not included)."""
    v = c.verb
    n = (
        (c.role != "")
        + (c.freq is not None)
        + (c.time.en.count(" ") + 1 if c.time else 0)
    )
    n += np_len(c.subj) if c.role != "subj" else 0
    n += np_len(c.obj) if c.role != "obj" else 0
    n += np_len(c.iobj) + c.to_iobj
    form = v.en_part if c.perfect else v.en_pl if c.neg else v.en
    n += c.perfect + 2 * c.neg - (c.perfect and c.neg) + form.count(" ") + 1
    for pp in c.pps:
        n += len(pp.prep.en.split()) + np_len(pp.np)
    return n + (1 + clause_len(c.comp) if c.comp else 0)


def arguments(c: Clause) -> list[NP]:
    """The noun phrases of a clause that modifiers may attach to."""
    nps = [c.subj if c.role != "subj" else None, c.obj if c.role != "obj" else None]
    nps += [c.iobj] + [pp.np for pp in c.pps]
    return [np for np in nps if np is not None and np.noun is not None]


def rel_heads(c: Clause) -> list[NP]:
    """NPs a relative clause may follow: see
    :func:`seq2seq.data.synth.generate._fill`."""
    heads = [c.subj] if not c.role else []
    slots = [c.iobj if not c.to_iobj else None, c.obj if c.role != "obj" else None]
    tail = [np for np in [*slots, c.iobj if c.to_iobj else None] if np is not None]
    tail += [pp.np for pp in c.pps]
    if tail and not (c.time or c.comp):
        heads.append(tail[-1])
    return [np for np in heads if np.noun and not (np.rel or np.mod)]


def negate(c: Clause) -> int:
    """Negate; indefinite objects become definite (no 'kein' in this grammar).

    Returns the number of English words added (0 if it cannot be negated)."""
    if c.neg or c.freq:
        return 0
    c.neg, added = True, 1 if c.perfect else 2
    for np in (c.obj if c.role != "obj" else None, c.iobj):
        if np is not None and np.noun is not None and np.det in (None, lx.A):
            added += np.det is None
            np.det = lx.THE
    return added
