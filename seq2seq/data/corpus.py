"""Parallel corpora: reading, validation, and length-bucketed batches.

Any parallel text works: a source file and a target file (plain or ``.gz``),
one sentence per line, line i of one the translation of line i of the other.
Problems a user can fix raise :class:`UserError` naming the file and line.
"""

from __future__ import annotations

import gzip
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from seq2seq.config import DataConfig, SplitFiles
from seq2seq.data.joined import join
from seq2seq.data.tokenizer import BOS, EOS, PAD
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

    def __len__(self) -> int:
        return len(self.src)


def load_split(
    files: SplitFiles,
    name: str,
    max_src_words: int | None = None,
    max_tgt_words: int | None = None,
) -> Split:
    """Read and validate a split; drop pairs with an empty side (with a warning).

    Length limits are applied only when given, i.e. for training data.
    """
    src, tgt = read_lines(files.src), read_lines(files.tgt)
    if len(src) != len(tgt):
        raise UserError(
            f"{files.src} has {len(src)} lines but {files.tgt} has {len(tgt)}; "
            "a parallel corpus needs one target line per source line"
        )
    align = read_alignments(files.align) if files.align else None
    if align is not None and len(align) != len(src):
        raise UserError(
            f"{files.align} has {len(align)} lines but {files.src} has {len(src)}"
        )
    if align is not None:
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
    split = Split(
        name,
        [src[i] for i in keep],
        [tgt[i] for i in keep],
        [align[i] for i in keep] if align is not None else None,
    )
    if max_src_words or max_tgt_words:
        split = limit_length(split, files, max_src_words, max_tgt_words)
    return split


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
    )


def load_corpus(cfg: DataConfig) -> dict[str, Split]:
    """The train split (joined if asked, length-filtered), val (joined if
    asked, so that early stopping judges the inputs the model is for), and test."""
    train = load_split(cfg.train, "train")
    if cfg.join_train > 1:  # long training pairs from real text (joined.py)
        train = join(train, cfg.join_train).split
    val = load_split(cfg.val, "val")
    if cfg.join_val > 1:
        val = join(val, cfg.join_val).split
    splits = {
        "train": limit_length(train, cfg.train, cfg.max_src_words, cfg.max_tgt_words),
        "val": val,
    }
    if cfg.test is not None:
        splits["test"] = load_split(cfg.test, "test")
    return splits


# -------------------------------------------------------------------- batching


@dataclass
class Batch:
    """Padded ids of one batch. Source ends in EOS; target is shifted by one."""

    src: Tensor  # (B, S) source ids + EOS, PAD-padded
    src_len: Tensor  # (B,) lengths including EOS (on CPU, for packing)
    tgt_in: Tensor  # (B, T) BOS + target ids: the decoder's inputs
    tgt_out: Tensor  # (B, T) target ids + EOS: what it must predict
    index: list[int]  # positions of these pairs in their split

    @property
    def src_mask(self) -> Tensor:
        return self.src != PAD  # (B, S) True on real tokens

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())

    def to(self, device: torch.device) -> Batch:
        return Batch(
            self.src.to(device, non_blocking=True),
            self.src_len,
            self.tgt_in.to(device, non_blocking=True),
            self.tgt_out.to(device, non_blocking=True),
            self.index,
        )


def collate(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]] | None,
    index: Sequence[int],
) -> Batch:
    """Pad the given pairs into a :class:`Batch` (target may be absent)."""
    src = [list(src_ids[i]) + [EOS] for i in index]
    src_t = _pad(src)
    if tgt_ids is None:
        empty = torch.zeros(len(index), 0, dtype=torch.long)
        return Batch(
            src_t, torch.tensor([len(s) for s in src]), empty, empty, list(index)
        )
    tgt_in = _pad([[BOS] + list(tgt_ids[i]) for i in index])
    tgt_out = _pad([list(tgt_ids[i]) + [EOS] for i in index])
    return Batch(
        src_t, torch.tensor([len(s) for s in src]), tgt_in, tgt_out, list(index)
    )


def _pad(rows: list[list[int]]) -> Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), PAD, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def bucket_batches(
    lengths: Sequence[tuple[int, int]],
    max_tokens: int,
    max_sentences: int = 0,
    seed: int | None = None,
) -> list[list[int]]:
    """Group pair indices into batches of similar length.

    Pairs are sorted by (source, target) length after a seeded shuffle, so equal
    lengths mix differently every epoch; consecutive pairs form a batch while
    ``sentences * longest side`` stays within ``max_tokens`` (or exactly
    ``max_sentences`` pairs if that is set). The batch order is shuffled too.
    ``seed=None`` keeps the sorted order (for evaluation).
    """
    order = list(range(len(lengths)))
    rng = random.Random(seed)
    if seed is not None:
        rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        width = max(max(lengths[i]), longest)
        full = (
            len(current) >= max_sentences
            if max_sentences
            else (len(current) + 1) * width > max_tokens
        )
        if current and full:
            batches.append(current)
            current, width = [], max(lengths[i])
        current.append(i)
        longest = width
    if current:
        batches.append(current)
    if seed is not None:
        rng.shuffle(batches)
    return batches
