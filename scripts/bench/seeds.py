"""Test BLEU of both toolkits over several seeds: the summary of bench/seeds.sh.

    python scripts/bench/seeds.py DIR...

Each DIR is one seed's side-by-side run, named ``seed<N>`` (bench/seeds.sh
writes them), with the ``report.json`` that bench/joeynmt.sh printed. Prints,
as JSON, each seed's test BLEU (greedy and beam 5) and ratios, then per
toolkit the mean and sample standard deviation of BLEU over the seeds, and
ours minus JoeyNMT: the difference of the means and each seed's difference.
One seed says little: five-epoch BLEU moves by about a point from run to run.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

# The decodings report.py writes for each toolkit, as its JSON names them.
SEARCHES = ("greedy", "beam 5")
TOOLKITS = ("joeynmt", "seq2seq")


def read(run: Path) -> tuple[int, dict]:
    """The seed (from the folder's name) and the report of one run."""
    if not run.name.startswith("seed") or not run.name[4:].isdigit():
        sys.exit(f"error: {run}: expected a folder named seed<N> (bench/seeds.sh)")
    report = run / "report.json"
    try:
        return int(run.name[4:]), json.loads(report.read_text())
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"error: {report}: {e}; run bash scripts/bench/seeds.sh again")


def per_seed(report: dict) -> dict:
    """BLEU of both toolkits and the speed ratios of one run."""
    out: dict = {t: {s: report[t][s]["bleu"] for s in SEARCHES} for t in TOOLKITS}
    return out | {"ratios": report["ratios"]}


def spread(values: list[float]) -> dict[str, float | None]:
    """Mean and sample standard deviation (None for a single seed)."""
    sd = round(statistics.stdev(values), 2) if len(values) > 1 else None
    return {"mean": round(statistics.mean(values), 2), "sd": sd}


def summary(reports: dict[int, dict]) -> dict:
    seeds = {seed: per_seed(report) for seed, report in sorted(reports.items())}
    runs = list(seeds.values())
    out: dict = {"seeds": seeds}
    for toolkit in TOOLKITS:
        out[toolkit] = {s: spread([run[toolkit][s] for run in runs]) for s in SEARCHES}
    ours, joey = out["seq2seq"], out["joeynmt"]
    out["seq2seq minus joeynmt"] = {
        s: {
            "of the means": round(ours[s]["mean"] - joey[s]["mean"], 2),
            "each seed": [round(r["seq2seq"][s] - r["joeynmt"][s], 2) for r in runs],
        }
        for s in SEARCHES
    }
    return out


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python scripts/bench/seeds.py DIR... (seed<N> folders)")
    runs = dict(read(Path(arg)) for arg in sys.argv[1:])
    steps = {report["steps"] for report in runs.values()}
    if len(steps) != 1:
        sys.exit(f"error: the runs trained different numbers of updates: {steps}")
    print(json.dumps({"steps": steps.pop()} | summary(runs), indent=2))


if __name__ == "__main__":
    main()
