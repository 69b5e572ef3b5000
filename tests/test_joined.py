"""The joined long-sentence sets: k = 1..4 consecutive pairs made into one."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from conftest import MULTI30K_MIRROR, write_parallel

from seq2seq.config import DataConfig, SplitFiles
from seq2seq.data.corpus import build_split, load_corpus
from seq2seq.data.joined import base_split, groups, join
from seq2seq.data.parallel import Split
from seq2seq.data.synth import write_corpus


def test_groups_cycle_one_to_k_and_cover_every_index_once() -> None:
    assert groups(10, 4) == [[0], [1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert groups(13, 4)[-2:] == [[10], [11, 12]]  # the last group runs out
    for n in (0, 1, 7, 100, 1000):
        flat = [i for g in groups(n, 4) for i in g]
        assert flat == list(range(n))
    assert [len(g) for g in groups(6, 2)] == [1, 2, 1, 2]
    assert groups(3, 1) == [[0], [1], [2]]  # k = 1: nothing joined


def test_join_concatenates_text_and_shifts_alignments() -> None:
    split = Split(
        "test",
        ["a b", "c", "d e f", "g"],
        ["A B", "C C", "D", "G"],
        [[(0, 1), (1, 0)], [(0, 0), (0, 1)], [(2, 0)], [(0, 0)]],
    )
    joined = join(split, max_k=2)
    assert joined.groups == [[0], [1, 2], [3]]
    assert joined.name == "test_joined"
    assert joined.src == ["a b", "c d e f", "g"]
    assert joined.tgt == ["A B", "C C D", "G"]
    # "c"-"C C" keeps (0,0),(0,1); "f"-"D" moves from (2,0) to (3,2).
    assert joined.align[1] == [(0, 0), (0, 1), (3, 2)]


def test_joined_alignments_point_at_the_same_words(tmp_path: Path) -> None:
    write_corpus(tmp_path, seed=3, sizes={"train": 0, "val": 0, "test": 40})
    files = SplitFiles(
        str(tmp_path / "test.en"),
        str(tmp_path / "test.de"),
        str(tmp_path / "test.align"),
    )
    split = build_split(files, "test")
    joined = join(split)
    assert len(joined) == 16
    for row, group in enumerate(joined.groups):
        src = joined.src[row].split()
        tgt = joined.tgt[row].split()
        want = [
            (split.src[i].split()[s], split.tgt[i].split()[t])
            for i in group
            for s, t in split.align[i]
        ]
        assert [(src[s], tgt[t]) for s, t in joined.align[row]] == want


def test_base_split_names() -> None:
    assert base_split("test_joined") == ("test", True)
    assert base_split("val") == ("val", False)


def test_join_train_joins_before_the_length_limit(tmp_path: Path) -> None:
    lines = [" ".join(["w"] * 5)] * 20
    s, t = write_parallel(tmp_path, "train", lines, lines)
    v = SplitFiles(str(s), str(t))
    plain = load_corpus(DataConfig(train=v, val=v))["train"]
    assert len(plain) == 20
    joined = load_corpus(DataConfig(train=v, val=v, join_train=4))["train"]
    assert sorted(len(x.split()) for x in joined.src) == [5, 5, 10, 10, 15, 15, 20, 20]
    # max_src_words applies to the joined pairs: 3 joined sentences are too long.
    short = DataConfig(train=v, val=v, join_train=4, max_src_words=10)
    assert sorted(len(x.split()) for x in load_corpus(short)["train"].src) == [
        5,
        5,
        10,
        10,
    ]


def test_join_val_joins_only_the_validation_pairs(tmp_path: Path) -> None:
    lines = [" ".join(["w"] * 5)] * 10
    s, t = write_parallel(tmp_path, "train", lines, lines)
    v = SplitFiles(str(s), str(t))
    splits = load_corpus(DataConfig(train=v, val=v, join_val=4))
    assert sorted(len(x.split()) for x in splits["val"].src) == [5, 10, 15, 20]
    assert len(splits["train"]) == 10


@pytest.mark.skipif(MULTI30K_MIRROR is None, reason="no Multi30k mirror")
def test_joined_multi30k_test_reaches_long_natural_sentences() -> None:
    def lines(name: str) -> list[str]:
        path = MULTI30K_MIRROR / name
        return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()

    src, tgt = lines("test_2016_flickr.de.gz"), lines("test_2016_flickr.en.gz")
    joined = join(Split("test", src, tgt))
    assert len(joined) == 400
    assert [sum(len(g) == k for g in joined.groups) for k in (1, 2, 3, 4)] == [100] * 4
    lengths = [len(s.split()) for s in joined.src]
    assert max(lengths) >= 60 and sum(x > 40 for x in lengths) >= 50
    assert joined.src[1] == f"{src[1]} {src[2]}"
