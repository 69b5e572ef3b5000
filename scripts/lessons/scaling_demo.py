"""Why scale the dot product: softmax saturation as the dimension grows.

For queries and keys with independent N(0, 1) components, q . k has variance d,
so raw scores spread like sqrt(d) and the softmax over them turns into a near
one-hot argmax; dividing by sqrt(d) (Vaswani et al. 2017, Sec. 3.2.1) keeps the
variance at 1 for every d. This script measures, for growing d, the standard
deviation of the scores, the softmax entropy and the largest weight, raw and
scaled, prints a table and writes a plot.

    python scripts/lessons/scaling_demo.py [--keys 32] [--trials 2000]
        [--out scaling.png]
"""

from __future__ import annotations

import argparse
import math

import torch

DIMS = (4, 16, 64, 256, 1024)


def measure(d: int, keys: int, trials: int, scale: bool, seed: int) -> dict[str, float]:
    """Mean score std, softmax entropy (nats) and top weight over random trials."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(trials, 1, d, generator=g)
    k = torch.randn(trials, keys, d, generator=g)
    scores = (q @ k.transpose(1, 2)).squeeze(1)  # (trials, keys)
    if scale:
        scores = scores / math.sqrt(d)
    weights = torch.softmax(scores, dim=-1)
    entropy = -(weights * weights.clamp_min(1e-30).log()).sum(-1)
    return {
        "std": scores.std(dim=-1).mean().item(),
        "entropy": entropy.mean().item(),
        "top": weights.max(dim=-1).values.mean().item(),
    }


def table(rows: list[tuple[int, dict, dict]], keys: int) -> str:
    lines = [
        f"{keys} keys; uniform entropy = ln({keys}) = {math.log(keys):.2f} nats",
        "| d | score std raw | scaled | entropy raw | scaled "
        "| top weight raw | scaled |",
        "|---|---|---|---|---|---|---|",
    ]
    for d, raw, scaled in rows:
        lines.append(
            f"| {d} | {raw['std']:.2f} | {scaled['std']:.2f} | {raw['entropy']:.2f} "
            f"| {scaled['entropy']:.2f} | {raw['top']:.3f} | {scaled['top']:.3f} |"
        )
    return "\n".join(lines)


def plot(rows: list[tuple[int, dict, dict]], keys: int, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = [d for d, _, _ in rows]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, key, title in zip(
        axes,
        ("std", "entropy", "top"),
        ("score std", "softmax entropy (nats)", "largest weight"),
        strict=True,
    ):
        ax.plot(dims, [r[key] for _, r, _ in rows], "o-", label="q·k")
        ax.plot(dims, [s[key] for _, _, s in rows], "s-", label="q·k / √d")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("dimension d")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[1].axhline(math.log(keys), color="grey", ls=":", label="uniform")
    axes[0].legend()
    axes[1].legend()
    fig.suptitle(f"Random queries and keys, {keys} keys")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=32)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="scaling.png")
    args = parser.parse_args()
    rows = [
        (
            d,
            measure(d, args.keys, args.trials, False, args.seed),
            measure(d, args.keys, args.trials, True, args.seed),
        )
        for d in DIMS
    ]
    print(table(rows, args.keys))
    plot(rows, args.keys, args.out)
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
