"""A split built the one way (seq2seq/data/corpus.py): by name, joined,
length-limited for training only."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_parallel

from seq2seq.config import DataConfig, SplitFiles
from seq2seq.data.corpus import build_split, load_corpus, load_split, split_files
from seq2seq.errors import SettingError


def test_length_filter_only_when_asked(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a b c", "a"], ["a", "a b c d"])
    assert len(build_split(SplitFiles(str(s), str(t)), "val")) == 2
    assert len(build_split(SplitFiles(str(s), str(t)), "train", max_words=(2, 10))) == 1
    assert len(build_split(SplitFiles(str(s), str(t)), "train", max_words=(10, 3))) == 1


def data_config(tmp_path: Path) -> DataConfig:
    s, t = write_parallel(
        tmp_path, "x", ["a b", "c", "d e f", "g"], ["A B", "C", "D", "G"]
    )
    files = SplitFiles(str(s), str(t))
    return DataConfig(train=files, val=files)


def test_a_split_by_name_and_its_joined_variant(tmp_path: Path) -> None:
    cfg = data_config(tmp_path)
    assert split_files(cfg, "val_joined") == cfg.val
    assert load_split(cfg, "val").src == ["a b", "c", "d e f", "g"]
    joined = load_split(cfg, "val_joined")  # k = 1..4 consecutive pairs joined
    assert [i for group in joined.joined_from for i in group] == [0, 1, 2, 3]
    plain = load_split(cfg, "val").src
    for group, text in zip(joined.joined_from, joined.src, strict=True):
        assert text == " ".join(plain[i] for i in group)


def test_a_missing_split_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(SettingError) as err:
        split_files(data_config(tmp_path), "test")
    assert str(err.value).startswith("split test: the config has no data.test;")
    assert err.value.as_option().startswith("--split test: the config has no")
    with pytest.raises(
        SettingError, match=r"^split v\{x\}: the config has no data.v\{x\};"
    ):
        split_files(data_config(tmp_path), "v{x}")  # braces in a name kept


def test_training_reads_train_val_and_test_only_when_given(tmp_path: Path) -> None:
    cfg = data_config(tmp_path)
    assert set(load_corpus(cfg)) == {"train", "val"}
    with_test = DataConfig(train=cfg.train, val=cfg.val, test=cfg.val, max_src_words=2)
    splits = load_corpus(with_test)
    assert set(splits) == {"train", "val", "test"}
    assert splits["train"].src == ["a b", "c", "g"]  # max_src_words: train only
    assert len(splits["test"]) == 4
