"""Decoding a corpus: many sentences in length-sorted batches, greedily or
with beam search (model/search.py does one batch), after checking that the
search's state fits on the device."""

from __future__ import annotations

from collections.abc import Callable

import torch

from seq2seq.data.batching import bucket_batches, collate
from seq2seq.model.interface import Model
from seq2seq.model.search import GREEDY, Decoding, Hypothesis, search
from seq2seq.training.device import check_fits


def check_search_fits(
    model: Model, sentences: int, beam: int, device: torch.device
) -> None:
    """Refuse a search whose state cannot fit before it starts: each step
    holds (sentences x beam, vocabulary) logits and a few temporaries of that
    size (the log-softmax, the chunk maxima), four copies in fp32."""
    vocab = model.vocab_size
    need = 4 * 4 * sentences * beam * vocab
    check_fits(
        need,
        device,
        f"beam search over {sentences} sentences with {{beam}} {beam}",
        "lower {beam}, or the sentences decoded at once ({batch_size}, "
        "eval.batch_sentences)",
    )


def decode_corpus(
    model: Model,
    src_ids: list[list[int]],
    batch_sentences: int,
    ratio: float,
    device: torch.device,
    decoding: Decoding = GREEDY,
    keep_weights: bool = False,
    after_batch: Callable[[int], None] | None = None,
) -> list[Hypothesis]:
    """Decode many sentences in length-sorted batches, greedily (beam 1) or
    with beam search (the best hypothesis); input order kept. Only the tokens
    and score of each are kept unless ``keep_weights`` (a few sentences drawn
    as heatmaps): memory grows with the batch, not with the corpus.
    ``after_batch(n)`` is told the n sentences of each batch as it is done
    (the explorer's progress bar; it also lets requests in between batches)."""
    model.eval()
    check_search_fits(model, min(batch_sentences, len(src_ids)), decoding.beam, device)
    lengths = [(len(s) + 1, 0) for s in src_ids]
    out: list[Hypothesis | None] = [None] * len(src_ids)
    for index in bucket_batches(
        lengths, max_tokens=10**9, max_sentences=batch_sentences
    ):
        batch = collate(src_ids, None, index)
        src, src_len = batch.src.to(device), batch.src_len
        hyps = [n[0] for n in search(model, src, src_len, decoding, ratio)]
        for i, hyp in zip(index, hyps, strict=True):
            out[i] = hyp if keep_weights else Hypothesis(hyp.tokens, None, hyp.score)
        if after_batch is not None:
            after_batch(len(index))
    return out  # type: ignore[return-value]
