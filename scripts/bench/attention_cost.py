"""What self-attention costs as the source grows, against an RNN encoder:
time and peak memory of one forward pass over a batch of sources of length
L, for L = 64 ... 2048, as a Markdown table (and a log-log plot).

    python scripts/bench/attention_cost.py [--lengths 64 128 ... 2048]
        [--batch 8] [--repeats 5] [--threads 2] [--plot PNG] [--json]

Three encoders of width 256, no gradient: the Transformer's self-attention
(one multi-head layer, 4 heads: the reference, which forms the (L, L)
weights of every head, and torch's fused kernel, which does not keep them)
and the RNN's bidirectional GRU of 128 per direction (the packed nn.GRU).
Each length and encoder runs in a process of its own (forked from one that
has imported torch, so no import is timed or repeated): its time is the median
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
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from seq2seq.errors import run_script
from seq2seq.files import save_figure

ENCODERS = ("self-attention", "self-attention, fused", "biGRU")


def one(kind: str, length: int, batch: int, repeats: int, threads: int) -> dict:
    """One encoder at one length, in a process of its own (see :func:`measure`)."""
    import resource
    import statistics
    import time

    import torch
    from torch import nn

    from seq2seq.model.transformer.attention import MultiHeadAttention

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.randn(batch, length, 256)  # (B, L, 256)
    if kind == "biGRU":
        gru = nn.GRU(256, 128, batch_first=True, bidirectional=True).eval()

        def run() -> object:
            return gru(x)[0]  # (B, L, 2 x 128)

    else:
        att = MultiHeadAttention(256, 4, 0.0, fused=kind.endswith("fused")).eval()
        mask = torch.ones(batch, 1, 1, length, dtype=torch.bool)

        def run() -> object:
            k, v = att.keys_values(x)
            return att(x, k, v, mask, need_weights=not att.fused)[0]  # (B, L, 256)

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # torch, x, weights
    with torch.no_grad():
        run()  # warm-up: kernels chosen, buffers allocated once
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"ms": 1000 * statistics.median(times), "peak_mib": (after - base) / 1024}


def measure(
    kind: str, length: int, args: argparse.Namespace, pool: ProcessPoolExecutor
) -> dict[str, float]:
    """:func:`one` in a fresh process, forked from a server that has only
    imported torch (a new process costs no second of imports, and no
    allocator cache or peak carries over from another measurement)."""
    values = (kind, length, args.batch, args.repeats, args.threads)
    try:
        found: dict[str, float] = pool.submit(one, *values).result()
    except BrokenProcessPool as err:  # killed: out of memory, most often
        raise SystemExit(f"error: {kind} at {length}: the process died") from err
    except Exception as err:  # the child's error, raised here
        raise SystemExit(f"error: {kind} at {length}: {err}") from err
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
    # The server imports torch once (and starts no thread pool: forking after
    # OpenMP has run is unsafe); each task gets a process of its own.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "seq2seq.model.transformer.attention"])
    with ProcessPoolExecutor(1, context, max_tasks_per_child=1) as pool:
        for length in args.lengths:  # the encoders alternate at every length
            for kind in ENCODERS:
                rows[kind][length] = measure(kind, length, args, pool)
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
