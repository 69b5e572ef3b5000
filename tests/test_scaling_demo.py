"""scripts/lessons/scaling_demo.py: raw dot products saturate the softmax,
scaled ones do not."""

from __future__ import annotations

import importlib.util

from conftest import REPO

spec = importlib.util.spec_from_file_location(
    "scaling_demo", REPO / "scripts/lessons/scaling_demo.py"
)
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)


def test_raw_scores_saturate_and_scaled_scores_do_not() -> None:
    raw = [demo.measure(d, 32, 300, False, 0) for d in (4, 64, 1024)]
    scaled = [demo.measure(d, 32, 300, True, 0) for d in (4, 64, 1024)]
    assert raw[0]["entropy"] > raw[1]["entropy"] > raw[2]["entropy"]
    assert raw[2]["top"] > 0.9  # nearly one-hot at d = 1024
    for s in scaled:
        assert 0.85 < s["std"] < 1.15 and s["top"] < 0.25
    assert abs(scaled[0]["entropy"] - scaled[2]["entropy"]) < 0.1
