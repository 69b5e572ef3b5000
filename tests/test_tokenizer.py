"""sentencepiece vocabularies: fixed special ids, exact round trip, caching."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from seq2seq.config import TokenizerConfig
from seq2seq.errors import UserError
from seq2seq.tokenizer import BOS, EOS, PAD, UNK, build_tokenizer, word_index

WORDS = "der die das Hund Katze Haus sieht läuft schnell groß klein rot grün".split()


def corpus(n: int = 300, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(2, 9))) + "." for _ in range(n)]


def test_round_trip_and_special_ids(tmp_path: Path) -> None:
    src, tgt = corpus(seed=1), corpus(seed=2)
    tok = build_tokenizer(TokenizerConfig(vocab_size=40), src, tgt, tmp_path)
    assert tok.src_model == tok.tgt_model  # joint by default
    proc = tok.src
    assert (proc.pad_id(), proc.unk_id(), proc.bos_id(), proc.eos_id()) == (
        PAD,
        UNK,
        BOS,
        EOS,
    )
    for text in ["die große Katze läuft schnell.", "das Haus ist grün."]:
        assert tok.decode_tgt(tok.encode_tgt([text])[0]) == text


def test_separate_vocabularies(tmp_path: Path) -> None:
    tok = build_tokenizer(
        TokenizerConfig(vocab_size=40, joint=False, model_type="bpe"),
        corpus(seed=1),
        [s.upper() for s in corpus(seed=2)],
        tmp_path,
    )
    assert tok.src_model != tok.tgt_model
    assert tok.src_vocab_size == tok.tgt_vocab_size == 40


def test_cache_is_keyed_by_settings_and_text(tmp_path: Path) -> None:
    src, tgt = corpus(seed=1), corpus(seed=2)
    a = build_tokenizer(TokenizerConfig(vocab_size=40), src, tgt, tmp_path)
    mtime = a.src_model.stat().st_mtime_ns
    again = build_tokenizer(TokenizerConfig(vocab_size=40), src, tgt, tmp_path)
    assert again.src_model == a.src_model and a.src_model.stat().st_mtime_ns == mtime
    other = build_tokenizer(TokenizerConfig(vocab_size=35), src, tgt, tmp_path)
    assert other.src_model != a.src_model and other.src_vocab_size == 35
    changed = build_tokenizer(TokenizerConfig(vocab_size=40), src[1:], tgt, tmp_path)
    assert changed.src_model != a.src_model


def test_vocabulary_too_large_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="tokenizer.vocab_size=3500.*lower"):
        build_tokenizer(TokenizerConfig(vocab_size=3500), corpus(), corpus(), tmp_path)


def test_word_index_merges_pieces() -> None:
    assert word_index(["▁Der", "▁Hund", "e", "hütte", "▁bellt", "."]) == [
        0,
        1,
        1,
        1,
        2,
        2,
    ]
    assert word_index(["▁", "«", "Hallo", "▁Welt"]) == [0, 0, 0, 1]
