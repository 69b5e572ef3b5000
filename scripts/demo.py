"""`make demo`: no attention vs attention on the shipped corpus, BLEU by length.

Generates data/synth_ende (seconds), trains configs/synth_ende/{none,additive}.yaml
side by side (one process and one thread each, which uses the two cores better than
two threads for one small model at a time; each prints labelled progress lines, as
two bars would overwrite each other), evaluates both on the test split and prints
the table. Runs go to runs/demo/<mode>/, with TensorBoard logs; `compare` writes
the BLEU-by-length plot to runs/demo/compare/, and `translate --plot` the
attention heatmap of one test sentence to runs/demo/heatmap/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from seq2seq.progress import tensorboard_command

REPO = Path(__file__).resolve().parent.parent
MODES = ("none", "additive")
HEATMAP_WORDS = (18, 24)  # the heatmap's sentence: the first test source this long


def sh(
    *args: str, env: dict[str, str] | None = None, quiet: bool = False
) -> subprocess.Popen:
    out = subprocess.DEVNULL if quiet else None  # errors still reach stderr
    return subprocess.Popen(
        [sys.executable, "-m", "seq2seq", *args], cwd=REPO, env=env, stdout=out
    )


def wait(procs: list[subprocess.Popen]) -> None:
    codes = [p.wait() for p in procs]
    if any(codes):
        sys.exit(f"demo: a step failed (exit codes {codes})")


def table(results: list[dict]) -> str:
    buckets = results[0]["buckets"]
    head = ["mode", "params", "BLEU", "chrF", "AER"] + [
        f"{b['lo']}-{b['hi']} (n={b['n']})" for b in buckets
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        aer = "n/a" if r["aer"] is None else f"{r['aer']:.3f}"
        cells = [
            r["mode"],
            f"{r['params']:,}",
            f"{r['bleu']:.1f}",
            f"{r['chrf']:.1f}",
            aer,
        ]
        cells += [
            "-" if b["bleu"] is None else f"{b['bleu']:.1f}" for b in r["buckets"]
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def heatmap_sentence() -> Path:
    """The first test source of HEATMAP_WORDS words, in a file for translate."""
    lines = (REPO / "data/synth_ende/test.en").read_text(encoding="utf-8").splitlines()
    lo, hi = HEATMAP_WORDS
    line = next(x for x in lines if lo <= len(x.split()) <= hi)
    path = REPO / "runs/demo/heatmap.en"
    path.write_text(line + "\n", encoding="utf-8")
    return path


def pictures(env: dict[str, str]) -> None:
    """The plot (compare, with paired bootstrap) and one heatmap (translate)."""
    runs = [f"runs/demo/{mode}" for mode in MODES]
    compare = sh("compare", *runs, "--out", "runs/demo/compare", env=env, quiet=True)
    source = heatmap_sentence()
    plot = sh(
        "translate",
        "runs/demo/additive",
        "--input",
        str(source),
        "--output",
        "runs/demo/heatmap.de",
        "--plot",
        "runs/demo/heatmap",
        env=env,
        quiet=True,
    )
    wait([compare, plot])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        help="extra config override for both runs",
    )
    args = parser.parse_args()
    start = time.monotonic()
    if not (REPO / "data/synth_ende/MANIFEST.json").exists():
        wait([sh("prepare", "synth_ende")])
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    extra = [x for o in args.overrides for x in ("--set", o)]
    wait(
        [
            sh(
                "train",
                "--config",
                f"configs/synth_ende/{mode}.yaml",
                "--overwrite",
                "--progress",
                "log",
                "--set",
                "runs_dir=runs/demo",
                "--set",
                f"name={mode}",
                *extra,
                env=env,
            )
            for mode in MODES
        ]
    )
    wait(
        [
            sh("evaluate", f"runs/demo/{mode}", "--split", "test", env=env)
            for mode in MODES
        ]
    )
    pictures(env)
    results = [
        json.loads((REPO / f"runs/demo/{mode}/eval_test.json").read_text())
        for mode in MODES
    ]
    minutes = (time.monotonic() - start) / 60
    print(f"\nTest BLEU by source length (words), shipped corpus, {minutes:.1f} min:\n")
    print(table(results))
    print(f"\n{results[0]['signature']}")
    print("\nPlot: runs/demo/compare/bleu_by_length.png (paired bootstrap: ")
    print("runs/demo/compare/significance.md); heatmap: runs/demo/heatmap/")
    print(f"Alignments and curves: {tensorboard_command(Path('runs/demo'))}")


if __name__ == "__main__":
    main()
