"""TensorBoard helpers: probe choice and the word view of a heatmap."""

from __future__ import annotations

import torch

from seq2seq.board import word_view


def test_word_view_sums_source_pieces_and_averages_target_pieces() -> None:
    src = ["▁Der", "▁Hund", "e", "▁bellt", "</s>"]
    tgt = ["▁The", "▁dog", "s", "</s>"]
    torch.manual_seed(0)
    weights = torch.softmax(torch.randn(4, 5), dim=-1)  # (T, S)
    merged, src_words, tgt_words = word_view(weights, src, tgt)
    assert src_words == ["Der", "Hunde", "bellt", "</s>"]
    assert tgt_words == ["The", "dogs", "</s>"]
    assert merged.shape == (3, 4)
    torch.testing.assert_close(merged.sum(-1), torch.ones(3))  # still distributions
    w = weights
    columns = torch.stack([w[:, 0], w[:, 1] + w[:, 2], w[:, 3], w[:, 4]], dim=1)
    torch.testing.assert_close(merged[0], columns[0])
    torch.testing.assert_close(merged[1], (columns[1] + columns[2]) / 2)  # "dogs"
    torch.testing.assert_close(merged[2], columns[3])  # </s> stays itself


def test_word_view_of_a_hypothesis_cut_at_the_limit() -> None:
    """Without an end-of-sentence row, the rows stop at the last word."""
    weights = torch.full((2, 3), 1 / 3)
    merged, _, tgt_words = word_view(weights, ["▁a", "▁b", "</s>"], ["▁x", "y", "</s>"])
    assert tgt_words == ["xy"] and merged.shape == (1, 3)
