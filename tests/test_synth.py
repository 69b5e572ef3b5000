"""The synthetic English-to-German corpus: determinism, files, lengths, grammar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import pytest

from seq2seq import files
from seq2seq.data.synth import generate as synth
from seq2seq.data.synth import lexicon as lx
from seq2seq.data.synth.tree import NP, PP, Clause, Sentence, Unit

T = TypeVar("T")


def _links(align: str) -> list[tuple[int, int]]:
    return [tuple(map(int, p.split("-"))) for p in align.split()]


def _entry(table: tuple[T, ...], en: str) -> T:
    return next(e for e in table if e.en == en)


def _np(
    noun: str,
    det: lx.Det | None = lx.THE,
    plural: bool = False,
    adjs: tuple[str, ...] = (),
) -> NP:
    adj = tuple(_entry(lx.ADJECTIVES, a) for a in adjs)
    return NP(_entry(lx.NOUNS, noun), plural, det, adj)


def _render(*units: Unit) -> tuple[str, str, str]:
    return synth.render(Sentence(list(units), [lx.COORDINATORS[0]] * (len(units) - 1)))


def _clause(verb: str, subj: NP, obj: NP | None = None, **kw: object) -> Clause:
    return Clause(_entry(lx.VERBS, verb), subj, obj, **kw)


@pytest.fixture(scope="module")
def sample() -> list[tuple[str, str, str]]:
    return synth.generate_pairs(2000, seed=3)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("synth_ende")
    manifest = synth.write_corpus(out)  # default sizes: 31500 pairs
    return out, manifest


# ------------------------------------------------------------ determinism
def test_same_seed_same_pairs_and_other_seed_differs(sample: list) -> None:
    assert synth.generate_pairs(300, seed=3) == sample[:300]
    other = synth.generate_pairs(300, seed=4)
    assert sum(a != b for a, b in zip(other, sample[:300], strict=True)) > 250


def test_write_corpus_is_byte_identical_and_splits_independent(tmp_path: Path) -> None:
    sizes = {"train": 300, "val": 40, "test": 60}
    synth.write_corpus(tmp_path / "a", seed=5, sizes=sizes)
    synth.write_corpus(tmp_path / "b", seed=5, sizes=sizes)
    synth.write_corpus(tmp_path / "c", seed=5, sizes={**sizes, "train": 500})
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name
        if not f.name.startswith("train") and f.name != "MANIFEST.json":
            assert f.read_bytes() == (tmp_path / "c" / f.name).read_bytes(), f.name
    assert (tmp_path / "a/train.en").read_bytes() != (
        tmp_path / "c/train.en"
    ).read_bytes()


# ------------------------------------------------------------ the corpus files
def test_write_corpus_files_and_manifest(corpus: tuple[Path, dict]) -> None:
    out, manifest = corpus
    names = {f"{s}.{e}" for s in synth.SPLITS for e in ("en", "de", "align")}
    assert {p.name for p in out.iterdir()} == names | {"MANIFEST.json"}
    assert json.loads((out / "MANIFEST.json").read_text("utf-8")) == manifest
    assert manifest["seed"] == 1 and manifest["sizes"] == synth.SPLITS
    for split, n in synth.SPLITS.items():
        texts = [
            (out / f"{split}.{e}").read_text("utf-8") for e in ("en", "de", "align")
        ]
        assert all(t.endswith("\n") and "\r" not in t for t in texts)
        assert [t.count("\n") for t in texts] == [n, n, n]
        stats = manifest["splits"][split]
        lens = [len(line.split()) for line in texts[0].splitlines()]
        assert stats["lines"] == n and stats["en_len_max"] == max(lens) <= 60
        assert stats["en_len_min"] == min(lens) >= 3


def test_train_balances_words_and_val_test_balance_sentences(
    corpus: tuple[Path, dict],
) -> None:
    """Train: about as many words in every length bucket (so half its pairs are
    short); val and test: about as many sentences in every bucket."""
    out, _ = corpus
    for split, per in (("train", "words"), ("val", "sentences"), ("test", "sentences")):
        lens = [
            len(x.split())
            for x in (out / f"{split}.en").read_text("utf-8").splitlines()
        ]
        totals = [
            sum(n if per == "words" else 1 for n in lens if lo <= n <= hi)
            for lo, hi in synth.BUCKETS
        ]
        mean = sum(totals) / len(totals)
        assert all(0.8 * mean <= t <= 1.2 * mean for t in totals), (split, totals)
    short = sum(len(x.split()) <= 10 for x in (out / "train.en").open(encoding="utf-8"))
    assert short > 0.45 * synth.SPLITS["train"]


def test_val_and_test_sentences_never_occur_in_train(
    corpus: tuple[Path, dict],
) -> None:
    out, _ = corpus
    train = set((out / "train.en").read_text("utf-8").splitlines())
    for split in ("val", "test"):
        held = (out / f"{split}.en").read_text("utf-8").splitlines()
        assert not train & set(held), split
        assert sum(len(s.split()) <= 10 for s in held) > 0.1 * len(held)


def test_interrupted_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = {"train": 5, "val": 2, "test": 2}
    synth.write_corpus(tmp_path, sizes=sizes)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fail(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", fail)  # seq2seq.files writes it
    with pytest.raises(KeyboardInterrupt):
        synth.write_corpus(tmp_path, seed=2, sizes=sizes)
    # old files stay whole, no temporary is left, no manifest claims completeness
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == {k: v for k, v in before.items() if k != "MANIFEST.json"}


def test_bad_sizes_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dev"):
        synth.write_corpus(tmp_path, sizes={"dev": 10})
    with pytest.raises(ValueError):
        synth.write_corpus(tmp_path, sizes={"val": -1})


# ------------------------------------------------------------ lengths, alignment
def test_lengths_spread_over_five_buckets(sample: list) -> None:
    lens = [len(en.split()) for en, _, _ in sample]
    assert min(lens) >= 3 and max(lens) <= 60
    for lo, hi in synth.BUCKETS:
        share = sum(lo <= n <= hi for n in lens) / len(lens)
        assert share >= 0.10, (lo, hi, share)


def test_alignments_are_in_range_sorted_and_cover_every_word(sample: list) -> None:
    for en, de, align in sample:
        links = _links(align)
        assert links == sorted(set(links)), align
        n_en, n_de = len(en.split()), len(de.split())
        assert {i for i, _ in links} == set(range(n_en)), (en, align)
        assert {j for _, j in links} == set(range(n_de)), (de, align)


def test_some_alignments_cross(sample: list) -> None:
    def crosses(links: list[tuple[int, int]]) -> bool:
        return any(i1 < i2 and j1 > j2 for i1, j1 in links for i2, j2 in links)

    share = sum(crosses(_links(a)) for _, _, a in sample[:500]) / 500
    assert share > 0.3


def test_surface_form(sample: list) -> None:
    subordinators = {c.en for c in lx.SUBORDINATORS}
    for en, de, _ in sample:
        for text in (en, de):
            assert text[0].isupper() and text.endswith(".") and text.count(".") == 1
            assert " ," not in text and ",," not in text and ",." not in text
        # English has a comma only after a fronted subordinate clause
        words = en.lower().split()
        assert en.count(",") <= sum(w in subordinators for w in words), en
        nouns = {n.de for n in lx.NOUNS} | {n.de_pl for n in lx.NOUNS}
        assert all(w[0].isupper() for w in de.split() if w.rstrip(",.") in nouns)


# ------------------------------------------------------------ grammar
def test_weil_clause_is_verb_final_with_separable_prefix_rejoined() -> None:
    sub = _clause("picks up", _np("man"), _np("book"))
    main = _clause("sleeps", _np("dog"))
    en, de, align = _render(Unit(main, sub, _entry(lx.SUBORDINATORS, "because")))
    assert en == "The dog sleeps because the man picks up the book."
    assert de == "Der Hund schläft, weil der Mann das Buch aufhebt."
    assert align == "0-0 1-1 2-2 3-3 4-4 5-5 6-8 7-8 8-6 9-7"
    sub.perfect = True
    _, de, _ = _render(Unit(main, sub, _entry(lx.SUBORDINATORS, "because"), True))
    assert de == "Weil der Mann das Buch aufgehoben hat, schläft der Hund."


def test_weil_clauses_in_output_end_with_a_finite_verb(sample: list) -> None:
    finite = {w for v in lx.VERBS for w in (v.de, v.de_pl) if " " not in w}
    finite |= {"".join(reversed(w.split())) for v in lx.VERBS for w in (v.de, v.de_pl)}
    finite |= {w for forms in lx.AUX.values() for w in forms}
    relatives = {w for forms in lx.RELATIVE.values() for w in forms}
    seen = 0
    for _, de, _ in sample:
        words = de.split() + ["."]
        for k, w in enumerate(words):
            if w.lower() != "weil":
                continue
            end = next(m for m in range(k, len(words)) if words[m][-1] in ",.")
            if words[end + 1] not in relatives:  # else a relative clause follows
                seen += 1
                assert words[end].rstrip(",.") in finite, de
    assert seen > 20


def test_main_clause_is_verb_second_and_perfect_puts_participle_last() -> None:
    c = _clause("sees", _np("man"), _np("dog"), time=_entry(lx.ADVERBS, "today"))
    c.front = "time"
    assert _render(Unit(c))[:2] == (
        "Today the man sees the dog.",
        "Heute sieht der Mann den Hund.",
    )
    c.front, c.perfect, c.neg = "", True, True
    en, de, align = _render(Unit(c))
    assert en == "The man has not seen the dog today."
    assert de == "Der Mann hat heute den Hund nicht gesehen."
    assert align == "0-0 1-1 2-2 3-6 4-7 5-4 6-5 7-3"


def test_do_support_and_separable_prefix_alignment() -> None:
    c = _clause("picks up", _np("woman"), _np("key"), neg=True)
    en, de, align = _render(Unit(c))
    assert en == "The woman does not pick up the key."
    assert de == "Die Frau hebt den Schlüssel nicht auf."
    # does+pick -> hebt, not -> nicht, up -> auf
    assert align == "0-0 1-1 2-2 3-5 4-2 5-6 6-3 7-4"


def test_relative_pronoun_agrees_with_its_antecedent() -> None:
    man, dog, woman = _np("man"), _np("dog"), _np("woman")
    man.rel = _clause("sees", man, _np("dog"), role="subj")
    dog.rel = _clause("sees", _np("woman"), dog, role="obj")
    woman.rel = _clause("follows", _np("dog", plural=True), woman, role="obj")
    main = _clause("likes", man, dog)
    _, de, _ = _render(Unit(main), Unit(_clause("sleeps", woman)))
    assert de == (
        "Der Mann, der den Hund sieht, mag den Hund, den die Frau sieht, "
        "und die Frau, der die Hunde folgen, schläft."
    )


def test_relative_pronouns_in_output_agree_with_the_noun_before_them(
    sample: list,
) -> None:
    genders: dict[str, set[int]] = {}
    for n in lx.NOUNS:
        genders.setdefault(n.de, set()).add("mfn".index(n.gender))
        for form in (n.de_pl, n.de_pl + "n"):
            genders.setdefault(form, set()).add(3)
    relatives = {w for forms in lx.RELATIVE.values() for w in forms}
    checked = 0
    for _, de, _ in sample:
        words = de.split()
        for w, nxt in zip(words, words[1:], strict=False):
            if w.endswith(",") and w[:-1] in genders and nxt in relatives:
                ok = {lx.RELATIVE[c][g] for c in lx.RELATIVE for g in genders[w[:-1]]}
                assert nxt in ok, de
                checked += 1
    assert checked > 100


def test_contraction_is_one_word_for_two(sample: list) -> None:
    c = _clause("goes", _np("child"))
    c.pps = (PP(_entry(lx.PREPS, "to"), _np("school")),)
    assert _render(Unit(c)) == (
        "The child goes to the school.",
        "Das Kind geht zur Schule.",
        "0-0 1-1 2-2 3-3 4-3 5-4",
    )
    found = 0
    for en, de, align in sample:
        words, links = en.split(), _links(align)
        for j, w in enumerate(de.split()):
            if w.rstrip(",.") in {"zum", "zur", "im", "ins", "vom", "beim"}:
                linked = [words[i] for i, k in links if k == j]
                assert len(linked) == 2 and linked[1] == "the", (en, de)
                found += 1
    assert found > 50


def test_compound_is_aligned_to_both_english_words(sample: list) -> None:
    compounds: dict[str, set[str]] = {}
    for n in lx.NOUNS:
        if " " in n.en:
            for de, en in ((n.de, n.en), (n.de_pl, n.en_pl), (n.de_pl + "n", n.en_pl)):
                compounds.setdefault(de, set()).add(en)
    found = 0
    for en, de, align in sample:
        words, links = en.split(), _links(align)
        for j, w in enumerate(de.split()):
            if w.rstrip(",.") in compounds:
                linked = " ".join(words[i] for i, k in links if k == j).rstrip(",.")
                # a dative "to" without an article also links to the noun
                linked = linked.removeprefix("to ")
                assert linked in compounds[w.rstrip(",.")], (en, de)
                found += 1
    assert found > 50


def test_adjective_endings_and_dative_plural() -> None:
    big_dogs = _np("dog", None, True, ("big",))
    c = _clause(
        "gives", _np("man", lx.A, adjs=("old",)), _np("ball", lx.A, adjs=("red",))
    )
    c.iobj, c.to_iobj = big_dogs, True
    en, de, align = _render(Unit(c))
    assert en == "An old man gives a red ball to big dogs."
    assert de == "Ein alter Mann gibt großen Hunden einen roten Ball."
    assert {"7-5", "8-4", "9-5"} <= set(align.split())  # "to" -> Hunden
