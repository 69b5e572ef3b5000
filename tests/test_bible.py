"""seq2seq.data.bible: the SWORD reader, OSIS markup to words, verse pairing,
the leak-free split, the download, and `seq2seq prepare bible`'s bad input.

The real modules (``../shared/data/sword`` or ``$SEQ2SEQ_SWORD_MIRROR``, as
CI has them) are read where present; everything else runs on a tiny module
that tests/sword_fixture.py writes."""

from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, assert_refused
from sword_fixture import write_ztext

from seq2seq.cli import main
from seq2seq.data.bible import modules, split
from seq2seq.data.bible.modules import MIRROR_ENV, Known
from seq2seq.data.bible.osis import plain
from seq2seq.data.bible.pairs import Pair, pair_verses
from seq2seq.data.bible.prepare import MANIFEST, prepare_bible
from seq2seq.data.bible.sword import Ref, read_conf, read_module
from seq2seq.errors import UserError


def _sword() -> Path | None:
    env = os.environ.get(MIRROR_ENV)
    path = Path(env) if env else REPO.parent / "shared" / "data" / "sword"
    return path if (path / "mods.d").is_dir() else None


SWORD = _sword()
needs_sword = pytest.mark.skipif(
    SWORD is None, reason=f"no SWORD modules: set {MIRROR_ENV} or ../shared"
)


@pytest.fixture(autouse=True)
def _own_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test names its modules' folder: no environment, no Debian path."""
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    monkeypatch.setattr(modules, "DEBIAN", tmp_path / "no-debian")


# -- OSIS markup to plain words ---------------------------------------------


@pytest.mark.parametrize(
    ("markup", "words"),
    [
        # a note between two words, no space around it (WEB Gen 1:1)
        (
            '<w lemma="H0430">God</w><note placement="foot"><reference>1:1 '
            "</reference>The Hebrew word rendered “God” is Elohim.</note>"
            '<w lemma="H1254">created</w> the heavens.',
            "God created the heavens.",
        ),
        # the translator's added word between two words (RV1909 Gen 2:12)
        (
            '<w lemma="H8033">hay allí</w><transChange type="added">también'
            '</transChange><w lemma="H0916">bdelio</w>',
            "hay allí también bdelio",
        ),
        # added letters inside a word stay in it (RV1909 1Chr 10:13)
        (
            '<w lemma="H0178">al pythón</w>, preguntándo<transChange type="added">'
            "le</transChange>, <w>y</w>",
            "al pythón, preguntándole, y",
        ),
        # a psalm's canonical title is text of its verse; poetry lines split
        (
            '<title canonical="true" type="psalm">A Psalm by David.</title>'
            '<lg sID="g1"/><l sID="g2"/>Yahweh, how<l eID="g2"/><l sID="g3"/>'
            'many<l eID="g3"/>',
            "A Psalm by David. Yahweh, how many",
        ),
        # a section heading and a glossary are not the verse's text
        (
            '<title type="x-gen">The new Jerusalem</title><w>Amen</w>.'
            '<div type="glossary" sID="gl1"/>Amen: so be it<div eID="gl1" '
            'type="glossary"/>',
            "Amen.",
        ),
        # punctuation keeps to its word; an opening quote to the next word
        (
            "<w>dijo</w>: “<w>Sea</w> <w>la</w> <w>luz</w>”. ¡<w>OH</w>",
            "dijo: “Sea la luz”. ¡OH",
        ),
    ],
    ids=["note", "added-word", "added-letters", "psalm-title", "heading", "quotes"],
)
def test_plain_keeps_words_apart_and_drops_what_is_not_text(
    markup: str, words: str
) -> None:
    assert plain(markup) == words


@pytest.fixture(scope="module")
def real_markup() -> dict[str, dict[Ref, str]]:
    assert SWORD is not None
    return {
        name: read_module(read_conf(SWORD, name))
        for name in ("spaRV1909eb", "engWEB2015eb")
    }


@needs_sword
def test_every_marked_word_stays_a_word_of_its_own(
    real_markup: dict[str, dict[Ref, str]],
) -> None:
    """The class of the join bug: in every verse of both Bibles, the first and
    last word of each <w> element are whole words of the plain text (removed
    markup next to it never glues it to a neighbour)."""
    element = re.compile(r"<w\b[^>]*>([^<]+)</w>(?!<transChange)")
    joined = []
    for verses in real_markup.values():
        for ref, markup in verses.items():
            if "glossary" in markup or "<note" in markup.split("</w>")[-1]:
                continue  # text after the last word may be removed whole
            words = set(re.findall(r"\w+", plain(markup)))
            for text in element.findall(markup):
                edge = re.findall(r"\w+", text)
                if edge and not {edge[0], edge[-1]} <= words:
                    joined.append((str(ref), text))
    assert not joined, joined[:5]


@needs_sword
def test_the_real_modules_read(real_markup: dict[str, dict[Ref, str]]) -> None:
    es, en = real_markup["spaRV1909eb"], real_markup["engWEB2015eb"]
    assert plain(es[Ref("Gen", 1, 1)]) == (
        "EN el principio crió Dios los cielos y la tierra."
    )
    assert plain(en[Ref("Rev", 22, 21)]) == (
        "The grace of the Lord Jesus Christ be with all the saints. Amen."
    )
    with_text = {
        name: sum(bool(plain(m)) for m in verses.values())
        for name, verses in real_markup.items()
    }
    assert with_text == {"spaRV1909eb": 31084, "engWEB2015eb": 37457}


# -- the reader, on a module written here ------------------------------------


def test_the_reader_reads_back_what_was_written(tmp_path: Path) -> None:
    verses = {
        Ref("Matt", 1, 1): "<w>uno</w>",
        Ref("Matt", 28, 20): "último de Mateo",
        Ref("Mark", 1, 1): "Marcos",
        Ref("Rev", 22, 21): "<w>fin</w>.",
    }
    write_ztext(tmp_path, "tinyNT", verses)
    assert read_module(read_conf(tmp_path, "tinyNT")) == verses


# -- pairing ------------------------------------------------------------------


def _text(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


def test_pairing_counts_what_it_leaves_out() -> None:
    # lengths that vary from verse to verse, as a real chapter's do
    lengths = {v: 6 + (v * 13) % 29 for v in range(1, 21)}
    src = {Ref("Matt", 1, v): _text(n) for v, n in lengths.items()}
    tgt = {Ref("Matt", 1, v): _text(n + n // 8) for v, n in lengths.items()}
    src[Ref("Matt", 1, 3)] = ""  # an empty verse
    del tgt[Ref("Matt", 1, 4)]  # a verse on one side only
    tgt[Ref("Matt", 1, 5)] = _text(150)  # a verse merged with its neighbours
    kept, dropped = pair_verses(src, tgt)
    assert [p.ref.verse for p in kept] == [1, 2, *range(6, 21)]
    assert (dropped.one_side, dropped.out_of_proportion) == (2, 1)
    assert all(p.src and p.tgt for p in kept)


def test_a_chapter_numbered_one_verse_off_is_left_out() -> None:
    """Verse v of one side is verse v + 1 of the other: lengths that do not
    fit as numbered but fit shifted."""
    lengths = [5, 30, 8, 25, 6, 40, 9, 22, 7, 35, 10, 28]
    src = {Ref("Num", 13, v): _text(n) for v, n in enumerate(lengths, 1)}
    tgt = {Ref("Num", 13, v + 1): _text(n) for v, n in enumerate(lengths, 1)}
    steady = {Ref("Num", 14, v): _text(12) for v in range(1, 13)}
    kept, dropped = pair_verses(src | steady, tgt | steady)
    assert dropped.chapters == ["Num 13"]
    assert {p.ref.chapter for p in kept} == {14}


# -- the split ----------------------------------------------------------------


def _corpus(chapters: int = 60) -> list[Pair]:
    """Chapters of verses of every length, each verse's words its own."""
    pairs = []
    for c in range(1, chapters + 1):
        for v in range(1, 13):
            n = 5 + (c * 7 + v * 11) % 60
            words = " ".join(f"c{c}v{v}w{i}" for i in range(n))
            pairs.append(Pair(Ref("Gen", c, v), words, words.upper()))
    return pairs


def test_the_split_is_whole_chapters_deterministic_and_drops_near_copies() -> None:
    pairs = _corpus()
    first = split.split_pairs(pairs, seed=3)
    again = split.split_pairs(pairs, seed=3)
    assert first == again
    assert split.split_pairs(pairs, seed=4).test != first.test

    # plant a near copy of a test verse in a training chapter
    victim = first.test[0]
    host = next(i for i, p in enumerate(pairs) if p in first.train)
    planted = pairs[:]
    planted[host] = Pair(planted[host].ref, victim.src + " x", planted[host].tgt)
    second = split.split_pairs(planted, seed=3)
    assert victim not in second.test
    assert second.near_copies["test"] == 1

    chapter = {(p.ref.book, p.ref.chapter) for p in first.train}
    for held in (first.val, first.test):
        assert not chapter & {(p.ref.book, p.ref.chapter) for p in held}
    assert len(first.train) + len(first.val) + len(first.test) == len(pairs)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert SWORD is not None
    out = tmp_path_factory.mktemp("bible") / "bible_esen"
    os.environ.pop(MIRROR_ENV, None)
    prepare_bible("es", "en", out, mirror=SWORD, log=lambda _: None)
    return out


@needs_sword
def test_the_real_split_is_leak_free_and_stratified(prepared: Path) -> None:
    """No test verse has a near copy (split.OVERLAP of its 4-grams) in a
    training verse, and every length bucket holds TEST_PER_BUCKET verses."""
    sides = {}
    for name in ("train", "test"):
        refs = (prepared / f"{name}.refs").read_text().splitlines()
        src = (prepared / f"{name}.es").read_text().splitlines()
        tgt = (prepared / f"{name}.en").read_text().splitlines()
        assert len(refs) == len(src) == len(tgt)
        sides[name] = [
            Pair(Ref.parse(r), s, t) for r, s, t in zip(refs, src, tgt, strict=True)
        ]
    train, test = sides["train"], sides["test"]
    finder = split.CopyFinder(train + test)
    train_chapters = {(p.ref.book, p.ref.chapter) for p in train}
    assert not train_chapters & {(p.ref.book, p.ref.chapter) for p in test}
    leaks = [
        p for i, p in enumerate(test, len(train)) if finder.copied(i, train_chapters)
    ]
    assert not leaks, leaks[:3]
    counts = split.counts_by_bucket(test)
    assert min(counts) >= split.TEST_PER_BUCKET, counts
    manifest = json.loads((prepared / MANIFEST).read_text())
    assert manifest["by_length"]["test"] == counts
    assert manifest["lines"]["train"] == len(train)


def test_the_configs_score_by_the_buckets_the_test_set_is_stratified_by() -> None:
    """split.EDGES (prepare time, no config) and the corpus configs'
    eval.buckets are one set of buckets: each 150+ verses strong."""
    from seq2seq.config import load_config

    for path in sorted((REPO / "configs/bible_esen").glob("*.yaml")):
        if path.name != "base.yaml":
            assert load_config(path).eval.buckets == split.EDGES, path.name


# -- where the modules come from, and bad input -------------------------------


def _fake_known(monkeypatch: pytest.MonkeyPatch, library: Path) -> None:
    """es and en as two tiny modules of ``library``, with their own sums."""
    for lang, word in (("es", "palabra"), ("en", "word")):
        name = f"tiny{lang.upper()}"
        verses = {
            Ref("Matt", c, v): " ".join(
                f"{word}{c}_{v}_{i}" for i in range(3 + (c * 5 + v * 3) % 9)
            )
            for c in range(1, 29)
            for v in range(1, 6)
        }
        verses[Ref("Matt", 2, 2)] = "<note>only a note</note>"  # empty as text
        sums = write_ztext(library, name, verses, lang=lang)
        monkeypatch.setitem(modules.MODULES, lang, Known(name, name, "pd", sums))


def test_prepare_writes_the_corpus_and_counts_empty_verses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_known(monkeypatch, tmp_path / "sword")
    out = tmp_path / "out"
    argv = ["prepare", "bible", "--mirror", str(tmp_path / "sword"), "--out", str(out)]
    assert main(argv) == 0
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["dropped"]["one_side"] == 1  # the verse of a note only
    lines = sum(len((out / f"{s}.es").read_text().splitlines()) for s in split_names())
    assert lines == manifest["paired"] == 28 * 5 - 1
    for name in split_names():
        assert "" not in (out / f"{name}.en").read_text().splitlines()


def test_a_write_that_fails_midway_leaves_the_old_corpus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A full disk on the fifth split file: every old file and the old
    manifest as they were, no staged file left behind, exit 2."""
    from seq2seq.data.bible import prepare

    _fake_known(monkeypatch, tmp_path / "sword")
    out = tmp_path / "out"
    argv = ["prepare", "bible", "--mirror", str(tmp_path / "sword"), "--out", str(out)]
    assert main(argv) == 0
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    calls = []

    def full_disk(path: Path, data: str) -> None:
        calls.append(path)
        if len(calls) == 5:
            raise UserError(f"cannot write {path}: No space left on device")
        real(path, data)

    real = prepare.atomic_write
    monkeypatch.setattr(prepare, "atomic_write", full_disk)
    assert main([*argv, "--seed", "2"]) == 2
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before
    assert len(calls) == 5


def split_names() -> tuple[str, ...]:
    return ("train", "val", "test")


def _bad_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> Path:
    lib = tmp_path / "sword"
    _fake_known(monkeypatch, lib)
    data = lib / "modules" / "texts" / "ztext" / "tinyen"
    if how == "missing module":
        (lib / "mods.d" / "tinyEN.conf").unlink()
    elif how == "missing file":
        (data / "nt.bzz").unlink()
    elif how == "wrong sha256":
        raw = bytearray((data / "nt.bzv").read_bytes())
        raw[-1] ^= 1
        (data / "nt.bzv").write_bytes(bytes(raw))
    elif how == "all verses empty":
        sums = write_ztext(lib, "tinyEN", {Ref("Matt", 1, 1): "<note>n</note>"})
        monkeypatch.setitem(modules.MODULES, "en", Known("tinyEN", "", "", sums))
    return lib


@pytest.mark.parametrize(
    ("how", "needle"),
    [
        ("missing module", "no SWORD module tinyEN in"),
        ("missing file", "nt.bzz is missing"),
        ("wrong sha256", "nt.bzv: sha256"),
        ("all verses empty", "share no verse"),
    ],
)
def test_bad_modules_are_refused_in_one_line(
    how: str, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    lib = _bad_mirror(tmp_path, monkeypatch, how)
    out = tmp_path / "out"
    argv = ["prepare", "bible", "--mirror", str(lib), "--out", str(out)]
    assert_refused(argv, needle, tmp_path, capsys)
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--src", "fr"], "no Bible module for the source language 'fr'"),
        (["--tgt", "es"], "--src and --tgt are both 'es'"),
        (["--mirror", "nowhere"], "SWORD mirror nowhere is not a folder"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(
    args: list[str],
    needle: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sword").mkdir()
    args = args if "--mirror" in args else [*args, "--mirror", "sword"]
    assert_refused(
        ["prepare", "bible", *args, "--out", "out"], needle, tmp_path, capsys
    )
    assert not (tmp_path / "out").exists()


def _zip(library: Path, name: str, dest: Path) -> None:
    """CrossWire's layout: the .conf and the text files under their paths."""
    with zipfile.ZipFile(dest / f"{name}.zip", "w") as z:
        for path in sorted(library.rglob("*")):
            if path.is_file() and name.lower() in str(path).lower():
                z.write(path, path.relative_to(library))


def test_download_checks_before_it_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zip whose text is not the version known is refused, nothing of it
    kept; the right one is unpacked into the cache and read."""
    lib = tmp_path / "built"
    _fake_known(monkeypatch, lib)
    site = tmp_path / "site"
    site.mkdir()
    for name in ("tinyES", "tinyEN"):
        _zip(lib, name, site)
    cache = tmp_path / "cache"
    monkeypatch.setenv("SEQ2SEQ_CACHE_DIR", str(cache))
    url = site.as_uri()
    good = modules.MODULES["en"]
    monkeypatch.setitem(
        modules.MODULES,
        "en",
        Known(good.name, "", "", {**good.sums, "nt.bzz": "0" * 64}),
    )
    with pytest.raises(UserError, match="sha256"):
        prepare_bible("es", "en", tmp_path / "out", base_url=url, log=lambda _: None)
    assert not (cache / "sword" / "mods.d" / "tinyEN.conf").exists()
    assert not list((cache / "sword").glob(".download-*"))
    monkeypatch.setitem(modules.MODULES, "en", good)
    manifest = prepare_bible("es", "en", tmp_path / "out", base_url=url, log=print)
    assert manifest.paired == 28 * 5 - 1
    assert (cache / "sword" / "mods.d" / "tinyEN.conf").is_file()
    shutil.rmtree(site)  # the second time, the cache answers
    assert prepare_bible("es", "en", tmp_path / "again", base_url=url) == manifest
