"""The one way to build a split: read its files (parallel.py), join k
consecutive pairs into long ones where asked (joined.py), drop training pairs
over the length limits. Training, validation, evaluate, compare and probe all
get their pairs here.
"""

from __future__ import annotations

from collections.abc import Sequence

from seq2seq.config import DataConfig, SplitFiles
from seq2seq.data import joined
from seq2seq.data.parallel import Split, limit_length, read_split
from seq2seq.errors import SettingError, literal


def build_split(
    files: SplitFiles,
    name: str,
    join: int = 1,
    max_words: tuple[int | None, int | None] = (None, None),
) -> Split:
    """Read ``files`` as split ``name``; with ``join`` > 1, join k = 1..join
    consecutive pairs (the split becomes ``<name>_joined``); then drop pairs
    with more than ``max_words`` (source, target) words."""
    split = read_split(files, name)
    if join > 1:
        split = joined.join(split, join)
    if any(max_words):
        split = limit_length(split, files, *max_words)
    return split


def file_split(src: str, refs: Sequence[str], name: str) -> Split:
    """A test set named by its files (evaluate --src F --ref F [--ref F2]):
    the source and the first reference read as any split is, each further
    reference checked line for line and kept for the lines the split keeps
    (those with a source and a first reference)."""
    return read_split(SplitFiles(src, refs[0]), name, refs[1:])


def split_files(cfg: DataConfig, name: str) -> SplitFiles:
    """The files of ``val``/``test``, also for ``val_joined``/``test_joined``."""
    base, _ = joined.base_split(name)
    files = {"val": cfg.val, "test": cfg.test}.get(base)
    if files is None:
        raise SettingError(
            f"{{split}} {literal(name)}: the config has no data.{literal(base)}; "
            "choose val, test, val_joined or test_joined"
        )
    return files


def eval_split(files: SplitFiles, name: str) -> Split:
    """An evaluation split by name: ``val``/``test`` as they are, and
    ``val_joined``/``test_joined`` with k = 1..4 consecutive pairs joined."""
    base, is_joined = joined.base_split(name)
    return build_split(files, base, joined.MAX_K if is_joined else 1)


def load_split(cfg: DataConfig, name: str) -> Split:
    """:func:`eval_split` of the config's files for ``name``."""
    return eval_split(split_files(cfg, name), name)


def load_corpus(cfg: DataConfig) -> dict[str, Split]:
    """Training's splits: train (joined if asked, length-filtered), val
    (joined if asked, so that early stopping judges the inputs the model is
    for), and test."""
    limits = (cfg.max_src_words, cfg.max_tgt_words)
    splits = {
        "train": build_split(cfg.train, "train", cfg.join_train, limits),
        "val": build_split(cfg.val, "val", cfg.join_val),
    }
    if cfg.test is not None:
        splits["test"] = build_split(cfg.test, "test")
    return splits
