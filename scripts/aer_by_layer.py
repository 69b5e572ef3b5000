"""The AER of every cross-attention map of a trained run, as a Markdown table.

    python scripts/aer_by_layer.py RUN_DIR [--split test] [--checkpoint best]

The references are force-decoded as ``seq2seq evaluate`` does for its AER
(scoring.aer_by_map), and each layer's cross-attention is scored with its
heads averaged and head by head: which map a Transformer's display policy
should draw (docs/model.md gives the figures). The split needs gold word
links (``data.<split>.align``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from seq2seq.data.batching import bucket_batches
from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError, run_script
from seq2seq.training.checkpoint import open_run
from seq2seq.training.scoring import aer_by_map


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--split", default="test")
    p.add_argument("--checkpoint", default="best")
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    torch.set_num_threads(2)
    r = open_run(args.run_dir, args.checkpoint)
    data = encode(load_split(r.cfg.data, args.split), r.tok)
    if data.split.align is None:
        raise UserError(f"data.{args.split}.align: the split has no gold word links")
    batches = bucket_batches(data.lengths(), 10**9, args.batch)
    found = aer_by_map(r.model, data, r.tok, batches, torch.device("cpu"))
    if not found:
        raise UserError(f"{args.run_dir}: the model has no cross-attention")
    layers = 1 + max(layer for layer, _ in found)
    heads = 1 + max(h for _, h in found if h is not None)
    print(f"{args.run_dir}, {args.split} (n={len(data.src_ids)}), AER, lower is better")
    print()
    print(
        "| layer | heads averaged | best head | "
        + " | ".join(f"head {h + 1}" for h in range(heads))
        + " |"
    )
    print("|---" * (3 + heads) + "|")
    for layer in range(layers):
        each = [found[(layer, h)] for h in range(heads)]
        best = min(range(heads), key=lambda h: each[h])
        cells = [f"{found[(layer, None)]:.3f}", f"{each[best]:.3f} (head {best + 1})"]
        cells += [f"{a:.3f}" for a in each]
        print(f"| {layer + 1} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    run_script(main)
