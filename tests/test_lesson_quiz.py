"""Notebook 5's checks (seq2seq/lesson/quiz.py, exercise.py): each question
has one right option and says so only when it is chosen; the attention check
accepts a correct function and names each typical mistake in words."""

from __future__ import annotations

import math

import pytest
import torch

from seq2seq.lesson.exercise import check_attention
from seq2seq.lesson.quiz import QUESTIONS, verdict


def test_each_question_has_exactly_one_right_option() -> None:
    assert [q.key for q in QUESTIONS] == [str(k) for k in range(1, 15)]
    for q in QUESTIONS:
        rights = [
            o for o in q.options if verdict(q.key, o).startswith(f"{q.key}: right")
        ]
        assert len(rights) == 1, q.key
        assert set(q.feedback) == set(q.options), q.key
        assert verdict(q.key, f" ({rights[0].upper()}) ").startswith(f"{q.key}: right")


def test_the_right_letters_are_spread_so_one_letter_throughout_scores_low() -> None:
    """Answering one letter to every question should score near chance (a
    third of the three-option questions, half of the true/false ones), so
    no letter is right in more than 4 of the 10 three-option questions, nor
    in more than 3 of the 4 true/false ones."""
    lettered = [q.right for q in QUESTIONS if set(q.options) == {"a", "b", "c"}]
    binary = [q.right for q in QUESTIONS if set(q.options) == {"t", "f"}]
    assert len(lettered) + len(binary) == len(QUESTIONS)
    assert max(lettered.count(x) for x in "abc") <= 4, lettered
    assert max(binary.count(x) for x in "tf") <= len(binary) - 1, binary


def test_every_option_says_why_it_holds_or_not() -> None:
    """The check's worth is its feedback: every option, wrong ones included,
    has its own reason, and a wrong answer prints it."""
    for q in QUESTIONS:
        assert len(set(q.feedback.values())) == len(q.options), q.key
        for letter, why in q.feedback.items():
            said = verdict(q.key, letter)
            assert why in said and len(why) > 20, (q.key, letter)


def test_an_unanswered_or_malformed_answer_says_what_to_do() -> None:
    assert (
        verdict("3", None) == "3: no answer yet: set ANSWER_3 to a letter and run again"
    )
    assert verdict("3", "z") == "3: not yet: answer with one of a, b, c"


def solution(
    x_q, x_kv, w_q, w_k, w_v, mask=None, scale=True, guard=True, use_mask=True
):  # noqa: ANN001, ANN201
    q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.size(-1))
    if mask is not None and use_mask:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None and guard:
        weights = weights.masked_fill(~(mask != 0).any(-1, keepdim=True), 0.0)
    return weights @ v, weights


def stub(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201
    raise NotImplementedError


@pytest.mark.parametrize(
    "changes, words",
    [
        ({}, "done: shapes, values, padding and causal masks"),
        ({"scale": False}, "not yet: the weights are sharper than they should be"),
        ({"guard": False}, "not yet: a query with every key masked gives NaN"),
        ({"use_mask": False}, "a key that may not be read gets weight"),
    ],
)
def test_the_attention_check_names_each_mistake(changes: dict, words: str) -> None:
    def written(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        return solution(*args, **kwargs, **changes)

    assert words in check_attention(written)


def test_a_stub_or_a_crash_is_not_yet() -> None:
    assert check_attention(stub) == "not yet: write attention() in the cell above"
    assert check_attention(lambda *a, **k: 1 / 0).startswith(
        "not yet: it raised ZeroDivisionError"
    )
    detached = lambda *a, **k: tuple(t.detach() for t in solution(*a, **k))  # noqa: E731
    assert "gradient" in check_attention(detached) or "raised" in check_attention(
        detached
    )
