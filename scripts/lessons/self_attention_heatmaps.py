"""The classroom exercise: look at w[0] of one untrained self-attention layer.

Runs :class:`seq2seq.lesson.attention.SingleHeadAttention` (d_model 64, d_k 16, random
weights, fixed seed) on two inputs of eight positions and draws the weight
matrix of the first sentence as a labelled heatmap:

1. random vectors: every row is a different distribution with no pattern;
2. a sentence with repeated words ("the cat saw the dog and the cat"), each
   word a fixed random embedding and no position information: identical words
   get identical rows (same query) and identical columns (same key), so the
   matrix repeats itself. Without positions, self-attention cannot tell the
   two "cat"s apart: it is permutation-equivariant.

    python scripts/lessons/self_attention_heatmaps.py [--out self_attention.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch import Tensor

from seq2seq.errors import run_script
from seq2seq.lesson.attention import SingleHeadAttention

WORDS = "the cat saw the dog and the cat".split()


def weights(seed: int = 0) -> tuple[Tensor, Tensor]:
    """w[0] (8, 8) for random inputs and for the repeated-word sentence."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layer = SingleHeadAttention(d_model=64, d_k=16).eval()
    random_x = torch.randn(1, len(WORDS), 64, generator=g)
    vocab = sorted(set(WORDS))
    table = torch.randn(len(vocab), 64, generator=g)  # one embedding per word
    words_x = table[[vocab.index(w) for w in WORDS]].unsqueeze(0)  # (1, 8, 64)
    with torch.no_grad():
        return layer(random_x, random_x)[1][0], layer(words_x, words_x)[1][0]


def repeats(w: Tensor) -> float:
    """Largest difference between the rows, and columns, of identical words."""
    diff = 0.0
    for i, a in enumerate(WORDS):
        for j, b in enumerate(WORDS):
            if a == b:
                diff = max(diff, (w[i] - w[j]).abs().max().item())
                diff = max(diff, (w[:, i] - w[:, j]).abs().max().item())
    return diff


def plot(random_w: Tensor, words_w: Tensor, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), dpi=100)
    positions = [str(i) for i in range(len(WORDS))]
    panels = [
        (random_w, positions, "random inputs"),
        (words_w, WORDS, "repeated words, no positions"),
    ]
    for ax, (w, labels, title) in zip(axes, panels, strict=True):
        image = ax.imshow(w.numpy(), cmap="viridis", vmin=0)
        ax.set_xticks(range(len(labels)), labels=labels, rotation=45)
        ax.set_yticks(range(len(labels)), labels=labels)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        ax.set_title(f"w[0]: {title}")
        fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("self_attention.png"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    random_w, words_w = weights(args.seed)
    torch.set_printoptions(precision=2, sci_mode=False)
    print(f"w[0], random inputs:\n{random_w}\n")
    print(f"w[0], '{' '.join(WORDS)}':\n{words_w}\n")
    print(f"identical words, largest row/column difference: {repeats(words_w):.1e}")
    print(f"random inputs, same positions compared:         {repeats(random_w):.2f}")
    plot(random_w, words_w, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_script(main)
