"""The figures: heatmaps and their word view, compare's BLEU by length."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from seq2seq.results import Bucket
from seq2seq.training.figures import (
    FORCED_ROWS,
    bleu_length_figure,
    heatmap,
    word_view,
)


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


def test_a_target_words_row_leaves_out_its_punctuation_pieces() -> None:
    """`selten.` is the row of `▁selten`: the full stop's row looks at the
    source's sentence end, not at what the word translates; a word of
    punctuation alone (`▁—`) keeps its row."""
    src = ["▁rarely", "▁laughs", ".", "</s>"]
    tgt = ["▁selten", ".", "▁—", "</s>"]
    weights = torch.tensor(
        [
            [0.7, 0.2, 0.1, 0.0],
            [0.0, 0.3, 0.7, 0.0],
            [0.1, 0.1, 0.1, 0.7],
            [0, 0, 0, 1.0],
        ]
    )
    merged, src_words, tgt_words = word_view(weights, src, tgt)
    assert tgt_words == ["selten.", "—", "</s>"]
    assert src_words == ["rarely", "laughs.", "</s>"]
    torch.testing.assert_close(merged[0], torch.tensor([0.7, 0.3, 0.0]))
    torch.testing.assert_close(merged[1], torch.tensor([0.1, 0.2, 0.7]))


def test_word_view_of_a_hypothesis_cut_at_the_limit() -> None:
    """Without an end-of-sentence row, the rows stop at the last word."""
    weights = torch.full((2, 3), 1 / 3)
    merged, _, tgt_words = word_view(weights, ["▁a", "▁b", "</s>"], ["▁x", "y", "</s>"])
    assert tgt_words == ["xy"] and merged.shape == (1, 3)


def test_a_heatmap_labels_its_rows_as_generated_or_forced() -> None:
    """Forced decoding feeds the reference in: its rows are not the model's
    output, and the figure says so."""
    weights = torch.full((3, 4), 0.25)  # (T, S)
    src, tgt = ["▁a", "▁b", "c", "</s>"], ["▁x", "▁y", "</s>"]
    for target in ("generated", FORCED_ROWS):
        fig = heatmap(weights, src, tgt, "title", target)
        assert fig.axes[0].get_ylabel() == target
        assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == tgt
        plt.close(fig)
    assert heatmap(weights, src, tgt, "t").axes[0].get_ylabel() == "generated"


def test_the_length_figure_draws_a_line_per_run_over_filled_buckets() -> None:
    buckets = [Bucket(1, 10, 5, 40.0), Bucket(11, 20, 0, None), Bucket(21, 30, 2, 9.5)]
    fig = bleu_length_figure([("none", buckets), ("additive", buckets)], "test")
    (ax,) = fig.axes  # results without chrF by length: BLEU only
    assert [line.get_label() for line in ax.get_lines()] == ["none", "additive"]
    assert list(ax.get_lines()[0].get_ydata()) == [40.0, 9.5]  # the empty one left out
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "1-10\n(n=5)",
        "21-30\n(n=2)",
    ]
    plt.close(fig)
    scored = [Bucket(1, 10, 5, 40.0, 61.0), Bucket(11, 20, 2, 9.5, 30.5)]
    fig = bleu_length_figure([("none", scored)], "test")
    assert [ax.get_ylabel() for ax in fig.axes] == ["BLEU", "chrF"]
    assert list(fig.axes[1].get_lines()[0].get_ydata()) == [61.0, 30.5]
    plt.close(fig)
