"""Scores: sacreBLEU and chrF on detokenized text, BLEU by source length, AER."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sacrebleu
from sacrebleu.utils import sum_of_lists
from torch import Tensor

from seq2seq.results import Bucket, Joined, Paired, PairedBucket

Link = tuple[int, int]


# Every corpus score takes the references as ``refs``, the first stream (one
# reference a line, line for line with the hypotheses), and ``more``: any
# further streams, as sacreBLEU's CLI takes several reference files.
Streams = Sequence[Sequence[str]]


def bleu(
    hyps: Sequence[str],
    refs: Sequence[str],
    lowercase: bool = False,
    more: Streams = (),
) -> tuple[float, str]:
    """Corpus BLEU (sacreBLEU defaults: 13a, case-sensitive) and its signature.

    ``lowercase=True`` scores lowercased text: the setting of the widely used
    bentrevett/pytorch-seq2seq tutorials (lowercased, tokenized), for comparing
    with their figures only; the cased score is the headline."""
    metric = sacrebleu.BLEU(lowercase=lowercase)
    score = corpus_score(metric, hyps, refs, more=more)
    return score, str(metric.get_signature())  # nrefs: as counted in scoring


def chrf(
    hyps: Sequence[str], refs: Sequence[str], more: Streams = ()
) -> tuple[float, str]:
    metric = sacrebleu.CHRF()
    score = corpus_score(metric, hyps, refs, more=more)
    return score, str(metric.get_signature())  # nrefs: as counted in scoring


CHUNK = 1000  # sentences whose reference n-grams sacreBLEU holds at once


def corpus_score(
    metric: Any,
    hyps: Sequence[str],
    refs: Sequence[str],
    chunk: int = CHUNK,
    more: Streams = (),
) -> float:
    """``metric.corpus_score(hyps, [refs, *more])``, computed ``chunk``
    sentences at a time: sacreBLEU caches every reference's n-grams before
    scoring (tens of KB a sentence for chrF's character n-grams), while the
    score needs only the summed statistics. The same number, in memory that
    does not grow with the corpus (tested against corpus_score)."""
    streams = [refs, *more]
    if not hyps:  # sacreBLEU's own answer (an error) for an empty corpus
        return float(metric.corpus_score(list(hyps), [list(r) for r in streams]).score)
    total: list[float] = []
    for start in range(0, len(hyps), chunk):
        part = metric._extract_corpus_statistics(
            list(hyps[start : start + chunk]),
            [list(r[start : start + chunk]) for r in streams],
        )
        parts = [total, *part] if total else part
        total = sum_of_lists(parts)  # type: ignore[no-untyped-call]
    return float(metric._aggregate_and_compute([total]).score)


def sentence_bleu(hyp: str, ref: str) -> float:
    return sacrebleu.sentence_bleu(hyp, [ref]).score


def sentence_chrf(hyp: str, ref: str) -> float:
    return sacrebleu.sentence_chrf(hyp, [ref]).score


def length_buckets(
    lengths: Sequence[int], edges: Sequence[int]
) -> list[tuple[int, int, list[int]]]:
    """Split positions into buckets (lo, hi, indices) by length.

    ``edges`` are inclusive upper bounds; a last bucket holds longer ones and
    its ``hi`` is the longest length seen. Every position is in one bucket.
    """
    buckets, lo = [], 1
    for hi in [*edges, max([*lengths, edges[-1] + 1])]:
        index = [i for i, n in enumerate(lengths) if lo <= n <= hi]
        buckets.append((lo, hi, index))
        lo = hi + 1
    return buckets


def scores_by_length(
    hyps: Sequence[str],
    refs: Sequence[str],
    src_lengths: Sequence[int],
    edges: Sequence[int],
    more: Streams = (),
) -> list[Bucket]:
    """Corpus BLEU and chrF within each source-length bucket."""
    out = []
    for lo, hi, index in length_buckets(src_lengths, edges):
        if not index:
            out.append(Bucket(lo, hi, 0, None))
            continue
        h, r = [hyps[i] for i in index], [refs[i] for i in index]
        rest = [[m[i] for i in index] for m in more]
        scores = bleu(h, r, more=rest)[0], chrf(h, r, more=rest)[0]
        out.append(Bucket(lo, hi, len(index), *scores))
    return out


def bleu_by_sentences(
    hyps: Sequence[str], refs: Sequence[str], groups: Sequence[Sequence[int]]
) -> list[Joined]:
    """For the pairs made of k sentences, for each k (one k unless joined):
    their BLEU, and how many sentences the hypotheses and the references hold
    on average (``hyp_sentences``, ``ref_sentences``; a model that drops or
    merges sentences of a long input writes fewer than the references)."""
    out = []
    for k in sorted({len(g) for g in groups}):
        pick = [i for i, g in enumerate(groups) if len(g) == k]
        score = bleu([hyps[i] for i in pick], [refs[i] for i in pick])[0]
        written = sum(sentence_count(hyps[i]) for i in pick) / len(pick)
        expected = sum(sentence_count(refs[i]) for i in pick) / len(pick)
        out.append(Joined(k, len(pick), score, written, expected))
    return out


# A sentence's end: . ! or ? before a space or the end of the text.
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def sentence_count(text: str) -> int:
    """Sentences in ``text``, counted by their end marks ("A dog runs. Two
    men sit." holds 2; a caption without a final mark counts 0)."""
    return len(SENTENCE_END.findall(text))


def alignment_from_attention(
    weights: Tensor, src_words: Sequence[int], tgt_words: Sequence[int]
) -> set[Link]:
    """Word links from attention: each target subword links its word to the
    word of the source subword it attends to most (argmax). Rows/columns past
    the given subwords (EOS) are ignored; so is a target subword whose argmax
    is the source EOS."""
    links = set()
    best = weights.argmax(dim=-1).tolist()  # (T,)
    for t, s in enumerate(best[: len(tgt_words)]):
        if s < len(src_words):
            links.add((src_words[s], tgt_words[t]))
    return links


def batch_alignments(
    weights: Tensor,
    index: Sequence[int],
    src_words: Sequence[Sequence[int]],
    tgt_words: Sequence[Sequence[int]],
) -> list[set[Link]]:
    """:func:`alignment_from_attention` for every row of a batch (B, T, S);
    row r is sentence ``index[r]``, whose subword-to-word maps are given."""
    return [
        alignment_from_attention(weights[row].float().cpu(), src_words[i], tgt_words[i])
        for row, i in enumerate(index)
    ]


def aer(predicted: Sequence[set[Link]], gold: Sequence[set[Link]]) -> float:
    """Alignment error rate (Och & Ney 2003) with sure = possible = gold:
    AER = 1 - 2|A & S| / (|A| + |S|)."""
    return aer_from_counts(*aer_counts(predicted, gold))


def aer_counts(
    predicted: Sequence[set[Link]], gold: Sequence[set[Link]]
) -> tuple[int, int]:
    """(|A & S|, |A| + |S|) summed over the pairs: what :func:`aer` needs of
    them, so that a corpus can be scored batch by batch in constant memory."""
    hit = sum(len(a & s) for a, s in zip(predicted, gold, strict=True))
    total = sum(len(a) + len(s) for a, s in zip(predicted, gold, strict=True))
    return hit, total


def aer_from_counts(hit: int, total: int) -> float:
    return 1.0 - 2.0 * hit / total if total else 0.0


def attention_stats(
    weights: Tensor, src_len: Tensor, tgt_mask: Tensor
) -> dict[str, float]:
    """Sums over the real target tokens of one batch (divide by ``tokens``):

    - ``entropy``: of each row's distribution over the source (nats),
    - ``peak``: its largest weight,
    - ``eos_mass``: the weight on the source end-of-sentence token,
    - ``monotone``: 1 where the argmax does not move left of the previous
      token's (a measure of diagonality; counted from the second token on).
    """
    w = weights.float()  # (B, T, S)
    rows = tgt_mask.float()  # (B, T)
    entropy = -(w * w.clamp_min(1e-12).log()).sum(-1)
    eos = w.gather(
        2, (src_len.to(w.device) - 1).view(-1, 1, 1).expand(-1, w.size(1), 1)
    )
    best = w.argmax(-1)  # (B, T)
    steps = (best[:, 1:] >= best[:, :-1]).float() * rows[:, 1:]
    return {
        "tokens": float(rows.sum()),
        "entropy": float((entropy * rows).sum()),
        "peak": float((w.max(-1).values * rows).sum()),
        "eos_mass": float((eos.squeeze(-1) * rows).sum()),
        "monotone": float(steps.sum()),
        "moves": float(rows[:, 1:].sum()),
    }


def paired_bootstrap(
    baseline: Sequence[str],
    systems: dict[str, Sequence[str]],
    refs: Sequence[str],
    samples: int = 1000,
    more: Streams = (),
) -> tuple[dict[str, dict[str, float]], str]:
    """sacreBLEU's paired bootstrap resampling (Koehn 2004) of each system's
    BLEU against the baseline: {name: {score, mean, ci, p_value}}, signature."""
    from sacrebleu.significance import PairedTest

    streams = [list(r) for r in (refs, *more)]
    test = PairedTest(
        [("baseline", list(baseline)), *((k, list(v)) for k, v in systems.items())],
        {"BLEU": sacrebleu.BLEU(references=streams)},
        references=None,
        test_type="bs",
        n_samples=samples,
    )
    signatures, scores = test()
    out: dict[str, dict[str, float]] = {}
    for name, result in zip(scores["System"][1:], scores["BLEU"][1:], strict=True):
        out[str(name)] = {
            key: float(getattr(result, key))
            for key in ("score", "mean", "ci", "p_value")
        }
    return out, str(signatures["BLEU"])


def bootstrap_by_length(
    baseline: Sequence[str],
    hyps: Sequence[str],
    refs: Sequence[str],
    src_lengths: Sequence[int] | None,
    edges: Sequence[int],
    more: Streams = (),
) -> tuple[Paired, tuple[PairedBucket, ...], str]:
    """The paired bootstrap of ``hyps`` against ``baseline`` on the whole set
    and within each source-length bucket (None where a bucket is empty; no
    buckets where ``src_lengths`` is None), and sacreBLEU's signature: what
    compare and score report."""
    overall, signature = paired_bootstrap(baseline, {"run": hyps}, refs, more=more)
    per_bucket = []
    buckets = [] if src_lengths is None else length_buckets(src_lengths, edges)
    for lo, hi, index in buckets:
        test = None
        if index:
            b, h, r = ([x[i] for i in index] for x in (baseline, hyps, refs))
            rest = [[m[i] for i in index] for m in more]
            test = Paired(**paired_bootstrap(b, {"run": h}, r, more=rest)[0]["run"])
        per_bucket.append(PairedBucket(lo, hi, len(index), test))
    return Paired(**overall["run"]), tuple(per_bucket), signature
