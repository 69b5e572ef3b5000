"""`make demo`: no attention vs attention on the shipped corpus, BLEU by length.

    python scripts/demo.py [EXPERIMENT]   # default configs/experiments/demo.yaml

Generates data/synth_ende if it is missing or made by another version of the
generator (seconds), then runs the experiment file with ``seq2seq experiment``:
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
import json
import os
import time
from pathlib import Path

from seq2seq.cli import main as seq2seq
from seq2seq.data.synth import VERSION
from seq2seq.errors import UserError, run_script
from seq2seq.lab.evaluate import saved_evaluation
from seq2seq.lab.experiment import experiment, load_experiment, plan
from seq2seq.training.progress import tensorboard_command

REPO = Path(__file__).resolve().parent.parent
HEATMAP_WORDS = (18, 24)  # the heatmap's sentence: the first test source this long


def table(results: list[dict], seeds: list[int] | None = None) -> str:
    """The demo's table, a row per run; with ``seeds``, a column for them."""
    buckets = results[0]["buckets"]
    head = ["mode", "params", "BLEU", "chrF", "AER"] + [
        f"{b['lo']}-{b['hi']} (n={b['n']})" for b in buckets
    ]
    head = (["seed"] if seeds else []) + head
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, r in enumerate(results):
        aer = "n/a" if r["aer"] is None else f"{r['aer']:.3f}"
        cells = [str(seeds[i])] if seeds else []
        cells += [r["mode"], f"{r['params']:,}", f"{r['bleu']:.1f}"]
        cells += [f"{r['chrf']:.1f}", aer]
        cells += [
            "-" if b["bleu"] is None else f"{b['bleu']:.1f}" for b in r["buckets"]
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def current_corpus(train_src: Path) -> bool:
    """Is the corpus complete (its manifest is written last) and made by this
    version of the generator? If not, the demo makes it anew."""
    manifest = train_src.parent / "MANIFEST.json"
    if not manifest.is_file():
        return False
    return json.loads(manifest.read_text(encoding="utf-8")).get("version") == VERSION


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
        default=REPO / "configs/experiments/demo.yaml",
        help="the experiment file to run",
    )
    args = parser.parse_args()
    start = time.monotonic()
    path = args.experiment.resolve()
    os.chdir(REPO)  # the experiment file's paths are relative to the repository
    exp = load_experiment(path)
    jobs = plan(exp)
    cfg = jobs[0].resolved()
    if not current_corpus(Path(cfg.data.train.src)):
        run(["prepare", "synth_ende"])
    experiment(path)
    results = [saved_evaluation(job.run_dir, exp.splits[0]) for job in jobs]
    if any(r is None for r in results):
        raise UserError(f"{path}: a run was not evaluated (see above)")
    aligned = [
        job for job, r in zip(jobs, results, strict=True) if r["aer"] is not None
    ]
    test_src = Path((cfg.data.test or cfg.data.val).src)
    if aligned:
        heatmap(aligned[-1].run_dir, test_src, exp.root)
    minutes = (time.monotonic() - start) / 60
    print(f"\nTest BLEU by source length (words), shipped corpus, {minutes:.1f} min:\n")
    print(table(results, [j.seed for j in jobs] if len(exp.seeds) > 1 else None))
    print(f"\n{results[0]['signature']}")
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
