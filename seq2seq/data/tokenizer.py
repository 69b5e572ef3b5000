"""Subword vocabularies with sentencepiece (Kudo & Richardson 2018).

Trained on the training split only, joint or separate per config, and cached
under ``<cache>/spm/<key>/`` (:func:`cache_dir`; never beside the corpus, whose
folder may be read-only) where the key hashes the settings and the training
text, so a change of either retrains. The special ids are fixed
and shared with the model. Decoding is sentencepiece's exact detokenization,
so BLEU is computed on real text.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

import sentencepiece as spm

from seq2seq.config import TokenizerConfig
from seq2seq.errors import UserError, first_line
from seq2seq.files import CACHE_ENV, atomic_write, cache_dir
from seq2seq.specials import BOS, EOS, PAD, UNK


class Tokenizer:
    """Source and target sentencepiece models (the same one when joint)."""

    def __init__(self, src_model: Path, tgt_model: Path) -> None:
        self.src_model, self.tgt_model = Path(src_model), Path(tgt_model)
        self.src = _load(self.src_model)
        self.tgt = self.src if src_model == tgt_model else _load(self.tgt_model)

    @property
    def src_vocab_size(self) -> int:
        return self.src.get_piece_size()

    @property
    def tgt_vocab_size(self) -> int:
        return self.tgt.get_piece_size()

    def encode_src(self, texts: Sequence[str]) -> list[list[int]]:
        return self.src.encode(list(texts))

    def encode_tgt(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tgt.encode(list(texts))

    def decode_tgt(self, ids: Sequence[int]) -> str:
        return self.tgt.decode([int(i) for i in ids])

    def src_pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.src.id_to_piece(int(i)) for i in ids]

    def tgt_pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.tgt.id_to_piece(int(i)) for i in ids]

    def fingerprint(self) -> str:
        h = hashlib.sha256(self.src_model.read_bytes())
        h.update(self.tgt_model.read_bytes())
        return h.hexdigest()[:16]


def _load(path: Path) -> spm.SentencePieceProcessor:
    proc = spm.SentencePieceProcessor()
    try:
        proc.load(str(path))
    except (OSError, RuntimeError):
        raise UserError(
            f"{path}: not a sentencepiece model; delete it to retrain"
        ) from None
    return proc


def word_index(pieces: Sequence[str]) -> list[int]:
    """Map each subword to the whitespace word it belongs to (``▁`` starts one)."""
    out, word, pending = [], -1, False
    for piece in pieces:
        if piece.startswith("\u2581") and not pending:
            word += 1
        pending = piece == "\u2581"  # a bare '▁' starts the word the next piece ends
        out.append(max(word, 0))
    return out


def build_tokenizer(
    cfg: TokenizerConfig,
    src_texts: Sequence[str],
    tgt_texts: Sequence[str],
    cache: Path | None = None,
) -> Tokenizer:
    """Train (or reuse from ``cache/spm``, default :func:`cache_dir`) the
    vocabularies for a corpus."""
    key = _cache_key(cfg, src_texts, tgt_texts)
    folder = (cache or cache_dir()) / "spm" / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(
            f"{folder}: cannot write the vocabulary cache ({err.strerror}); "
            f"set {CACHE_ENV} to a writable folder"
        ) from None
    if cfg.joint:
        joint = folder / "joint.model"
        if not joint.exists():
            _train(cfg, list(src_texts) + list(tgt_texts), joint, "source+target")
        return Tokenizer(joint, joint)
    src, tgt = folder / "src.model", folder / "tgt.model"
    if not src.exists():
        _train(cfg, src_texts, src, "source")
    if not tgt.exists():
        _train(cfg, tgt_texts, tgt, "target")
    return Tokenizer(src, tgt)


def _cache_key(cfg: TokenizerConfig, src: Sequence[str], tgt: Sequence[str]) -> str:
    h = hashlib.sha256(json.dumps(cfg.__dict__, sort_keys=True).encode())
    for text in (*src, "\0", *tgt):
        h.update(text.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:12]


def _train(cfg: TokenizerConfig, texts: Sequence[str], out: Path, side: str) -> None:
    buffer = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(texts),
            model_writer=buffer,
            model_type=cfg.model_type,
            vocab_size=cfg.vocab_size,
            character_coverage=cfg.character_coverage,
            pad_id=PAD,
            unk_id=UNK,
            bos_id=BOS,
            eos_id=EOS,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            num_threads=1,  # deterministic pieces for the same text
            minloglevel=2,
        )
    except RuntimeError as err:
        limit = re.search(r"<= (\d+)", str(err))
        if limit is None:  # not the size: say what sentencepiece said
            raise UserError(
                f"sentencepiece could not train on the {side} training text "
                f"({first_line(err)}); check tokenizer.* in the config"
            ) from None
        raise UserError(
            f"tokenizer.vocab_size={cfg.vocab_size} is too large for the {side} "
            f"training text (it supports at most {limit.group(1)}); lower "
            "tokenizer.vocab_size"
        ) from None
    atomic_write(out, buffer.getvalue())
