"""seq2seq/lab/explore_curve.py: the explorer's BLEU-by-length curve is the
run's current eval_test.json where there is one, and otherwise decoded in the
page to `evaluate`'s own figures; progress is reported while it decodes; a
sample is evenly spaced; a stale evaluation is not used."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from conftest import snapshot, tiny_runs

from seq2seq.lab.evaluate import evaluate
from seq2seq.lab.explore import Explorer
from seq2seq.lab.explore_curve import Curve, sample_index


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tiny_runs(tmp_path_factory.mktemp("curve"), test_pairs=30)


def finished(curve: Curve) -> dict:
    for _ in range(600):
        state = curve.poll()
        if state["state"] != "running":
            return state
        time.sleep(0.1)
    raise AssertionError("the curve did not finish in a minute")


def test_decoded_here_equals_evaluate_and_a_current_file_is_read(
    runs, tmp_path: Path
) -> None:
    copies = {}
    for mode, path in runs.items():
        copies[mode] = tmp_path / mode
        shutil.copytree(path, copies[mode])
    before = snapshot(tmp_path)
    explorer = Explorer([copies["none"], copies["additive"]])
    state = finished(Curve(explorer))
    assert state["state"] == "done" and state["done"] == state["total"] == 2 * 30
    assert snapshot(tmp_path) == before  # decoded in memory, nothing written
    decoded = {r["mode"]: r for r in state["runs"]}
    for mode in ("none", "additive"):
        assert decoded[mode]["source"] == "decoded here" and decoded[mode]["n"] == 30
        want = evaluate(copies[mode], "test", device_name="cpu")
        # the same sentences in the same batches: the same figures, exactly
        assert decoded[mode]["buckets"] == want.to_dict()["buckets"]
        assert decoded[mode]["bleu"] == want.bleu
    # now both runs have a current eval_test.json: read, nothing decoded
    state = finished(Curve(Explorer([copies["none"], copies["additive"]])))
    assert state["total"] == 0
    for r in state["runs"]:
        assert r["source"] == "eval_test.json"
        assert r["buckets"] == decoded[r["mode"]]["buckets"]


def test_a_stale_or_partial_evaluation_is_decoded_again(runs, tmp_path: Path) -> None:
    copy = tmp_path / "additive"
    shutil.copytree(runs["additive"], copy)
    evaluate(copy, "test", device_name="cpu")
    saved = json.loads((copy / "eval_test.json").read_text())
    for change in ({"step": saved["step"] + 1}, {"n": 29}):
        (copy / "eval_test.json").write_text(json.dumps(saved | change))
        state = finished(Curve(Explorer([copy])))
        assert state["runs"][0]["source"] == "decoded here", change
        assert state["runs"][0]["buckets"] == saved["buckets"]


def test_a_sample_is_evenly_spaced_and_bounded(runs) -> None:
    assert sample_index(5, 10) == [0, 1, 2, 3, 4]
    assert sample_index(10, 4) == [0, 2, 5, 7]
    state = finished(Curve(Explorer([runs["none"]]), sample=7))
    assert state["total"] == 7 and state["runs"][0]["n"] == 7
    assert sum(b["n"] for b in state["runs"][0]["buckets"]) == 7
