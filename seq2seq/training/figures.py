"""Every figure the lab draws, in one place: attention heatmaps (TensorBoard,
``translate --plot``, the notebooks), their word view, seq2seq probe's plot and
seq2seq compare's BLEU by source length. Each returns a matplotlib Figure;
the caller saves it (files.save_figure) or hands it to TensorBoard."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from torch import Tensor  # noqa: E402

from seq2seq.data.tokenizer import word_index  # noqa: E402
from seq2seq.results import Bucket, ProbeResult  # noqa: E402

EOS_LABEL = "</s>"  # the end-of-sentence row/column of a heatmap


FORCED_ROWS = "reference (forced decoding)"  # a heatmap's rows when forced


def heatmap(
    weights: Tensor,
    src: Sequence[str],
    tgt: Sequence[str],
    title: str,
    target: str = "generated",
    keys: str = "source",
) -> Figure:
    """Source subwords on x, target subwords on y, with a colour bar.
    ``target`` labels the rows: "generated" for a search's output,
    FORCED_ROWS when the reference was fed in (forced decoding); ``keys``
    the columns (a self-attention's are its own sequence)."""
    rows, cols = weights.shape
    size = (max(4.0, 2.5 + 0.22 * cols), max(3.0, 1.8 + 0.22 * rows))
    fig, ax = plt.subplots(figsize=size, dpi=100)
    image = ax.imshow(
        weights.numpy(), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto"
    )
    ax.set_xticks(range(cols), labels=_short(src[:cols]), rotation=90, fontsize=9)
    ax.set_yticks(range(rows), labels=_short(tgt[:rows]), fontsize=9)
    ax.set_xlabel(keys)
    ax.set_ylabel(target)
    ax.set_title(title, fontsize=11)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    fig.tight_layout()
    return fig


def _short(labels: Sequence[str], width: int = 16) -> list[str]:
    """Tick labels cut to ``width`` characters (merged words can be long)."""
    return [x if len(x) <= width else x[: width - 1] + "…" for x in labels]


def word_view(
    weights: Tensor, src: Sequence[str], tgt: Sequence[str]
) -> tuple[Tensor, list[str], list[str]]:
    """Merge subwords into words (``▁`` starts one): a source word's column is
    the sum of its pieces' (rows stay distributions), a target word's row the
    mean of its pieces' rows, leaving out pieces that are only punctuation
    (the ``.`` glued to a sentence's last word is read as a sentence end, not
    as that word; a word of punctuation alone keeps its pieces). ``</s>``
    keeps its own row and column."""
    cols = _groups(src)
    rows = _groups(tgt[: weights.size(0)])
    merged = torch.stack([weights[:, c].sum(dim=1) for c in cols], dim=1)  # (T, W_s)
    words = [[i for i in r if not _punctuation(tgt[i])] or r for r in rows]
    merged = torch.stack([merged[r].mean(dim=0) for r in words])  # (W_t, W_s)
    return merged, _labels(src, cols), _labels(tgt, rows)


def _punctuation(piece: str) -> bool:
    """A subword of punctuation marks only (``.``, ``▁,``), not ``</s>``."""
    text = piece.replace("\u2581", "")
    return (
        piece != EOS_LABEL
        and bool(text)
        and all(unicodedata.category(c)[0] == "P" for c in text)
    )


def _groups(pieces: Sequence[str]) -> list[list[int]]:
    """Indices of the pieces of each word, ``</s>`` alone."""
    words = word_index([p for p in pieces if p != EOS_LABEL])
    groups: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        groups.setdefault(w, []).append(i)
    out = list(groups.values())
    return out + [[len(words)]] if len(words) < len(pieces) else out


def _labels(pieces: Sequence[str], groups: list[list[int]]) -> list[str]:
    return ["".join(pieces[i] for i in g).replace("\u2581", "") for g in groups]


PROBE_MIN_N = 20  # positions seen fewer times are left out of the probe plot


def probe_figure(results: Sequence[ProbeResult]) -> Figure:
    """seq2seq probe, one colour per run: the probe's accuracy by source word
    position (dashed: the same probe without the vector), by relative position
    (0 = first word, 1 = last), and the output's recall by reference position."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8), dpi=100)
    for k, r in enumerate(results):
        colour = f"C{k}"
        name = Path(r.run).name
        label = r.mode if name == r.mode else f"{r.mode} ({name})"
        for ax, curve in ((axes[0], r.by_position), (axes[2], r.output_by_position)):
            rows = [p for p in curve if p.n >= PROBE_MIN_N]
            ax.plot(
                [p.position for p in rows],
                [p.accuracy for p in rows],
                colour,
                label=label,
            )
        rows = [p for p in r.baseline_by_position if p.n >= PROBE_MIN_N]
        xs = [p.position for p in rows]
        axes[0].plot(xs, [p.accuracy for p in rows], colour, ls="--", lw=0.8)
        bins = [b for b in r.by_relative_position if b.n >= PROBE_MIN_N]
        middles = [(b.lo + b.hi) / 2 for b in bins]
        accuracy = [math.nan if b.accuracy is None else b.accuracy for b in bins]
        axes[1].plot(middles, accuracy, colour, marker="o")
    titles = (
        "word i named from the vector (dashed: position only)",
        "the same by relative position",
        "output words right, by position",
    )
    xlabels = ("source word position", "position / (length - 1)", "reference position")
    for ax, title, xlabel in zip(axes, titles, xlabels, strict=True):
        ax.set(xlabel=xlabel, ylim=(0, 1))
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("accuracy")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def bleu_length_figure(
    lines: Sequence[tuple[str, Sequence[Bucket]]], subtitle: str = "test"
) -> Figure:
    """BLEU, and chrF where it was scored by length, per source-length bucket,
    one line per run (its label, its buckets): seq2seq compare's plot (Fig. 2
    of Bahdanau et al. 2015). Buckets no sentence falls into are left out."""
    ticks = [f"{b.lo}-{b.hi}\n(n={b.n})" for b in lines[0][1] if b.n]
    metrics = ["bleu"] + (
        ["chrf"] if any(b.chrf is not None for _, bs in lines for b in bs) else []
    )
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(6 + 4 * len(metrics), 4.5), dpi=100, squeeze=False
    )
    for ax, metric in zip(axes[0], metrics, strict=True):
        name = {"bleu": "BLEU", "chrf": "chrF"}[metric]
        for k, (label, buckets) in enumerate(lines):
            scores = [getattr(b, metric) for b in buckets if b.n]
            style = "o-" if k < 10 else "s--"  # 10 colours, then dashed
            ax.plot(range(len(scores)), scores, style, label=label)
        ax.set_xticks(range(len(ticks)), labels=ticks)
        ax.set_xlabel("source sentence length (words)")
        ax.set_ylabel(name)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"{name} by source length ({subtitle})")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig
