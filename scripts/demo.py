"""`make demo`: no attention vs attention on the shipped corpus, BLEU by length.

Generates data/synth_ende (seconds), trains configs/synth_ende/{none,additive}.yaml
side by side (one process and one thread each, which uses the two cores better than
two threads for one small model at a time; each prints labelled progress lines, as
two bars would overwrite each other), evaluates both on the test split and prints
the table. Runs go to <out>/<mode>/ (default runs/demo), with TensorBoard logs;
`compare` writes the BLEU-by-length plot to <out>/compare/, and `translate --plot`
the attention heatmap of one test sentence to <out>/heatmap/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from seq2seq.config import load_config
from seq2seq.data.synth import VERSION
from seq2seq.errors import run_script
from seq2seq.training.progress import tensorboard_command

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


def train_and_evaluate(out: Path, extra: list[str], env: dict[str, str]) -> None:
    """Both trainings side by side, then both evaluations."""
    train = ["train", "--overwrite", "--progress", "log", "--set", f"runs_dir={out}"]
    wait(
        [
            sh(
                *train,
                "--config",
                f"configs/synth_ende/{mode}.yaml",
                "--set",
                f"name={mode}",
                *extra,
                env=env,
            )
            for mode in MODES
        ]
    )
    wait(
        [sh("evaluate", str(out / mode), "--split", "test", env=env) for mode in MODES]
    )


def pictures(out: Path, test_src: Path, env: dict[str, str]) -> None:
    """The plot (compare, with paired bootstrap) and one heatmap (translate)."""
    runs = [str(out / mode) for mode in MODES]
    compare = sh("compare", *runs, "--out", str(out / "compare"), env=env, quiet=True)
    source = heatmap_sentence(test_src, out)
    plot = sh(
        "translate",
        str(out / "additive"),
        "--input",
        str(source),
        "--output",
        str(out / "heatmap.de"),
        "--plot",
        str(out / "heatmap"),
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
    parser.add_argument("--out", type=Path, default=Path("runs/demo"))
    args = parser.parse_args()
    start = time.monotonic()
    out = args.out if args.out.is_absolute() else REPO / args.out
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml", args.overrides)
    test_src = REPO / (cfg.data.test or cfg.data.val).src  # absolute stays absolute
    if not current_corpus(REPO / cfg.data.train.src):
        wait([sh("prepare", "synth_ende")])
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    train_and_evaluate(out, [x for o in args.overrides for x in ("--set", o)], env)
    pictures(out, test_src, env)
    results = [
        json.loads((out / mode / "eval_test.json").read_text()) for mode in MODES
    ]
    minutes = (time.monotonic() - start) / 60
    print(f"\nTest BLEU by source length (words), shipped corpus, {minutes:.1f} min:\n")
    print(table(results))
    print(f"\n{results[0]['signature']}")
    here = Path.cwd()
    shown = out.relative_to(here) if out.is_relative_to(here) else out
    print(f"\nPlot:         {shown / 'compare/bleu_by_length.png'}")
    print(f"Significance: {shown / 'compare/significance.md'} (paired bootstrap)")
    print(f"Heatmap:      {shown / 'heatmap/line00001.png'} (one test sentence)")
    print(f"TensorBoard:  {tensorboard_command(shown)}")


if __name__ == "__main__":
    run_script(main)
