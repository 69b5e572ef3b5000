"""sentencepiece vocabularies: fixed special ids, exact round trip, caching."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sentencepiece as spm

from seq2seq.config import TokenizerConfig
from seq2seq.data.tokenizer import (
    BOS,
    EOS,
    PAD,
    UNK,
    build_tokenizer,
    cache_dir,
    word_index,
)
from seq2seq.errors import UserError

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


def test_another_sentencepiece_failure_is_not_called_a_size(
    tmp_path: Path, monkeypatch
) -> None:
    def fail(**kwargs: object) -> None:
        raise RuntimeError("Internal: something else went wrong\nmore detail")

    monkeypatch.setattr(spm.SentencePieceTrainer, "train", fail)
    with pytest.raises(UserError, match="could not train.*something else") as err:
        build_tokenizer(TokenizerConfig(vocab_size=40), corpus(), corpus(), tmp_path)
    assert "vocab_size" not in str(err.value) and "\n" not in str(err.value)


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


def test_cache_defaults_to_the_projects_own_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SEQ2SEQ_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("SEQ2SEQ_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "seq2seq"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "seq2seq"
    tok = build_tokenizer(TokenizerConfig(vocab_size=40), corpus(), corpus(seed=3))
    assert tok.src_model.is_relative_to(tmp_path / "home" / ".cache" / "seq2seq")


def test_an_unwritable_cache_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")  # even root cannot make a folder under it
    with pytest.raises(
        UserError,
        match=r"cannot write the vocabulary cache.*"
        r"SEQ2SEQ_CACHE_DIR",
    ):
        build_tokenizer(TokenizerConfig(vocab_size=40), corpus(), corpus(), blocker)
