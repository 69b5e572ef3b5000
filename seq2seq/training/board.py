"""TensorBoard: scalars, alignment heatmaps of fixed probe sentences, samples, hparams.

Open with ``tensorboard --logdir runs``. IMAGES shows, at every validation (step
through them with the slider to watch the alignment sharpen), four views of each
probe sentence: ``alignment/`` the attention while the model writes its own
hypothesis, ``forced/`` the attention while it is fed the reference (so model
and reference can be compared token by token), and ``alignment_words/`` and
``forced_words/`` the same with subwords merged into words. TEXT shows sample
translations, HPARAMS compares finished runs.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from torch import Tensor  # noqa: E402
from torch.utils.tensorboard import SummaryWriter  # noqa: E402
from torch.utils.tensorboard.summary import hparams  # noqa: E402

from seq2seq.data.tokenizer import word_index  # noqa: E402
from seq2seq.files import naming, quiet_event_writer_threads, save_figure
from seq2seq.results import ProbeResult  # noqa: E402

EOS_LABEL = "</s>"  # the end-of-sentence row/column of a heatmap


@dataclass
class Watched:
    """One fixed validation sentence, decoded and drawn at every validation
    (TensorBoard's alignment/probe<k> and forced/probe<k>, and the config's
    train.num_probes, keep the name they were given first; seq2seq probe's
    classifier is another thing, lab/probe.py)."""

    index: int  # position in the validation split
    source: str
    reference: str
    src_pieces: list[str]  # source subwords + </s>, the heatmap's columns


def pick_watched(lengths: Sequence[int], count: int) -> list[int]:
    """``count`` distinct sentence indices spread over the length range
    (quantiles 10%..95%), so the heatmaps show short and long sentences."""
    if count == 0 or not lengths:
        return []
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    quantiles = [0.1 + 0.85 * k / max(count - 1, 1) for k in range(count)]
    picked: list[int] = []
    for q in quantiles:
        i = order[min(int(q * len(order)), len(order) - 1)]
        if i not in picked:
            picked.append(i)
    return picked


FORCED_ROWS = "reference (forced decoding)"  # a heatmap's rows when forced


def heatmap(
    weights: Tensor,
    src: Sequence[str],
    tgt: Sequence[str],
    title: str,
    target: str = "generated",
) -> Figure:
    """Source subwords on x, target subwords on y, with a colour bar.
    ``target`` labels the rows: "generated" for a search's output,
    FORCED_ROWS when the reference was fed in (forced decoding)."""
    rows, cols = weights.shape
    size = (max(4.0, 2.5 + 0.22 * cols), max(3.0, 1.8 + 0.22 * rows))
    fig, ax = plt.subplots(figsize=size, dpi=100)
    image = ax.imshow(
        weights.numpy(), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto"
    )
    ax.set_xticks(range(cols), labels=_short(src[:cols]), rotation=90, fontsize=9)
    ax.set_yticks(range(rows), labels=_short(tgt[:rows]), fontsize=9)
    ax.set_xlabel("source")
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


class Board:
    """A thin wrapper over SummaryWriter with the lab's tags."""

    def __init__(self, run_dir: Path, purge_step: int | None = None) -> None:
        """``purge_step``: a resumed run drops the events an interrupted one
        wrote at and after this step, so every curve continues cleanly. A
        failed write (a full disk) raises an OSError naming the event file."""
        quiet_event_writer_threads()
        with naming(run_dir):
            self.writer = SummaryWriter(log_dir=str(run_dir), purge_step=purge_step)
        # file_writer is typed None until the writer opens it (it has, above)
        file_writer: Any = self.writer.file_writer
        events = getattr(file_writer.event_writer, "_file_name", None)
        self.events = Path(events) if events else run_dir

    def scalars(self, values: dict[str, float], step: int) -> None:
        with naming(self.events):
            for tag, value in values.items():
                self.writer.add_scalar(tag, value, step)

    def alignment(
        self,
        tag: str,
        weights: Tensor,
        src: list[str],
        tgt: list[str],
        title: str,
        step: int,
        target: str = "generated",
    ) -> None:
        """The heatmap under ``tag``, and its word view under ``<tag>_words``;
        ``target`` labels the rows as in :func:`heatmap`."""
        fig = heatmap(weights, src, tgt, title, target)
        kind, name = tag.split("/", 1)
        words, src_words, tgt_words = word_view(weights, src, tgt)
        word_fig = heatmap(words, src_words, tgt_words, f"{title} · words", target)
        with naming(self.events):
            self.writer.add_figure(tag, fig, step, close=True)
            self.writer.add_figure(f"{kind}_words/{name}", word_fig, step, close=True)

    def text(self, tag: str, markdown: str, step: int) -> None:
        with naming(self.events):
            self.writer.add_text(tag, markdown, step)

    def hparams(self, params: dict[str, Any], metrics: dict[str, float]) -> None:
        """Write the HPARAMS summary into this run's own folder."""
        exp, ssi, sei = hparams(params, metrics)  # type: ignore[no-untyped-call]
        with naming(self.events):
            file_writer: Any = self.writer.file_writer  # typed None: opened
            for summary in (exp, ssi, sei):
                file_writer.add_summary(summary)
            for tag, value in metrics.items():
                self.writer.add_scalar(tag, value, 0)

    def close(self) -> None:
        with naming(self.events):
            self.writer.close()


def samples_markdown(rows: Sequence[tuple[str, str, str]]) -> str:
    """A Markdown table of (source, reference, hypothesis)."""
    lines = ["| source | reference | hypothesis |", "|---|---|---|"]
    for src, ref, hyp in rows:
        cells = [c.replace("|", "\\|") for c in (src, ref, hyp)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def log_probe(run_dir: Path, result: ProbeResult, png: Path) -> None:
    """Save the probe plot and write it, and its curves (x = position, as the
    step), to the run's TensorBoard under ``probe_<split>/``."""
    fig = probe_figure([result])
    save_figure(fig, png)
    board = Board(run_dir)
    tag = f"probe_{result.split}"
    for rows, name in (
        (result.by_position, "accuracy"),
        (result.output_by_position, "recall"),
    ):
        for p in rows:
            board.scalars({f"{tag}/{name}_by_position": p.accuracy}, p.position)
    with naming(board.events):
        board.writer.add_figure(f"{tag}/plot", fig, result.step or 0, close=True)
    board.close()
