"""`make demo`: no attention vs attention on the shipped corpus, BLEU by length.

    python scripts/demo.py [EXPERIMENT]   # default configs/experiments/demo.yaml

Reads the experiment's runs when they are trained and evaluated; otherwise
generates data/synth_ende if it is missing or made by another version of the
generator (seconds) and runs the experiment file with ``seq2seq experiment``
(seq2seq/lab/demo.py, which notebook 3 of the lesson calls too):
both trainings side by side (one process and one thread each, which uses two
cores better than two threads for one small model at a time; each prints
labelled progress lines, as two bars would overwrite each other), each
evaluated on the test split, and compared (the BLEU-by-length plot and the
paired bootstrap in <root>/compare/). Finished runs are not trained again.
Then ``translate --plot`` draws the attention heatmap of one test sentence
into <root>/heatmap/, and the table is printed.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from seq2seq.cli import main as seq2seq
from seq2seq.errors import run_script
from seq2seq.lab.demo import DEMO_FILE, demo_results, table
from seq2seq.training.progress import tensorboard_command

REPO = Path(__file__).resolve().parent.parent
HEATMAP_WORDS = (18, 24)  # the heatmap's sentence: the first test source this long


def heatmap_sentence(test_src: Path, out: Path) -> Path:
    """The first test source of HEATMAP_WORDS words (else the longest), in a
    file for translate."""
    lines = test_src.read_text(encoding="utf-8").splitlines()
    lo, hi = HEATMAP_WORDS
    fits = [x for x in lines if lo <= len(x.split()) <= hi]
    line = fits[0] if fits else max(lines, key=lambda x: len(x.split()))
    path = out / "heatmap.en"
    path.write_text(line + "\n", encoding="utf-8")
    return path


def run(command: list[str]) -> None:
    if seq2seq(command) != 0:
        raise SystemExit(f"demo: seq2seq {command[0]} failed (see above)")


def heatmap(run_dir: Path, test_src: Path, out: Path) -> None:
    """One test sentence translated by ``run_dir``, with its heatmap."""
    source = heatmap_sentence(test_src, out)
    output = ["--output", str(out / "heatmap.de"), "--plot", str(out / "heatmap")]
    run(["translate", str(run_dir), "--input", str(source), *output])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "experiment",
        type=Path,
        nargs="?",
        default=REPO / DEMO_FILE,
        help="the experiment file to run",
    )
    args = parser.parse_args()
    start = time.monotonic()
    path = args.experiment.resolve()
    os.chdir(REPO)  # the experiment file's paths are relative to the repository
    exp, jobs, results = demo_results(path)
    cfg = jobs[0].resolved()
    aligned = [job for job, r in zip(jobs, results, strict=True) if r.aer is not None]
    test_src = Path((cfg.data.test or cfg.data.val).src)
    if aligned:
        heatmap(aligned[-1].run_dir, test_src, exp.root)
    minutes = (time.monotonic() - start) / 60
    print(f"\nTest BLEU by source length (words), shipped corpus, {minutes:.1f} min:\n")
    print(table(results, [j.seed for j in jobs] if len(exp.seeds) > 1 else ()))
    print(f"\n{results[0].scores.signature}")
    here = Path.cwd()
    root = exp.root.resolve()
    shown = root.relative_to(here) if root.is_relative_to(here) else root
    print(f"\nPlot:         {shown / 'compare/bleu_by_length.png'}")
    print(f"Significance: {shown / 'compare/significance.md'} (paired bootstrap)")
    if aligned:
        print(f"Heatmap:      {shown / 'heatmap/line00001.png'} (one test sentence)")
    print(f"TensorBoard:  {tensorboard_command(shown)}")


if __name__ == "__main__":
    run_script(main)
