"""scripts/lessons/self_attention_heatmaps.py: repeated words give repeated
rows and columns."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from conftest import REPO

spec = importlib.util.spec_from_file_location(
    "self_attention_heatmaps", REPO / "scripts/lessons/self_attention_heatmaps.py"
)
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_identical_words_attend_identically_and_random_inputs_do_not(
    tmp_path: Path,
) -> None:
    random_w, words_w = script.weights(seed=0)
    assert random_w.shape == words_w.shape == (8, 8)
    torch.testing.assert_close(words_w.sum(-1), torch.ones(8))
    # Margin: over seeds 0-4 at 1 and 2 threads the repeated words' rows were
    # exactly equal (0.0) and random inputs' rows differed by 0.14-0.27; a
    # math library that rounds one row's sum in another order moves 1e-7.
    assert script.repeats(words_w) < 1e-6  # no positions: "cat" == "cat"
    assert script.repeats(random_w) > 0.05
    script.plot(random_w, words_w, tmp_path / "w.png")
    assert (tmp_path / "w.png").read_bytes().startswith(b"\x89PNG")
