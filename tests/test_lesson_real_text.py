"""Notebook 3's real-text curve (lesson/real_text.py): a committed
compare.json read back typed, seeds averaged per family, the share of BLEU
the longest bucket keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq.errors import UserError
from seq2seq.lesson.real_text import BIBLE_RESULTS, kept, seed_means
from seq2seq.results import ComparedRun


def row(run: str, mode: str, family: str, bleus: list[float]) -> dict:
    buckets = [
        {"lo": 1 + 10 * k, "hi": 10 + 10 * k, "n": 5, "bleu": b, "chrf": 2 * b}
        for k, b in enumerate(bleus)
    ]
    buckets.append({"lo": 31, "hi": 40, "n": 0, "bleu": None})  # empty: skipped
    scores = {"bleu": 1.0, "chrf": 2.0, "buckets": buckets}
    return {"run": run, "mode": mode, "family": family} | scores


def test_seeds_are_averaged_per_family_and_the_ratio_reads_filled_buckets(
    tmp_path: Path,
) -> None:
    path = tmp_path / "compare.json"
    rows = [
        row("r/none-s1", "none", "rnn", [10.0, 6.0, 4.0]),
        row("r/none-s2", "none", "rnn", [14.0, 8.0, 6.0]),
        row("r/t-s1", "multihead", "transformer", [20.0, 21.0, 19.0]),
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    means = seed_means(ComparedRun.read_all(path))
    assert list(means) == ["none", "transformer"]
    assert [b.bleu for b in means["none"]] == [12.0, 7.0, 5.0, None]
    assert [b.chrf for b in means["none"]][:3] == [24.0, 14.0, 10.0]
    assert kept(means["none"]) == pytest.approx(5 / 12)
    assert kept(means["transformer"]) == pytest.approx(19 / 20)


def test_a_file_that_is_not_a_compare_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "compare.json"
    path.write_text('[{"run": "x"}]', encoding="utf-8")
    with pytest.raises(UserError, match="not a compare.json of seq2seq compare"):
        ComparedRun.read_all(path)


def test_the_committed_bible_results_read() -> None:
    """What notebook 3 draws: every family of the Bible experiment, 2 seeds,
    over the same six length buckets up to 51+ words."""
    rows = ComparedRun.read_all(REPO / BIBLE_RESULTS)
    means = seed_means(rows)
    assert set(means) == {"none", "context", "additive", "transformer"}
    assert len(rows) == 8
    assert all(len([b for b in r.buckets if b.n]) == 6 for r in rows)
