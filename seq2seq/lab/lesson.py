"""What the lesson's notebooks (docs/notebooks/) need beyond the lab's commands.

:func:`at_repository_root`: the notebooks' first call, so their relative
paths hold wherever JupyterLab starts the kernel.

:func:`lesson_experiment`: configs/experiments/lesson.yaml pointed at a corpus
folder and a runs folder, for a chosen set of modes. The notebooks and the
integration tests both call it, so the runs the tests train are the runs the
notebooks read.

:func:`run_dirs`: where an experiment file's runs are, by mode.

:func:`forced_alignments`: a trained run's attention on reference
translations, pair by pair, beside the gold word alignments, to draw a
heatmap and to find where the two disagree.

:func:`plain_name`: a mode as a figure's legend says it to a student.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import yaml
from torch import Tensor

from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError
from seq2seq.files import atomic_write
from seq2seq.lab.experiment import load_experiment, plan
from seq2seq.training.checkpoint import open_run
from seq2seq.training.figures import EOS_LABEL, word_view
from seq2seq.training.metrics import Link, aer, alignment_from_attention
from seq2seq.training.scoring import forced_weights

LESSON_FILE = Path("configs/experiments/lesson.yaml")  # from the repository root
CORPUS = "data/lesson"  # where the file's overrides expect the corpus

# What each mode lets the decoder read, in a student's words (legends, slides).
PLAIN_NAMES = {
    "none": "no attention (one vector, h₀)",
    "context": "one vector at every step",
    "mean": "mean of the encoder states",
    "hard": "hard attention (one state)",
    "additive": "additive attention",
    "dot": "dot-product attention",
    "scaled_dot": "scaled dot-product attention",
    "general": "general (bilinear) attention",
}


def plain_name(mode: str) -> str:
    """``mode`` for a legend: what the decoder reads (the mode's name when
    it has no plain name)."""
    return PLAIN_NAMES.get(mode, mode)


def at_repository_root(start: Path | None = None) -> Path:
    """Make the checkout the working folder (JupyterLab starts a notebook's
    kernel in the notebook's own folder; the lab's paths are relative to the
    checkout, the first folder at or above ``start`` holding LESSON_FILE)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / LESSON_FILE).is_file():
            os.chdir(folder)
            return folder
    raise UserError(f"{here}: not inside a seq2seq checkout (no {LESSON_FILE} above)")


def lesson_experiment(
    out: Path,
    corpus: Path,
    runs: Path,
    modes: Sequence[str] | None = None,
    source: Path = LESSON_FILE,
) -> Path:
    """Write ``source`` to ``out`` with its corpus at ``corpus``, its runs
    under ``runs`` and, given ``modes``, only those configs; return ``out``."""
    exp = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
    exp["runs_dir"] = str(runs)
    exp["overrides"] = [
        item.replace(f"={CORPUS}/", f"={corpus}/") for item in exp["overrides"]
    ]
    if modes is not None:
        known = {Path(c).stem: c for c in exp["configs"]}
        if unknown := [m for m in modes if m not in known]:
            raise UserError(
                f"{source}: no config for {', '.join(unknown)}; it has "
                f"{', '.join(known)}"
            )
        exp["configs"] = [known[m] for m in modes]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(Path(out), yaml.safe_dump(exp, sort_keys=False))
    return Path(out)


def run_dirs(path: Path, runs_dir: Path | None = None) -> dict[str, Path]:
    """{config stem: run folder} of an experiment file with one seed, the
    folders ``seq2seq experiment`` trains (under ``runs_dir`` if given)."""
    exp = load_experiment(path)
    if len(exp.seeds) != 1:
        raise UserError(f"{path}: {len(exp.seeds)} seeds; run_dirs takes one")
    if runs_dir is not None:
        exp = replace(exp, runs_dir=str(runs_dir))
    return {job.config.stem: job.run_dir for job in plan(exp)}


@dataclass
class Aligned:
    """One pair's attention under forced decoding of its reference, beside
    its gold word alignment."""

    weights: Tensor  # (T + 1, S + 1): reference subwords and EOS x source and EOS
    src: list[str]  # source subwords, then "</s>"
    tgt: list[str]  # reference subwords, then "</s>"
    predicted: set[Link]  # (source word, target word) from each row's argmax
    gold: set[Link]
    source: str  # the pair's text
    reference: str

    def aer(self) -> float:
        return aer([self.predicted], [self.gold])

    def words(self) -> tuple[Tensor, list[str], list[str]]:
        """The weights by word, as a word heatmap draws them (board.word_view):
        (target words + 1, source words + 1), ``</s>`` last on both axes."""
        return word_view(self.weights, self.src, self.tgt)

    def misreads(self) -> list[tuple[int, int, float]]:
        """(source word, target word, weight) for every target word whose
        brightest cell in :meth:`words` is not one of its gold links: what a
        reader of the word heatmap sees as a white dot off the bright cell.
        (``predicted``, and so the AER, take the argmax of each *subword*
        row instead, and link every piece's pick to its word.)"""
        weights, _, tgt = self.words()
        out = []
        for t in range(len(tgt) - 1):  # not </s>
            s = int(weights[t].argmax())
            if (s, t) not in self.gold:
                out.append((s, t, float(weights[t, s])))
        return out


def forced_alignments(
    run_dir: Path, split: str = "test", index: Sequence[int] | None = None
) -> list[Aligned]:
    """:class:`Aligned` for the pairs ``index`` of ``split`` (all if None), from
    the run's best checkpoint on the CPU, 64 pairs at a time."""
    cpu = torch.device("cpu")
    opened = open_run(Path(run_dir), "best", cpu)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    pairs = load_split(cfg.data, split)
    if pairs.align is None:
        raise UserError(f"{run_dir}: the {split} split has no gold alignments")
    data = encode(pairs, tok)
    src_words, tgt_words = data.word_indices(tok)
    chosen = list(range(len(pairs))) if index is None else list(index)
    out = []
    for start in range(0, len(chosen), 64):
        part = chosen[start : start + 64]
        for i, w in zip(part, forced_weights(model, data, part, cpu), strict=True):
            links = alignment_from_attention(w, src_words[i], tgt_words[i])
            src = [*tok.src_pieces(data.src_ids[i]), EOS_LABEL]
            tgt = [*tok.tgt_pieces(data.tgt_ids[i]), EOS_LABEL]
            gold = {(s, t) for s, t in pairs.align[i]}
            out.append(Aligned(w, src, tgt, links, gold, pairs.src[i], pairs.tgt[i]))
    return out
