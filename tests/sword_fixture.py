"""A tiny SWORD zText module written from a dict of verses, the same layout
CrossWire's modules have (seq2seq/data/bible/sword.py): for the tests of the
reader and of bad input that should not need the real Bibles."""

from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

from pysword.canons import canons

from seq2seq.data.bible.sword import Ref

CONF = """[{name}]
DataPath=./modules/texts/ztext/{folder}/
ModDrv=zText
SourceType=OSIS
Encoding=UTF-8
CompressType=ZIP
BlockType=BOOK
Versification={versification}
Lang={lang}
Version=1.0
"""


def write_ztext(
    library: Path,
    name: str,
    verses: dict[Ref, str],
    versification: str = "KJV",
    lang: str = "xx",
) -> dict[str, str]:
    """Write module ``name`` into the SWORD folder ``library``: one zlib
    block per book, the index with its heading entries. Returns the paths of
    each text file's sha256 by its name (``nt.bzs`` ...), as
    ``seq2seq.data.bible.modules.Known`` holds them."""
    folder = name.lower()
    data = library / "modules" / "texts" / "ztext" / folder
    data.mkdir(parents=True, exist_ok=True)
    (library / "mods.d").mkdir(parents=True, exist_ok=True)
    conf = CONF.format(name=name, folder=folder, versification=versification, lang=lang)
    (library / "mods.d" / f"{name}.conf").write_text(conf)
    written = {}
    for testament, books in canons[versification.lower()].items():
        blocks, index, text = bytearray(), bytearray(), bytearray()
        index += struct.pack("<IIH", 0, 0, 0) * 2  # module and testament
        for _, osis, _, chapters in books:
            block = bytearray()
            index += struct.pack("<IIH", 0, 0, 0)  # the book's heading
            for chapter, count in enumerate(chapters, 1):
                index += struct.pack("<IIH", 0, 0, 0)  # the chapter's
                for verse in range(1, count + 1):
                    raw = verses.get(Ref(osis, chapter, verse), "").encode()
                    n = len(blocks) // 12
                    index += struct.pack("<IIH", n, len(block), len(raw))
                    block += raw
            packed = zlib.compress(bytes(block))
            blocks += struct.pack("<III", len(text), len(packed), len(block))
            text += packed
        if not any(r.book in {b[1] for b in books} for r in verses):
            continue  # a testament the module does not have
        for ext, content in (("bzs", blocks), ("bzv", index), ("bzz", text)):
            path = data / f"{testament}.{ext}"
            path.write_bytes(bytes(content))
            written[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return written
