"""Decoding time per sentence against source length, one line per run.

    python scripts/bench/decode_cost.py RUN_DIR... [--split test_joined] [--beam 1]
        [--threads 2] [--out decode_cost.png]

Decodes every sentence of the split alone (batch 1, so nothing else shares its
time), times each, and plots against source length in subwords, with the mean
per 10-subword bin: milliseconds per sentence (left) and per output token
(right). Attention reads all S source states at each of the T output steps, so
a step costs more as S grows and a sentence costs O(S * T); ``none`` reads one
vector, so its steps cost the same at every S. Prints the binned means as
Markdown tables.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)
import torch

from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import run_script
from seq2seq.model.search import Decoding
from seq2seq.training.checkpoint import open_run
from seq2seq.training.decoding import decode_corpus

BIN = 10  # subwords per bin


def timings(
    run: Path, split: str, decoding: Decoding, checkpoint: str
) -> list[tuple[int, float, float]]:
    """(source subwords, ms per sentence, ms per output token) per sentence."""
    opened = open_run(run, checkpoint)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    ids = encode(load_split(cfg.data, split), tok).src_ids
    cpu, ratio = torch.device("cpu"), cfg.eval.max_len_ratio
    decode_corpus(model, ids[:4], 1, ratio, cpu, decoding)  # warm-up
    out = []
    for sentence in ids:
        tick = time.perf_counter()
        (hyp,) = decode_corpus(model, [sentence], 1, ratio, cpu, decoding)
        ms = (time.perf_counter() - tick) * 1000
        out.append((len(sentence), ms, ms / (len(hyp.tokens) + 1)))  # + EOS step
    return out


def binned(points: list[tuple[int, float]]) -> dict[int, float]:
    """Mean value per bin of source length (bin start -> mean)."""
    bins: dict[int, list[float]] = {}
    for length, value in points:
        bins.setdefault(length // BIN * BIN, []).append(value)
    return {b: sum(v) / len(v) for b, v in sorted(bins.items())}


def table(title: str, means: dict[str, dict[int, float]]) -> None:
    starts = sorted({b for m in means.values() for b in m})
    print(f"\n{title}\n")
    print("| run | " + " | ".join(f"{b}-{b + BIN - 1}" for b in starts) + " |")
    print("|---" * (len(starts) + 1) + "|")
    for name, m in means.items():
        cells = [f"{m[b]:.2f}" if b in m else "" for b in starts]
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--split", default="test_joined")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--checkpoint", default="best", help="best, last, or a path")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=Path("decode_cost.png"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    decoding = Decoding(args.beam)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = ("ms per sentence (batch 1)", "ms per output token")
    means: list[dict[str, dict[int, float]]] = [{}, {}]
    for run in args.runs:
        points = timings(run, args.split, decoding, args.checkpoint)
        for k, ax in enumerate(axes):
            xy = [(p[0], p[1 + k]) for p in points]
            means[k][run.name] = binned(xy)
            dots = ax.scatter(*zip(*xy, strict=True), s=6, alpha=0.3)
            color = dots.get_facecolor()[0][:3]  # the same colour, opaque
            xs = [b + BIN / 2 for b in means[k][run.name]]
            ax.plot(xs, list(means[k][run.name].values()), color=color, label=run.name)
    for ax, label in zip(axes, labels, strict=True):
        ax.set(xlabel="source length (subwords)", ylabel=label)
        ax.legend(title="bin means")
    fig.suptitle(f"{decoding.describe()} decoding cost, {args.split}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    for title, m in zip(labels, means, strict=True):
        table(title, m)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_script(main)
