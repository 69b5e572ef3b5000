"""A trained run's attention on reference translations, pair by pair, beside
the gold word alignments of the shipped corpus: to draw a heatmap, to score
it (AER) and to find where the two disagree (notebooks 3 and 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import UserError
from seq2seq.model.interface import Maps
from seq2seq.training.checkpoint import open_run
from seq2seq.training.figures import EOS_LABEL, word_view
from seq2seq.training.metrics import Link, aer, alignment_from_attention
from seq2seq.training.scoring import forced_maps


@dataclass
class Aligned:
    """One pair's attention under forced decoding of its reference, beside
    its gold word alignment."""

    weights: Tensor  # (T + 1, S + 1): reference subwords and EOS x source and EOS
    maps: Maps  # every kind the model has, of every layer and head (B = 1)
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

    def misreads(self, margin: float = 0.1) -> list[tuple[int, int, float, float]]:
        """(source word, target word, its weight, the gold links' best weight)
        for every target word whose brightest cell in :meth:`words` is not
        one of its gold links and outweighs them all by ``margin`` or more:
        what a reader of the word heatmap sees as a white dot clearly off the
        bright cell, not a near tie. (``predicted``, and so the AER, take the
        argmax of each *subword* row instead, and link every piece's pick to
        its word.)"""
        weights, _, tgt = self.words()
        out = []
        for t in range(len(tgt) - 1):  # not </s>
            s = int(weights[t].argmax())
            gold = [float(weights[t, g]) for g, u in self.gold if u == t]
            best = max(gold, default=0.0)
            if (s, t) not in self.gold and float(weights[t, s]) >= best + margin:
                out.append((s, t, float(weights[t, s]), best))
        return out


def forced_alignments(
    run_dir: Path, split: str = "test", index: Sequence[int] | None = None
) -> list[Aligned]:
    """:class:`Aligned` for the pairs ``index`` of ``split`` (all if None), from
    the run's best checkpoint on the CPU, 64 pairs at a time; ``weights`` is
    the map that stands for the model (its display policy: a Transformer's
    last layer's cross-attention, heads averaged), ``maps`` all of them."""
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
        found = forced_maps(model, data.src_ids, data.tgt_ids, part, cpu)
        for i, maps in zip(part, found, strict=True):
            shown = model.shown(maps)
            if shown is None:
                raise UserError(f"{run_dir}: a {model.mode} model has no attention")
            w = shown[0]
            links = alignment_from_attention(w, src_words[i], tgt_words[i])
            src = [*tok.src_pieces(data.src_ids[i]), EOS_LABEL]
            tgt = [*tok.tgt_pieces(data.tgt_ids[i]), EOS_LABEL]
            gold = {(s, t) for s, t in pairs.align[i]}
            aligned = Aligned(
                w, maps, src, tgt, links, gold, pairs.src[i], pairs.tgt[i]
            )
            out.append(aligned)
    return out
