"""Peak memory of decoding a whole file against its length: `evaluate` and
`translate`, each in a fresh process, on test files of several sizes.

    python scripts/bench/decode_memory.py RUN_DIR [--sizes 2000 8000] [--beam 5]

The run is copied to a scratch folder first (evaluate writes its scores into
the run it scores), its test split pointed at the first N pairs of a shipped-
corpus test split generated large enough (seed 7; the run's own corpus is
left alone). Each command runs in a process of its own, whose peak resident
memory (ru_maxrss) is read by the process that waited for it. Prints one
Markdown table: peak RSS per command and size, and the ratio of the largest
size's peak to the smallest's (memory bounded by the batch: close to 1).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from seq2seq import run
from seq2seq.data.synth import write_corpus
from seq2seq.errors import run_script

PEAK = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_mib(command: list[str]) -> float:
    """The peak RSS of ``command`` in MiB, run in a process of its own."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK, *command], capture_output=True, text=True
    )
    code, kib = out.stdout.split()
    if code != "0":
        raise SystemExit(f"error: {' '.join(command)} failed:\n{out.stderr[-2000:]}")
    return int(kib) / 1024


def scratch_run(run_dir: Path, scratch: Path, src: Path, tgt: Path) -> Path:
    """A copy of ``run_dir`` whose test split is ``src``/``tgt``."""
    copy = scratch / "run"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("events.*"))
    config = run.config_file(copy)
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    cfg["data"]["test"] = {"src": str(src), "tgt": str(tgt)}
    config.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return copy


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    p.add_argument("--beam", type=int, default=5)
    args = p.parse_args()
    seq2seq = [sys.executable, "-m", "seq2seq"]
    beam = ["--beam", str(args.beam), "--device", "cpu"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        corpus = scratch / "corpus"
        sizes = {"train": 10, "val": 10, "test": max(args.sizes)}
        write_corpus(corpus, seed=7, sizes=sizes)
        for n in args.sizes:
            src, tgt = scratch / f"test{n}.en", scratch / f"test{n}.de"
            for side, path in (("en", src), ("de", tgt)):
                lines = (corpus / f"test.{side}").read_text(encoding="utf-8")
                path.write_text("".join(lines.splitlines(True)[:n]), encoding="utf-8")
            run = scratch_run(args.run_dir, scratch / str(n), src, tgt)
            evaluate = peak_mib([*seq2seq, "evaluate", str(run), *beam])
            out = ["--output", str(scratch / f"out{n}.de")]
            translate = peak_mib(
                [*seq2seq, "translate", str(run), "--input", str(src), *out, *beam]
            )
            rows.append((n, evaluate, translate))
            print(
                f"{n} sentences: evaluate {evaluate:.0f} MiB, translate "
                f"{translate:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    print(f"| sentences | evaluate --beam {args.beam} | translate --beam {args.beam} |")
    print("|---|---|---|")
    for n, e, t in rows:
        print(f"| {n:,} | {e:.0f} MiB | {t:.0f} MiB |")
    (n0, e0, t0), (n1, e1, t1) = rows[0], rows[-1]
    print(f"| {n1:,} / {n0:,} | {e1 / e0:.2f}x | {t1 / t0:.2f}x |")


if __name__ == "__main__":
    run_script(main)
