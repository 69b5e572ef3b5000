"""Attention ablations: uniform, shuffled and absent weights at decoding time."""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_model

from seq2seq.errors import UserError
from seq2seq.lab import ablate as ab
from seq2seq.model.attention import Additive
from seq2seq.model.search import greedy
from seq2seq.specials import EOS

MASK = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)


def inner() -> Additive:
    torch.manual_seed(0)
    return Additive(4, 6, 5)


def test_uniform_spreads_weight_evenly_over_real_positions() -> None:
    q, keys = torch.randn(2, 4), torch.randn(2, 5, 6)
    context, w = ab.Uniform(inner())(q, keys, MASK)
    torch.testing.assert_close(w[1], torch.tensor([1 / 3] * 3 + [0.0, 0.0]))
    torch.testing.assert_close(context[1], keys[1, :3].mean(0))


def test_shuffle_keeps_the_weights_but_moves_them() -> None:
    torch.manual_seed(1)
    q, keys = torch.randn(2, 4), torch.randn(2, 5, 6)
    layer = inner()
    _, trained = layer(q, keys, MASK)
    _, shuffled = ab.Shuffle(layer, seed=3)(q, keys, MASK)
    for b in range(2):
        torch.testing.assert_close(shuffled[b].sort().values, trained[b].sort().values)
    assert torch.all(shuffled[1, 3:] == 0)
    assert not torch.equal(shuffled, trained)


def test_no_context_gives_zeros() -> None:
    context, w = ab.NoContext(inner())(torch.randn(2, 4), torch.randn(2, 5, 6), MASK)
    assert w is None and torch.all(context == 0) and context.shape == (2, 6)


@pytest.mark.parametrize("kind", ab.KINDS)
def test_ablation_changes_what_an_attention_model_writes(kind: str) -> None:
    model = tiny_model("additive").eval()
    with torch.no_grad():
        model.decoder.output.bias[EOS] -= 30.0  # write to the length limit
        model.decoder.combine.weight[:, 16:] *= 20.0  # make the context count
        model.decoder.attention.v.weight *= 50.0  # and the weights sharp
    src = torch.randint(4, 23, (6, 9))
    src_len = torch.full((6,), 9)
    before = [h.tokens for h in greedy(model, src, src_len)]
    ab.ablate(model, kind)
    after = [h.tokens for h in greedy(model, src, src_len)]
    assert before != after


def test_modes_without_attention_and_unknown_kinds_are_refused() -> None:
    with pytest.raises(UserError, match="mode 'none' has no attention to ablate"):
        ab.ablate(tiny_model("none"), "uniform")
    with pytest.raises(UserError, match="choose one of uniform, shuffle, none"):
        ab.ablate(tiny_model("dot"), "zero")
