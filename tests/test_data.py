"""Parallel text: validation errors with their messages, and batching."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import torch
from conftest import write_parallel

from seq2seq.config import SplitFiles
from seq2seq.data.batching import bucket_batches, collate
from seq2seq.data.corpus import build_split
from seq2seq.data.parallel import read_lines
from seq2seq.errors import UserError
from seq2seq.specials import BOS, EOS, PAD


def test_gzip_and_crlf_are_read(tmp_path: Path) -> None:
    path = tmp_path / "a.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"eins\r\nzwei\r\n")
    assert read_lines(path) == ["eins", "zwei"]


def test_line_count_mismatch_names_both_files(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a", "b", "c"], ["a", "b"])
    with pytest.raises(UserError, match=r"x.src has 3 lines but .*x.tgt has 2"):
        build_split(SplitFiles(str(s), str(t)), "train")


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a", "b", "c"], ["a", "b", "c"])
    s.write_bytes(b"a\nb\n\xff\xfe\n")
    with pytest.raises(UserError, match=r"x.src:3: not valid UTF-8"):
        build_split(SplitFiles(str(s), str(t)), "train")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="nope.src: file not found"):
        build_split(SplitFiles(str(tmp_path / "nope.src"), "x"), "train")


def test_empty_sides_dropped_with_count(tmp_path: Path, capsys) -> None:
    s, t = write_parallel(tmp_path, "x", ["a", "", "c", "d"], ["a", "b", " ", "d"])
    split = build_split(SplitFiles(str(s), str(t)), "train")
    assert split.src == ["a", "d"]
    assert "dropped 2 pairs" in capsys.readouterr().err


def test_all_empty_is_an_error(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["", "a"], ["b", ""])
    with pytest.raises(UserError, match="no usable sentence pairs"):
        build_split(SplitFiles(str(s), str(t)), "train")


def test_length_filter_only_when_asked(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a b c", "a"], ["a", "a b c d"])
    assert len(build_split(SplitFiles(str(s), str(t)), "val")) == 2
    assert len(build_split(SplitFiles(str(s), str(t)), "train", max_words=(2, 10))) == 1
    assert len(build_split(SplitFiles(str(s), str(t)), "train", max_words=(10, 3))) == 1


def test_bad_alignment_file(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a"], ["b"])
    align = tmp_path / "x.align"
    align.write_text("0-0 1:2\n")
    with pytest.raises(UserError, match=r"x.align:1: not a Pharaoh alignment"):
        build_split(SplitFiles(str(s), str(t), str(align)), "test")
    align.write_text("0-0-1\n")
    with pytest.raises(UserError, match=r"x.align:1: not a Pharaoh alignment"):
        build_split(SplitFiles(str(s), str(t), str(align)), "test")


def test_alignment_links_outside_the_pair_are_refused(tmp_path: Path) -> None:
    s, t = write_parallel(tmp_path, "x", ["a b", "a b c"], ["x y z", "x"])
    align = tmp_path / "x.align"
    align.write_text("0-0 1-2\n2-0 99-99\n")
    message = (
        r"x.align:2: link 99-99 is outside the pair \(3 source words, "
        r"1 target words"
    )
    with pytest.raises(UserError, match=message):
        build_split(SplitFiles(str(s), str(t), str(align)), "test")
    align.write_text("0-0 1-2\n2-1\n")  # target word 1 of a one-word target
    with pytest.raises(UserError, match=r"x.align:2: link 2-1 is outside"):
        build_split(SplitFiles(str(s), str(t), str(align)), "test")
    align.write_text("0-0 1-2\n2-0\n")
    assert build_split(SplitFiles(str(s), str(t), str(align)), "test").align == [
        [(0, 0), (1, 2)],
        [(2, 0)],
    ]


def test_collate_shifts_target_and_pads() -> None:
    batch = collate([[5, 6, 7], [8]], [[9], [10, 11]], [0, 1])
    assert batch.src.tolist() == [[5, 6, 7, EOS], [8, EOS, PAD, PAD]]
    assert batch.src_len.tolist() == [4, 2]
    assert batch.tgt_in.tolist() == [[BOS, 9, PAD], [BOS, 10, 11]]
    assert batch.tgt_out.tolist() == [[9, EOS, PAD], [10, 11, EOS]]
    assert batch.n_tgt_tokens == 5


def test_buckets_cover_everything_once_within_budget() -> None:
    g = torch.Generator().manual_seed(0)
    lengths = [(int(a), int(b)) for a, b in torch.randint(2, 60, (500, 2), generator=g)]
    batches = bucket_batches(lengths, max_tokens=600, seed=1)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(500))
    for b in batches:
        assert len(b) * max(max(lengths[i]) for i in b) <= 600 or len(b) == 1
    # similar lengths together: little padding
    pad = sum(
        len(b) * max(lengths[i][0] for i in b) - sum(lengths[i][0] for i in b)
        for b in batches
    )
    assert pad / sum(s for s, _ in lengths) < 0.25


def test_batches_shuffle_per_seed_and_fixed_sentences() -> None:
    lengths = [(i % 17 + 1, i % 13 + 1) for i in range(300)]
    a = bucket_batches(lengths, 200, seed=1)
    assert a == bucket_batches(lengths, 200, seed=1)
    assert a != bucket_batches(lengths, 200, seed=2)
    fixed = bucket_batches(lengths, 10**9, max_sentences=64, seed=3)
    assert (
        sorted(len(b) for b in fixed) == [44, 64, 64, 64, 64]
        and sum(map(len, fixed)) == 300
    )
