"""sacreBLEU/chrF wrappers, length buckets, attention alignments and AER."""

from __future__ import annotations

import pytest
import torch

from seq2seq.training.metrics import (
    aer,
    alignment_from_attention,
    bleu,
    bleu_by_sentences,
    chrf,
    length_buckets,
    scores_by_length,
    sentence_count,
)


def test_bleu_and_chrf_on_real_text() -> None:
    refs = ["The cat sat on the mat.", "A dog runs in the park."]
    score, signature = bleu(refs, refs)
    assert round(score, 6) == 100.0 and "13a" in signature and "case:mixed" in signature
    assert bleu(["The cat sat.", "A dog."], refs)[0] < 50
    assert round(chrf(refs, refs)[0], 6) == 100.0


def test_every_sentence_in_exactly_one_bucket() -> None:
    lengths = [1, 3, 10, 11, 20, 21, 35, 70]
    buckets = length_buckets(lengths, [10, 20])
    assert [(lo, hi) for lo, hi, _ in buckets] == [(1, 10), (11, 20), (21, 70)]
    assert sorted(i for *_, idx in buckets for i in idx) == list(range(len(lengths)))
    assert buckets[1][2] == [3, 4]


def test_scores_by_length_count_add_up_and_equal_each_bucket_scored_alone() -> None:
    hyps = ["a b c d", "x y", "a b c d e f g h i j k l"]
    refs = ["a b c d", "p q", "a b c d e f g h i j k l"]
    out = scores_by_length(hyps, refs, [4, 2, 12], [5, 10])
    assert [b.n for b in out] == [2, 0, 1]
    assert out[1].bleu is None and out[1].chrf is None
    assert round(out[2].bleu or 0, 6) == 100.0 and round(out[2].chrf or 0, 6) == 100.0
    assert out[0].bleu == bleu(hyps[:2], refs[:2])[0]
    assert out[0].chrf == chrf(hyps[:2], refs[:2])[0]


def test_sentences_written_are_counted_per_k() -> None:
    """A hypothesis that drops one of two joined sentences writes 1 of 2."""
    refs = ["A dog runs.", "A man sits. Two kids play.", "Cats sleep! Who? Me."]
    hyps = ["A dog runs.", "A man sits and two kids play.", "Cats sleep. Me."]
    groups = [[0], [1, 2], [3, 4, 5]]
    out = bleu_by_sentences(hyps, refs, groups)
    assert [(b.k, b.hyp_sentences, b.ref_sentences) for b in out] == [
        (1, 1.0, 1.0),
        (2, 1.0, 2.0),
        (3, 2.0, 3.0),
    ]
    assert round(out[0].bleu, 6) == 100.0 and out[1].bleu < 99.0
    assert sentence_count("3.5 m. high") == 1  # a decimal point ends nothing
    assert sentence_count("no mark") == 0


def test_alignment_from_attention_maps_subwords_to_words() -> None:
    # target pieces 0,1,2 -> words 0,1,1; source pieces 0,1 -> words 0,1; col 2 = EOS
    weights = torch.tensor(
        [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0, 0, 1.0]]
    )
    links = alignment_from_attention(weights, [0, 1], [0, 1, 1])
    assert links == {(0, 0), (1, 1)}  # row 2 attends to EOS: no link; row 3 is EOS


def test_aer() -> None:
    gold = [{(0, 0), (1, 1)}]
    assert aer([{(0, 0), (1, 1)}], gold) == 0.0
    assert aer([{(0, 1), (1, 0)}], gold) == 1.0
    assert abs(aer([{(0, 0)}], gold) - (1 - 2 / 3)) < 1e-9


def test_attention_stats_on_known_weights() -> None:
    from seq2seq.training.metrics import attention_stats

    # one sentence: 3 source positions (last = EOS), 3 target rows, third is padding
    w = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]])
    stats = attention_stats(w, torch.tensor([3]), torch.tensor([[True, True, False]]))
    assert stats["tokens"] == 2 and stats["moves"] == 1
    assert abs(stats["entropy"] - 0.6931) < 1e-3  # 0 + ln 2
    assert stats["peak"] == 1.5 and stats["eos_mass"] == 0.5
    assert stats["monotone"] == 1.0  # argmax moved right (0 -> 1)


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_corpus_scores_in_chunks_equal_sacrebleus(chunk: int) -> None:
    """BLEU (cased and lowercased) and chrF summed chunk by chunk are
    sacreBLEU's corpus scores exactly: memory is bounded, the figure is not
    changed."""
    import random

    import sacrebleu

    from seq2seq.data.synth import generate_pairs
    from seq2seq.training.metrics import corpus_score

    rng = random.Random(0)
    refs = [de for _, de, _ in generate_pairs(40, seed=0)]
    hyps = [
        " ".join(rng.sample(r.split(), len(r.split()))) if i % 3 else r
        for i, r in enumerate(refs)
    ]
    for metric in (sacrebleu.BLEU(), sacrebleu.BLEU(lowercase=True), sacrebleu.CHRF()):
        expected = metric.corpus_score(hyps, [refs]).score
        assert corpus_score(metric, hyps, refs, chunk) == expected
