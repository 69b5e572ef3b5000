"""TensorBoard: scalars, alignment heatmaps of watched sentences, samples, hparams.

Open with ``tensorboard --logdir runs``. IMAGES shows, at every validation (step
through them with the slider to watch the alignment sharpen), four views of each
watched sentence: ``alignment/`` the attention while the model writes its own
hypothesis, ``forced/`` the attention while it is fed the reference (so model
and reference can be compared token by token), and ``alignment_words/`` and
``forced_words/`` the same with subwords merged into words. TEXT shows sample
translations, HPARAMS compares finished runs. The figures themselves are
figures.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import Tensor
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams

from seq2seq.files import naming, quiet_event_writer_threads, save_figure
from seq2seq.model.interface import KINDS, Maps, by_side
from seq2seq.results import ProbeResult
from seq2seq.training.figures import FORCED_ROWS, heatmap, probe_figure, word_view


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


# kind -> (its rows' labels, its columns' labels): a sentence's pieces
MapLabels = dict[str, tuple[list[str], list[str]]]


def axes(kind: str) -> tuple[str, str]:
    """What a map's rows are and what its columns are, the heatmap's axis
    titles (interface.SIDES: the reference is fed in)."""
    rows, cols = by_side(kind, "source", FORCED_ROWS, "target prefix")
    if rows == cols:  # a self-attention: which axis is which
        return f"{rows} (queries)", f"{cols} (keys)"
    return rows, cols


AXES = {kind: axes(kind) for kind in KINDS}


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

    def maps(self, name: str, maps: Maps, labels: MapLabels, step: int) -> None:
        """Every kind of ``maps`` (one sentence's, B = 1) under its own tags:
        ``<kind>/layer<l>/<name>`` each layer with its heads averaged, and
        ``<kind>/head<h>/<name>`` each head of the last layer."""
        for kind in maps.kinds:
            found = maps.of(kind)
            assert found is not None
            layers = found[0]  # (L, h, Q, K)
            rows, cols = labels[kind]
            axes = AXES[kind]
            count = layers.size(0)
            views = [
                (f"layer{i + 1}", f"layer {i + 1} · heads averaged", layers[i].mean(0))
                for i in range(count)
            ]
            views += [
                (f"head{h + 1}", f"head {h + 1} of layer {count}", layers[-1, h])
                for h in range(layers.size(1))
            ]
            for view, words, weights in views:
                title = f"step {step} · {kind} · {words}"
                fig = heatmap(weights, cols, rows, title, axes[0], axes[1])
                with naming(self.events):
                    self.writer.add_figure(
                        f"{kind}/{view}/{name}", fig, step, close=True
                    )

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
