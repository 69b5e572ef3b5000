"""Decoding a corpus in batches (seq2seq/training/decoding.py): input order
kept, and a search that cannot fit refused before it starts."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model

from seq2seq.errors import SettingError
from seq2seq.training.decoding import check_search_fits, decode_corpus


def test_decode_corpus_keeps_input_order(toy_batch) -> None:
    src, src_len, _, _ = toy_batch
    model = tiny_model("general").eval()
    ids = [[5, 6, 7, 8], [9, 10], [5, 9, 11]]
    together = decode_corpus(model, ids, 2, 1.0, torch.device("cpu"))
    for sentence, hyp in zip(ids, together, strict=True):
        alone = decode_corpus(model, [sentence], 1, 1.0, torch.device("cpu"))[0]
        assert hyp.tokens == alone.tokens


def test_a_search_that_cannot_fit_is_refused_in_the_settings_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(sentences x beam, vocabulary) logits, four fp32 copies: 64 x 5 x 29
    x 16 bytes is about 148 KB, more than the 100 KB this test leaves free."""
    model = tiny_model("additive")
    monkeypatch.setattr("seq2seq.training.device.available_bytes", lambda d: 100_000)
    check_search_fits(model, 8, 5, torch.device("cpu"))  # 18 KB: fits
    with pytest.raises(SettingError) as err:
        check_search_fits(model, 64, 5, torch.device("cpu"))
    assert str(err.value).startswith("beam search over 64 sentences with beam 5 needs")
    assert err.value.as_option().endswith(
        "lower --beam, or the sentences decoded at once (--batch-size, "
        "eval.batch_sentences)"
    )
