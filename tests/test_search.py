"""Greedy and beam search: beam 1 is greedy, batching changes nothing, scores
are the model's own log-probabilities."""

from __future__ import annotations

import pytest
import torch
from conftest import MODES, tiny_model

from seq2seq.data.batching import collate
from seq2seq.model.search import (
    Decoding,
    beam_search,
    best_continuations,
    greedy,
    max_output_len,
    search,
)
from seq2seq.specials import BOS, EOS
from seq2seq.training.decoding import decode_corpus

SOURCES = [[5, 6, 7, 8], [9, 10], [5, 9, 11, 12, 13, 14, 6], [7], [8, 8, 8]]


def model_for(mode: str, eos_bias: float = 2.0, rnn: str = "gru") -> torch.nn.Module:
    """A random tiny model whose outputs end at varied lengths (EOS made likely
    enough to compete with the other tokens)."""
    model = tiny_model(mode, rnn).eval()
    with torch.no_grad():
        model.decoder.output.bias[EOS] += eos_bias
    return model


def batch_of(ids: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    b = collate(ids, None, list(range(len(ids))))
    return b.src, b.src_len


@pytest.mark.parametrize("eos_bias", [2.0, -30.0])  # ends with EOS / at the limit
@pytest.mark.parametrize("mode", MODES)
def test_beam_one_is_greedy(mode: str, eos_bias: float) -> None:
    model = model_for(mode, eos_bias)
    src, src_len = batch_of(SOURCES)
    greedy_hyps = greedy(model, src, src_len, ratio=1.5)
    beam_hyps = beam_search(model, src, src_len, beam=1, ratio=1.5)
    limits = max_output_len(src_len, 1.5).tolist()
    ended = [len(h.tokens) < n for h, n in zip(greedy_hyps, limits, strict=True)]
    assert any(ended) if eos_bias > 0 else not any(ended)
    for g, (b,) in zip(greedy_hyps, beam_hyps, strict=True):
        assert b.tokens == g.tokens
        assert b.score == pytest.approx(g.score, abs=1e-5)
        if g.weights is None:
            assert b.weights is None
        else:
            torch.testing.assert_close(b.weights, g.weights)


def test_search_is_greedy_for_beam_one_and_beam_search_above() -> None:
    model = model_for("additive")
    src, src_len = batch_of(SOURCES)
    one = search(model, src, src_len, Decoding(1), ratio=1.5)
    assert [[h.tokens for h in n] for n in one] == [
        [h.tokens] for h in greedy(model, src, src_len, ratio=1.5)
    ]
    three = search(model, src, src_len, Decoding(3, 0.5), ratio=1.5, nbest=2)
    want = beam_search(model, src, src_len, beam=3, alpha=0.5, ratio=1.5, nbest=2)
    assert [[(h.tokens, h.score) for h in n] for n in three] == [
        [(h.tokens, h.score) for h in n] for n in want
    ]


@pytest.mark.parametrize("mode", ["none", "additive", "general"])
def test_batched_beam_equals_one_sentence_at_a_time(mode: str) -> None:
    model = model_for(mode, rnn="lstm" if mode == "general" else "gru")
    src, src_len = batch_of(SOURCES)
    together = beam_search(model, src, src_len, beam=4, nbest=3)
    for ids, nbest in zip(SOURCES, together, strict=True):
        alone = beam_search(model, *batch_of([ids]), beam=4, nbest=3)[0]
        assert [h.tokens for h in nbest] == [h.tokens for h in alone]
        for x, y in zip(nbest, alone, strict=True):
            assert x.score == pytest.approx(y.score, abs=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_scores_are_length_normalised_log_probabilities(alpha: float) -> None:
    model = model_for("additive")
    src, src_len = batch_of(SOURCES)
    results = beam_search(model, src, src_len, beam=5, alpha=alpha, nbest=5)
    for b, nbest in enumerate(results):
        scores = [h.score for h in nbest]
        assert len(nbest) == 5 and scores == sorted(scores, reverse=True)
        n = int(src_len[b])
        for hyp in nbest:
            ended = len(hyp.tokens) < int(n * 2.0) + 10  # else cut at the limit
            tgt_in = torch.tensor([[BOS, *hyp.tokens]])
            tgt_out = hyp.tokens + [EOS] if ended else hyp.tokens
            attentional, maps = model(src[b : b + 1, :n], src_len[b : b + 1], tgt_in)
            weights = model.shown(maps)
            logits = model.logits(attentional[0, : len(tgt_out)])
            logp = torch.log_softmax(logits, dim=-1)
            total = logp[range(len(tgt_out)), tgt_out].sum().item()
            assert hyp.score == pytest.approx(total / len(tgt_out) ** alpha, abs=1e-4)
            torch.testing.assert_close(hyp.weights, weights[0, : len(tgt_out)])


def test_nbest_must_fit_the_beam() -> None:
    src, src_len = batch_of(SOURCES)
    with pytest.raises(ValueError, match="nbest"):
        beam_search(model_for("none"), src, src_len, beam=2, nbest=3)


def test_decode_corpus_with_a_beam_keeps_input_order() -> None:
    model = model_for("dot")
    cpu = torch.device("cpu")
    together = decode_corpus(model, SOURCES, 2, 2.0, cpu, Decoding(beam=3))
    for ids, hyp in zip(SOURCES, together, strict=True):
        alone = beam_search(model, *batch_of([ids]), beam=3)[0][0]
        assert hyp.tokens == alone.tokens


@pytest.mark.parametrize(
    ("vocab", "rows", "n"),
    [(8000, 1, 1), (8000, 5, 10), (8001, 3, 4), (301, 5, 10), (6, 1, 10)],
)
def test_best_continuations_are_the_best_candidates(
    vocab: int, rows: int, n: int
) -> None:
    """Exactly the n best of score + log p over all rows and words of each
    sentence, also when the vocabulary is not a multiple of the chunk, is
    smaller than n chunks, or has fewer than n candidates (then -inf)."""
    gen = torch.Generator().manual_seed(vocab)
    sentences = 7
    logits = 3 * torch.randn(sentences * rows, vocab, generator=gen)
    scores = torch.randn(sentences, rows, generator=gen)
    top, parent, word = best_continuations(logits, scores, n)
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    cand = (logp + scores.view(-1, 1)).view(sentences, rows * vocab)
    m = min(n, rows * vocab)
    expected, pos = cand.topk(m, dim=1)
    # Bitwise: both sides take logsumexp of the same (rows, V) tensor and then
    # one subtraction and one addition per candidate, which IEEE rounds alike
    # on every CPU; chunking only changes which candidates are ranked.
    assert torch.equal(top[:, :m], expected)
    first = torch.arange(sentences).unsqueeze(1) * rows
    assert torch.equal(parent[:, :m], pos // vocab + first)
    assert torch.equal(word[:, :m], pos % vocab)
    assert (top[:, m:] == float("-inf")).all()


def test_beam_stops_only_with_nbest_hypotheses_in_hand() -> None:
    """Sentences that leave the batch early keep their whole n-best list."""
    model = model_for("additive", eos_bias=6.0)  # EOS is the best first word
    src, src_len = batch_of(SOURCES)
    for nbest in (1, 3, 5):
        results = beam_search(model, src, src_len, beam=5, nbest=nbest)
        assert all(len(r) == nbest for r in results)


@pytest.mark.parametrize("mode", ["none", "additive"])
def test_greedy_matches_teacher_forcing_on_its_own_output(mode: str, toy_batch) -> None:
    """Feeding greedy's output back under teacher forcing gives the same argmax."""
    src, src_len, _, _ = toy_batch
    model = tiny_model(mode).eval()
    hyps = greedy(model, src, src_len, ratio=1.0)
    for b, hyp in enumerate(hyps):
        n = src_len[b : b + 1]
        tgt_in = torch.tensor([[2] + hyp.tokens])
        attentional, maps = model(src[b : b + 1, : int(n)], n, tgt_in)
        weights = model.shown(maps)
        predicted = model.logits(attentional).argmax(-1)[0].tolist()
        assert predicted[: len(hyp.tokens)] == hyp.tokens
        if weights is not None:
            rows = hyp.weights.shape[0]
            torch.testing.assert_close(weights[0, :rows], hyp.weights)


@pytest.mark.parametrize("eos_bias", [2.0, -30.0])  # EOS likely / never chosen
def test_greedy_stops_at_eos_or_limit(toy_batch, eos_bias: float) -> None:
    """A hypothesis ends where the model's argmax is EOS (checked by teacher
    forcing it), or at the limit, ratio x source length + 10."""
    src, src_len, _, _ = toy_batch
    model = tiny_model("additive").eval()
    with torch.no_grad():
        model.decoder.output.bias[EOS] += eos_bias
    hyps = greedy(model, src, src_len, ratio=1.0)
    for b, hyp in enumerate(hyps):
        limit = int(src_len[b]) + 10
        assert EOS not in hyp.tokens and len(hyp.tokens) <= limit
        if len(hyp.tokens) == limit:
            continue
        tgt_in = torch.tensor([[BOS, *hyp.tokens]])
        n = src_len[b : b + 1]
        attentional, _ = model(src[b : b + 1, : int(n)], n, tgt_in)
        assert model.logits(attentional)[0, -1].argmax().item() == EOS
    stopped = sum(len(h.tokens) < int(src_len[b]) + 10 for b, h in enumerate(hyps))
    assert stopped == (len(hyps) if eos_bias > 0 else 0)
