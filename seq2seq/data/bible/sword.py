"""SWORD Bible modules in CrossWire's compressed ``zText`` format, read
without the SWORD library.

A module is a ``mods.d/<name>.conf`` (key=value lines) and, per testament
(``ot``, ``nt``), three files: ``.bzs`` the blocks (offset, size, size
uncompressed: 12 bytes each), ``.bzv`` the verses (block, start, length: 10
bytes each, in the order of the module's versification) and ``.bzz`` the
zlib-compressed blocks. The verse index holds one entry per verse and one
per heading: the testament's two, then per book its heading, and per
chapter its heading before its verses. Each block is decompressed once (a
block is a book here), so the whole Bible reads in well under a second.

The versifications (how many verses each chapter has, per scheme) are
pysword's tables (``pysword.canons``, MIT), taken from the SWORD library's.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from seq2seq.errors import UserError, literal

TESTAMENTS = ("ot", "nt")
_BLOCK = struct.Struct("<III")  # offset, size, uncompressed size
_VERSE = struct.Struct("<IIH")  # block, start in the block, length


@dataclass(frozen=True, order=True)
class Ref:
    """A verse: its book's OSIS name, chapter and verse number."""

    book: str
    chapter: int
    verse: int

    def __str__(self) -> str:
        return f"{self.book} {self.chapter}:{self.verse}"

    @classmethod
    def parse(cls, text: str) -> Ref:
        """The reference ``str`` wrote ("1Chr 10:13"), as the .refs files hold."""
        book, _, place = text.rpartition(" ")
        chapter, _, verse = place.partition(":")
        return cls(book, int(chapter), int(verse))


@dataclass(frozen=True)
class Conf:
    """What a module's .conf says, as far as reading it needs."""

    name: str
    path: Path  # the .conf file
    data: Path  # the folder of its ot/nt files
    driver: str
    compress: str
    versification: str
    encoding: str
    lang: str
    version: str
    encrypted: bool


def read_conf(library: Path, name: str) -> Conf:
    """The .conf of module ``name`` in a SWORD library folder (one holding
    ``mods.d/`` and ``modules/``)."""
    path = library / "mods.d" / f"{name}.conf"
    if not path.is_file():  # SWORD's installer writes the name in lower case
        path = path.with_name(f"{name.lower()}.conf")
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as err:
        raise UserError(
            f"no SWORD module {name} in {literal(library)} (cannot read "
            f"{literal(path)}: {err.strerror}); install it there or name the "
            "folder that holds mods.d/ and modules/"
        ) from None
    keys: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            keys.setdefault(key.strip(), value.strip())

    def need(key: str) -> str:
        if key not in keys:
            raise UserError(f"{literal(path)} has no {key}=; the module is damaged")
        return keys[key]

    return Conf(
        name=name,
        path=path,
        data=library / need("DataPath").lstrip("./"),
        driver=need("ModDrv"),
        compress=keys.get("CompressType", "ZIP"),
        versification=keys.get("Versification", "KJV"),
        encoding=keys.get("Encoding", "Latin-1"),
        lang=keys.get("Lang", "?"),
        version=keys.get("Version", "?"),
        encrypted="CipherKey" in keys,
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_files(library: Path, sums: dict[str, str]) -> None:
    """Every file of ``sums`` (path in the library -> sha256) is there and
    matches, or one line naming the first that is not."""
    for rel, want in sums.items():
        path = library / rel
        if not path.is_file():
            raise UserError(
                f"{literal(path)} is missing: the SWORD module is incomplete; "
                "install it again or name another folder"
            )
        if (got := sha256(path)) != want:
            raise UserError(
                f"{literal(path)}: sha256 {got[:16]}..., expected {want[:16]}...: "
                "not the module version this corpus is made from; install that "
                "version or let the command download it"
            )


def chapter_lengths(versification: str) -> dict[str, list[tuple[str, list[int]]]]:
    """Per testament, each book's OSIS name and its chapters' verse counts."""
    from pysword.canons import canons

    scheme = canons.get(versification.lower())
    if scheme is None:
        known = ", ".join(sorted(canons))
        raise UserError(f"unknown versification {versification!r}; SWORD's are {known}")
    return {t: [(osis, list(ch)) for _, osis, _, ch in scheme[t]] for t in TESTAMENTS}


def read_module(conf: Conf) -> dict[Ref, str]:
    """Every verse of the module with text, as its raw markup."""
    if conf.driver.lower() != "ztext" or conf.compress.upper() != "ZIP":
        raise UserError(
            f"{literal(conf.path)}: ModDrv={conf.driver}, CompressType="
            f"{conf.compress}; only zText modules compressed with ZIP are read"
        )
    if conf.encrypted:
        raise UserError(f"{literal(conf.path)}: the module is locked (CipherKey)")
    books = chapter_lengths(conf.versification)
    verses: dict[Ref, str] = {}
    for testament in TESTAMENTS:
        files = [conf.data / f"{testament}.bz{x}" for x in "svz"]
        if not all(f.is_file() for f in files):
            continue  # a module may hold one testament only
        blocks, index, text = (f.read_bytes() for f in files)
        verses |= _testament(conf, books[testament], blocks, index, text)
    return verses


def _testament(
    conf: Conf,
    books: list[tuple[str, list[int]]],
    blocks: bytes,
    index: bytes,
    text: bytes,
) -> dict[Ref, str]:
    cache: dict[int, bytes] = {}

    def block(i: int) -> bytes:
        if i not in cache:
            offset, size, _ = _BLOCK.unpack_from(blocks, i * _BLOCK.size)
            try:
                cache[i] = zlib.decompress(text[offset : offset + size])
            except zlib.error as err:
                raise UserError(
                    f"{literal(conf.data)}: block {i} does not decompress ({err}); "
                    "the module is damaged, install it again"
                ) from None
        return cache[i]

    out: dict[Ref, str] = {}
    entry = 2  # past the module's and the testament's headings
    for book, chapters in books:
        entry += 1  # the book's heading
        for chapter, count in enumerate(chapters, 1):
            entry += 1  # the chapter's heading
            for verse in range(1, count + 1):
                if (entry + 1) * _VERSE.size <= len(index):
                    b, start, length = _VERSE.unpack_from(index, entry * _VERSE.size)
                    if length:
                        raw = block(b)[start : start + length]
                        out[Ref(book, chapter, verse)] = raw.decode(
                            conf.encoding.replace("Latin-1", "latin-1"), "replace"
                        )
                entry += 1
    return out
