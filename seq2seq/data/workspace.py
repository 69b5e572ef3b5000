"""A corpus made ready for a model: cleaned splits, vocabularies, subword ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seq2seq import run
from seq2seq.config import Config
from seq2seq.data.corpus import load_corpus
from seq2seq.data.parallel import Split
from seq2seq.data.tokenizer import Tokenizer, build_tokenizer, word_index
from seq2seq.errors import UserError
from seq2seq.files import atomic_write


@dataclass
class Encoded:
    """A split with its subword ids (no BOS/EOS; ``collate`` adds them)."""

    split: Split
    src_ids: list[list[int]]
    tgt_ids: list[list[int]]

    def lengths(self) -> list[tuple[int, int]]:
        """(source, target) lengths as the model sees them, +1 for EOS/BOS."""
        return [
            (len(s) + 1, len(t) + 1)
            for s, t in zip(self.src_ids, self.tgt_ids, strict=True)
        ]

    def src_words(self) -> list[int]:
        return [len(s.split()) for s in self.split.src]

    def word_indices(self, tok: Tokenizer) -> tuple[list[list[int]], list[list[int]]]:
        """For every sentence, the word each source / target subword belongs to."""
        src = [word_index(tok.src_pieces(ids)) for ids in self.src_ids]
        return src, [word_index(tok.tgt_pieces(ids)) for ids in self.tgt_ids]


def encode(split: Split, tokenizer: Tokenizer) -> Encoded:
    return Encoded(
        split, tokenizer.encode_src(split.src), tokenizer.encode_tgt(split.tgt)
    )


@dataclass
class Workspace:
    tokenizer: Tokenizer
    train: Encoded
    val: Encoded
    test: Encoded | None

    def tokenizer_to(self, run_dir: Path) -> None:
        """Copy the vocabularies into the run, which must stand on its own."""
        run.vocab_dir(run_dir).mkdir(exist_ok=True)
        models = (self.tokenizer.src_model, self.tokenizer.tgt_model)
        for target, model in zip(run.vocab_files(run_dir), models, strict=True):
            atomic_write(target, Path(model).read_bytes())


def load_workspace(cfg: Config, tokenizer: Tokenizer | None = None) -> Workspace:
    """The config's corpus, encoded with ``tokenizer`` (a resumed run's own) or
    with vocabularies built (or found in the cache, :func:`cache_dir`)."""
    splits = load_corpus(cfg.data)
    train = splits["train"]
    if tokenizer is None:
        tokenizer = build_tokenizer(cfg.tokenizer, train.src, train.tgt)
    test = splits.get("test")
    return Workspace(
        tokenizer,
        encode(train, tokenizer),
        encode(splits["val"], tokenizer),
        encode(test, tokenizer) if test else None,
    )


def run_tokenizer(run_dir: Path) -> Tokenizer:
    src, tgt = run.vocab_files(run_dir)
    for path in (src, tgt):
        if not path.is_file():
            raise UserError(
                f"{path}: missing; {run_dir} is not a complete run directory"
            )
    return Tokenizer(src, tgt)
