"""Parallel text read and checked (seq2seq/data/parallel.py): gzip and CRLF,
line counts, UTF-8, empty sides, gold alignments, each error naming its file
and line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from conftest import write_parallel

from seq2seq.config import SplitFiles
from seq2seq.data.corpus import build_split
from seq2seq.data.parallel import read_lines
from seq2seq.errors import UserError


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
