"""scripts/demo.py (`make demo`) on a tiny corpus: the table, the plot, a heatmap,
labelled progress lines that never rewrite a line, and a TensorBoard command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO, tiny_overrides

from seq2seq.data.synth import write_corpus


def test_the_demo_prints_its_table_and_writes_its_pictures(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 20})
    sets = [s for s in tiny_overrides(corpus, tmp_path, "x") if "name=" not in s]
    sets = [s for s in sets if not s.startswith("runs_dir=")] + ["train.log_every=4"]
    out = tmp_path / "demo"
    demo = yaml.safe_load((REPO / "configs/experiments/demo.yaml").read_text())
    demo |= {"runs_dir": str(tmp_path), "overrides": sets}
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(demo))
    done = subprocess.run(
        [sys.executable, "scripts/demo.py", str(tmp_path / "demo.yaml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\r" not in done.stderr  # two runs share the terminal: lines, not bars
    for mode in ("none", "additive"):
        assert f"{mode}-s1: step 4/16 epoch 1 loss" in done.stderr
        assert f"\n| {mode} | " in done.stdout
    assert "| mode | params | BLEU | chrF | AER | 1-10 (n=" in done.stdout
    assert (out / "compare" / "bleu_by_length.png").stat().st_size > 0
    assert (out / "compare" / "significance.md").is_file()
    assert (out / "heatmap" / "line00001.png").stat().st_size > 0
    assert done.stdout.rstrip().splitlines()[-1].endswith(f"--logdir {out}")
