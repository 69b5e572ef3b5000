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
from seq2seq.training.board import EOS_LABEL
from seq2seq.training.checkpoint import load_run
from seq2seq.training.metrics import Link, aer, alignment_from_attention
from seq2seq.training.scoring import forced_weights

LESSON_FILE = Path("configs/experiments/lesson.yaml")  # from the repository root
CORPUS = "data/lesson"  # where the file's overrides expect the corpus


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


def forced_alignments(
    run_dir: Path, split: str = "test", index: Sequence[int] | None = None
) -> list[Aligned]:
    """:class:`Aligned` for the pairs ``index`` of ``split`` (all if None), from
    the run's best checkpoint on the CPU, 64 pairs at a time."""
    cpu = torch.device("cpu")
    cfg, tok, model, _ = load_run(Path(run_dir), "best", cpu)
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
            gold = set(map(tuple, pairs.align[i]))
            out.append(Aligned(w, src, tgt, links, gold, pairs.src[i], pairs.tgt[i]))
    return out
