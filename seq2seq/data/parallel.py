"""Parallel text: reading and validating a split's files.

Any parallel text works: a source file and a target file (plain or ``.gz``),
one sentence per line, line i of one the translation of line i of the other.
Problems a user can fix raise :class:`UserError` naming the file and line.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seq2seq.config import SplitFiles
from seq2seq.errors import UserError

Alignment = list[tuple[int, int]]  # (source word, target word) links

# A line is one sentence. The longest Multi30k line has ~300 characters; one of
# 10 000 is a file that lost its line breaks, and would become a single batch
# (or a decoding) tens of thousands of tokens long.
MAX_LINE_CHARS = 10_000


def read_lines(path: str | Path) -> list[str]:
    """All lines of a UTF-8 text file (``.gz`` too), CRLF tolerated."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    lines: list[str] = []
    try:
        with opener(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError:
                    raise UserError(
                        f"{path}:{number}: not valid UTF-8; re-encode the file as UTF-8"
                    ) from None
                if len(line) > MAX_LINE_CHARS:
                    raise UserError(
                        f"{path}:{number}: {len(line):,} characters, more than one "
                        f"sentence can be (at most {MAX_LINE_CHARS:,}); split the "
                        "line into sentences or remove it"
                    )
                lines.append(line)
    except (OSError, EOFError) as err:
        raise UserError(f"{path}: cannot read ({err})") from None
    return lines


def read_alignments(path: str | Path) -> list[Alignment]:
    """Pharaoh alignments (``0-0 1-2 ...``), one sentence per line."""
    links = []
    for number, line in enumerate(read_lines(path), start=1):
        try:
            pairs = [tuple(map(int, tok.split("-"))) for tok in line.split()]
            links.append([(i, j) for i, j in pairs])
        except ValueError:
            raise UserError(
                f"{path}:{number}: not a Pharaoh alignment (expected 'i-j i-j ...')"
            ) from None
    return links


def check_alignments(
    align: list[Alignment], src: list[str], tgt: list[str], path: str | Path
) -> None:
    """Every link i-j must name a source word i and a target word j (from 0)."""
    for number, (links, s, t) in enumerate(zip(align, src, tgt, strict=True), start=1):
        n_src, n_tgt = len(s.split()), len(t.split())
        for i, j in links:
            if not (i < n_src and j < n_tgt):
                raise UserError(
                    f"{path}:{number}: link {i}-{j} is outside the pair "
                    f"({n_src} source words, {n_tgt} target words; links are "
                    "0-based 'source-target'); fix the line or the alignment file"
                )


@dataclass
class Split:
    """One split of a parallel corpus (after cleaning)."""

    name: str
    src: list[str]
    tgt: list[str]
    align: list[Alignment] | None = None
    # A joined split (joined.py): the original pairs each pair was made of.
    joined_from: list[list[int]] | None = None
    # Further references, line for line with tgt (evaluate --ref F --ref F2).
    more_refs: tuple[list[str], ...] = ()

    def __len__(self) -> int:
        return len(self.src)

    @property
    def groups(self) -> list[list[int]]:
        """For each pair, the indices of the original pairs it holds: one
        each, unless the split was joined."""
        if self.joined_from is not None:
            return self.joined_from
        return [[i] for i in range(len(self.src))]


def read_split(
    files: SplitFiles, name: str, more_refs: Sequence[str | Path] = ()
) -> Split:
    """Read and validate a split; drop pairs with an empty side (with a
    warning). corpus.build_split is the way to get a split; it calls this.
    ``more_refs``: further reference files, line for line with the target
    file, kept for the pairs kept (evaluate --ref F --ref F2)."""
    src, tgt = read_lines(files.src), read_lines(files.tgt)
    if len(src) != len(tgt):
        raise UserError(
            f"{files.src} has {len(src)} lines but {files.tgt} has {len(tgt)}; "
            "a parallel corpus needs one target line per source line"
        )
    more = [read_lines(path) for path in more_refs]
    for path, stream in zip(more_refs, more, strict=True):
        if len(stream) != len(src):
            raise UserError(
                f"{path} has {len(stream)} lines but {files.src} has {len(src)}; "
                "every reference file needs one line per source line"
            )
    align = read_alignments(files.align) if files.align else None
    if align is not None and len(align) != len(src):
        raise UserError(
            f"{files.align} has {len(align)} lines but {files.src} has {len(src)}"
        )
    if align is not None and files.align:
        check_alignments(align, src, tgt, files.align)
    keep = [i for i in range(len(src)) if src[i].strip() and tgt[i].strip()]
    if len(keep) < len(src):
        print(
            f"warning: {name}: dropped {len(src) - len(keep)} pairs with an empty "
            f"side ({files.src})",
            file=sys.stderr,
        )
    if not keep:
        raise UserError(f"{files.src}: no usable sentence pairs in the {name} split")
    return Split(
        name,
        [src[i] for i in keep],
        [tgt[i] for i in keep],
        [align[i] for i in keep] if align is not None else None,
        more_refs=tuple([stream[i] for i in keep] for stream in more),
    )


def limit_length(
    split: Split, files: SplitFiles, max_src: int | None, max_tgt: int | None
) -> Split:
    """Drop pairs with more than ``max_src``/``max_tgt`` words."""
    keep = [
        i
        for i in range(len(split))
        if len(split.src[i].split()) <= (max_src or sys.maxsize)
        and len(split.tgt[i].split()) <= (max_tgt or sys.maxsize)
    ]
    if not keep:
        raise UserError(
            f"{files.src}: no {split.name} pair is within data.max_src_words="
            f"{max_src} / data.max_tgt_words={max_tgt}; raise the limits"
        )
    return Split(
        split.name,
        [split.src[i] for i in keep],
        [split.tgt[i] for i in keep],
        [split.align[i] for i in keep] if split.align is not None else None,
        [split.groups[i] for i in keep] if split.joined_from is not None else None,
    )
