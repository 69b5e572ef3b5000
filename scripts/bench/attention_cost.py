"""What self-attention costs as the source grows, against an RNN encoder:
time and peak memory of one forward pass over a batch of sources of length
L, for L = 64 ... 2048, as a Markdown table (and a log-log plot).

    python scripts/bench/attention_cost.py [--lengths 64 128 ... 2048]
        [--batch 8] [--repeats 5] [--threads 2] [--plot PNG] [--json]

Three encoders of width 256, no gradient: the Transformer's self-attention
(one multi-head layer, 4 heads: the reference, which forms the (L, L)
weights of every head, and torch's fused kernel, which does not keep them)
and the RNN's bidirectional GRU of 128 per direction (the packed nn.GRU).
Each length and encoder runs in a process of its own: its time is the median
of ``--repeats`` passes after one warm-up pass, its memory what the passes
add to the process's peak resident set (ru_maxrss) over torch, the inputs
and the weights.
Self-attention compares every position with every other: its time and its
weights grow as L^2; the RNN reads the positions one after another: L. The
last row is each column's slope on the log-log plot from 256 positions on
(least squares; 2 for L^2, 1 for L), below which fixed costs blur it (from
the shortest, where fewer than two lengths reach 256).
``--json`` prints the measurements and slopes as JSON instead (notebook 6
reads them).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

from seq2seq.errors import run_script
from seq2seq.files import save_figure

ENCODERS = ("self-attention", "self-attention, fused", "biGRU")

ONE = r"""
import json, resource, statistics, sys, time
import torch
from torch import nn
from seq2seq.model.transformer.attention import MultiHeadAttention
kind, length, batch, repeats, threads = sys.argv[1], *map(int, sys.argv[2:])
torch.set_num_threads(threads)
torch.manual_seed(0)
x = torch.randn(batch, length, 256)
if kind == "biGRU":
    gru = nn.GRU(256, 128, batch_first=True, bidirectional=True).eval()
    run = lambda: gru(x)[0]
else:
    att = MultiHeadAttention(256, 4, 0.0, fused=kind.endswith("fused")).eval()
    mask = torch.ones(batch, 1, 1, length, dtype=torch.bool)
    def run():
        k, v = att.keys_values(x)
        return att(x, k, v, mask, need_weights=not att.fused)[0]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # torch, inputs, weights
with torch.no_grad():
    run()  # warm-up: kernels chosen, buffers allocated once
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"ms": 1000 * statistics.median(times),
                  "peak_mib": (after - base) / 1024}))
"""


def measure(kind: str, length: int, args: argparse.Namespace) -> dict[str, float]:
    values = [str(v) for v in (length, args.batch, args.repeats, args.threads)]
    done = subprocess.run(
        [sys.executable, "-c", ONE, kind, *values], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"error: {kind} at {length}:\n{done.stderr[-2000:]}")
    found: dict[str, float] = json.loads(done.stdout)
    return found


def plot(rows: dict[str, dict[int, dict[str, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for kind, by_length in rows.items():
        lengths = sorted(by_length)
        left.plot(lengths, [by_length[n]["ms"] for n in lengths], "o-", label=kind)
        right.plot(
            lengths, [by_length[n]["peak_mib"] for n in lengths], "o-", label=kind
        )
    for ax, what in (
        (left, "time of one forward pass (ms)"),
        (right, "memory added at its peak (MiB)"),
    ):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("source length L (positions)")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    left.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


FROM = 256  # the slopes are fitted from here on, where two lengths are


def slope(points: dict[int, float], start: int) -> float:
    """Least-squares slope of log(value) against log(length), from ``start``
    on (NaN where fewer than two values there are above zero)."""
    kept = [
        (math.log(n), math.log(v)) for n, v in points.items() if n >= start and v > 0
    ]
    if len(kept) < 2:
        return math.nan
    mx = sum(x for x, _ in kept) / len(kept)
    my = sum(y for _, y in kept) / len(kept)
    num = sum((x - mx) * (y - my) for x, y in kept)
    return num / sum((x - mx) ** 2 for x, _ in kept)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--lengths", type=int, nargs="+", default=[64, 128, 256, 512, 1024, 2048]
    )
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--plot", type=Path)
    p.add_argument("--json", action="store_true", help="print JSON, not a table")
    args = p.parse_args()
    start = FROM if sum(n >= FROM for n in args.lengths) >= 2 else min(args.lengths)
    rows: dict[str, dict[int, dict[str, float]]] = {k: {} for k in ENCODERS}
    for length in args.lengths:  # the encoders alternate at every length
        for kind in ENCODERS:
            rows[kind][length] = measure(kind, length, args)
    slopes = {
        kind: {
            w: slope({n: c[w] for n, c in by.items()}, start)
            for w in ("ms", "peak_mib")
        }
        for kind, by in rows.items()
    }
    if args.json:
        print(json.dumps({"rows": rows, "slopes": slopes, "from": start}))
    else:
        print(table(rows, slopes, args.lengths, start))
    if args.plot:
        plot(rows, args.plot)
        print(f"\nplot: {args.plot}")


def table(
    rows: dict[str, dict[int, dict[str, float]]],
    slopes: dict[str, dict[str, float]],
    lengths: list[int],
    start: int,
) -> str:
    head = " | ".join(f"{k} ms | {k} MiB" for k in ENCODERS)
    lines = [f"| L | {head} |", "|---" * (1 + 2 * len(ENCODERS)) + "|"]
    for length in lengths:
        cells = []
        for kind in ENCODERS:
            got = rows[kind][length]
            cells += [f"{got['ms']:,.1f}", f"{got['peak_mib']:,.0f}"]
        lines.append(f"| {length:,} | " + " | ".join(cells) + " |")
    fitted = [f"{slopes[k][w]:.2f}" for k in ENCODERS for w in ("ms", "peak_mib")]
    lines.append(f"| slope from {start:,} | " + " | ".join(fitted) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    run_script(main)
