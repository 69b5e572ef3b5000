"""One scorer: what validation during training and ``seq2seq evaluate`` both
measure, computed here and nowhere else.

- :func:`text_scores`: of decoded text against the references, sacreBLEU and
  chrF with their signatures, BLEU by source length and by sentences joined;
- :func:`forced`: the references force-decoded (teacher forcing), giving the
  token cross-entropy, the attention's diagnostics (entropy, peak, weight on
  the source EOS, monotonicity) and, where the corpus has gold word links,
  the alignment error rate (AER) of the attention's argmax;
- :func:`forced_weights`: the same forced attention, sentence by sentence,
  for heatmaps; :func:`forced_maps`: every map of every kind, layer and head
  (a Transformer's), sentence by sentence.

Each caller chooses the batches (validation keeps training's batch limits,
evaluate decodes whole sorted batches), so each keeps its memory bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from seq2seq.data.batching import collate
from seq2seq.data.tokenizer import Tokenizer
from seq2seq.data.workspace import Encoded
from seq2seq.model.interface import KINDS, Maps, Model, by_side
from seq2seq.model.model import loss_sum
from seq2seq.results import TextScores
from seq2seq.specials import PAD
from seq2seq.training.device import autocast
from seq2seq.training.metrics import (
    Streams,
    aer_counts,
    aer_from_counts,
    attention_stats,
    batch_alignments,
    bleu,
    bleu_by_sentences,
    chrf,
    scores_by_length,
)


def text_scores(
    texts: Sequence[str],
    refs: Sequence[str],
    src_words: Sequence[int] | None,
    groups: Sequence[Sequence[int]],
    buckets: Sequence[int],
    more: Streams = (),
) -> TextScores:
    """BLEU, chrF, their signatures, BLEU and chrF by source length
    (``buckets``: the inclusive upper edges, eval.buckets; no buckets where
    ``src_words`` is None: seq2seq score without a source) and BLEU by
    sentences joined (``groups``: the original pairs of each pair,
    Split.groups), against ``refs`` and any further references ``more``."""
    bleu_score, signature = bleu(texts, refs, more=more)
    chrf_score, chrf_signature = chrf(texts, refs, more=more)
    by_length = (
        ()
        if src_words is None
        else scores_by_length(texts, refs, src_words, buckets, more)
    )
    return TextScores(
        n=len(texts),
        bleu=bleu_score,
        chrf=chrf_score,
        bleu_lc=bleu(texts, refs, lowercase=True, more=more)[0],  # tutorials'
        signature=signature,
        chrf_signature=chrf_signature,
        buckets=tuple(by_length),
        by_sentences=tuple(bleu_by_sentences(texts, refs, groups)),
    )


@dataclass
class Forced:
    """What forced decoding of the references measured."""

    loss: float = 0.0  # summed token cross-entropy
    tokens: int = 0  # real target tokens (EOS included)
    attention: dict[str, float] = field(default_factory=dict)  # per-token means
    aer: float | None = None  # None without gold links or without attention

    @property
    def token_loss(self) -> float:
        return self.loss / max(self.tokens, 1)


@torch.no_grad()
def forced(
    model: Model,
    data: Encoded,
    tok: Tokenizer,
    batches: Sequence[Sequence[int]],
    device: torch.device,
    precision: str = "auto",
) -> Forced:
    """Force-decode the pairs of ``batches`` (index lists into ``data``)."""
    model.eval()
    out, sums = Forced(), dict[str, float]()
    words = data.word_indices(tok) if data.split.align is not None else None
    hit, total, scored = 0, 0, False  # AER's counts, batch by batch (memory: one)
    for index in batches:
        batch = collate(data.src_ids, data.tgt_ids, index).to(device)
        with autocast(device, precision):
            loss, maps = loss_sum(
                model, batch.src, batch.src_len, batch.tgt_in, batch.tgt_out
            )
        weights = model.shown(maps)  # (B, T, S) or None: the display policy's
        out.loss, out.tokens = out.loss + loss.item(), out.tokens + batch.n_tgt_tokens
        if weights is None:
            continue
        stats = attention_stats(weights, batch.src_len, batch.tgt_out != PAD)
        sums = {k: sums.get(k, 0.0) + v for k, v in stats.items()}
        if words is not None and data.split.align is not None:
            predicted = batch_alignments(weights, index, *words)
            gold = [set(data.split.align[i]) for i in index]
            batch_hit, batch_total = aer_counts(predicted, gold)
            hit, total, scored = hit + batch_hit, total + batch_total, True
    out.attention = _averages(sums)
    if scored:
        out.aer = aer_from_counts(hit, total)
    return out


@torch.no_grad()
def forced_weights(
    model: Model,
    data: Encoded,
    index: Sequence[int],
    device: torch.device,
    precision: str = "auto",
) -> list[torch.Tensor]:
    """The attention (T_ref + 1, S + 1) of each pair in ``index`` with its
    reference fed in (EOS rows and columns included), on the CPU."""
    shown = [
        model.shown(maps)
        for maps in forced_maps(
            model, data.src_ids, data.tgt_ids, index, device, precision
        )
    ]
    if any(weights is None for weights in shown):
        raise ValueError(f"a {model.mode} model has no attention to force-decode")
    return [weights[0] for weights in shown if weights is not None]


def _averages(sums: dict[str, float]) -> dict[str, float]:
    """Per-token means of :func:`attention_stats` sums."""
    if not sums:
        return {}
    tokens, moves = max(sums["tokens"], 1.0), max(sums["moves"], 1.0)
    return {
        "entropy": sums["entropy"] / tokens,
        "peak": sums["peak"] / tokens,
        "eos_mass": sums["eos_mass"] / tokens,
        "monotone": sums["monotone"] / moves,
    }


@torch.no_grad()
def forced_maps(
    model: Model,
    src_ids: Sequence[list[int]],
    tgt_ids: Sequence[list[int]],
    index: Sequence[int],
    device: torch.device,
    precision: str = "auto",
) -> list[Maps]:
    """Every attention map of each pair in ``index`` (of ``src_ids`` and
    ``tgt_ids``: a split's references, or hypotheses) with its target fed
    in, one Maps per pair (B = 1), each kind cut to the pair's real positions
    (source and target with their EOS or BOS: cross (1, L, h, T + 1, S + 1),
    encoder_self (.., S + 1, S + 1), decoder_self (.., T + 1, T + 1)), on the
    CPU."""
    batch = collate(src_ids, tgt_ids, index).to(device)
    with autocast(device, precision):
        _, maps = model(batch.src, batch.src_len, batch.tgt_in)
    out = []
    for k, i in enumerate(index):
        s, t = len(src_ids[i]) + 1, len(tgt_ids[i]) + 1
        cut = {}
        for kind in KINDS:
            found = maps.of(kind)
            if found is not None:
                q, keys = by_side(kind, s, t, t)  # the prefix is as long
                cut[kind] = found[k : k + 1, ..., :q, :keys].float().cpu()
        out.append(Maps(**cut))
    return out


@torch.no_grad()
def aer_by_map(
    model: Model,
    data: Encoded,
    tok: Tokenizer,
    batches: Sequence[Sequence[int]],
    device: torch.device,
) -> dict[tuple[int, int | None], float]:
    """The AER of every cross-attention map, references force-decoded as
    :func:`forced` does: key (layer, None) for a layer's heads averaged,
    (layer, head) for one head, layers and heads counted from 0. Needs the
    split's gold links; empty for a model without cross-attention."""
    if data.split.align is None:
        raise ValueError("aer_by_map needs a split with gold word links")
    model.eval()
    words = data.word_indices(tok)
    counts: dict[tuple[int, int | None], tuple[int, int]] = {}
    for index in batches:
        batch = collate(data.src_ids, data.tgt_ids, index).to(device)
        _, maps = model(batch.src, batch.src_len, batch.tgt_in)
        if maps.cross is None:
            return {}
        gold = [set(data.split.align[i]) for i in index]
        layers, heads = maps.cross.shape[1:3]  # (B, L, h, T, S)
        for layer in range(layers):
            views: dict[int | None, torch.Tensor] = {
                None: maps.cross[:, layer].mean(dim=1)
            }
            views |= {h: maps.cross[:, layer, h] for h in range(heads)}
            for head, weights in views.items():
                predicted = batch_alignments(weights, index, *words)
                hit, total = aer_counts(predicted, gold)
                before = counts.get((layer, head), (0, 0))
                counts[(layer, head)] = (before[0] + hit, before[1] + total)
    return {key: aer_from_counts(*c) for key, c in counts.items()}
