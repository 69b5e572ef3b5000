"""Attention ablations (model/ablation.py, lab/ablate.py): uniform, shuffled
and absent weights at decoding time, for the RNN's one attention and for a
Transformer's layers, heads and kinds of attention."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import tiny_model
from torch import Tensor

from seq2seq.errors import UserError
from seq2seq.lab.ablate import parse
from seq2seq.model.ablation import HOWS, Ablation, Rule
from seq2seq.model.attention import Ablated, Additive
from seq2seq.model.fast.path import PATHS
from seq2seq.model.model import build_model
from seq2seq.model.search import greedy
from seq2seq.model.transformer.config import TransformerConfig
from seq2seq.model.transformer.model import Transformer
from seq2seq.specials import EOS

MASK = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)


def inner() -> Additive:
    torch.manual_seed(0)
    return Additive(4, 6, 5)


# ---- the rules, on an RNN's (B, S) weights


def test_uniform_spreads_weight_evenly_over_real_positions() -> None:
    q, keys = torch.randn(2, 4), torch.randn(2, 5, 6)
    context, w = Ablated(inner(), Rule("uniform", None, 0))(q, keys, MASK)
    assert w is not None
    torch.testing.assert_close(w[1], torch.tensor([1 / 3] * 3 + [0.0, 0.0]))
    torch.testing.assert_close(context[1], keys[1, :3].mean(0))


def test_shuffle_keeps_the_weights_but_moves_them() -> None:
    torch.manual_seed(1)
    q, keys = torch.randn(2, 4), torch.randn(2, 5, 6)
    layer = inner()
    _, trained = layer(q, keys, MASK)
    _, shuffled = Ablated(layer, Rule("shuffle", None, 3))(q, keys, MASK)
    assert trained is not None and shuffled is not None
    for b in range(2):
        torch.testing.assert_close(shuffled[b].sort().values, trained[b].sort().values)
    assert torch.all(shuffled[1, 3:] == 0)
    assert not torch.equal(shuffled, trained)


def test_no_context_gives_zeros() -> None:
    ablated = Ablated(inner(), Rule("none", None, 0))
    context, w = ablated(torch.randn(2, 4), torch.randn(2, 5, 6), MASK)
    assert w is None and torch.all(context == 0) and context.shape == (2, 6)


# ---- the rules, on a Transformer's (B, h, Q, K) weights


def weights() -> tuple[Tensor, Tensor]:
    """Two sentences, 3 heads, 4 queries over 5 keys (the second has 3), and
    the mask of the causal self-attention's kind: key u <= query t, real."""
    torch.manual_seed(2)
    mask = MASK[:, None, None, :] & torch.ones(4, 5, dtype=torch.bool).tril()
    scores = torch.randn(2, 3, 4, 5).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1), mask  # (B, h, Q, K), (B, 1, Q, K)


@pytest.mark.parametrize("how", HOWS)
def test_only_the_chosen_heads_change_and_only_where_they_may_read(how: str) -> None:
    w, mask = weights()
    out = Rule(how, (1,), 0)(w, mask)
    torch.testing.assert_close(out[:, [0, 2]], w[:, [0, 2]])
    assert not torch.equal(out[:, 1], w[:, 1])
    assert torch.all(out[~mask.expand_as(out)] == 0)
    if how == "uniform":  # query 3 of sentence 2 reads its 3 real keys
        torch.testing.assert_close(out[1, 1, 3], torch.tensor([1 / 3] * 3 + [0, 0]))
    if how == "shuffle":  # every row the same numbers, moved
        torch.testing.assert_close(out.sort(-1).values, w.sort(-1).values)


# ---- through a model


@pytest.mark.parametrize("kind", HOWS)
def test_ablation_changes_what_an_attention_model_writes(kind: str) -> None:
    model = tiny_model("additive").eval()
    with torch.no_grad():
        model.decoder.output.bias[EOS] -= 30.0  # write to the length limit
        model.decoder.combine.weight[:, 16:] *= 20.0  # make the context count
        model.decoder.attention.v.weight *= 50.0  # and the weights sharp
    src = torch.randint(4, 23, (6, 9))
    src_len = torch.full((6,), 9)
    before = [h.tokens for h in greedy(model, src, src_len)]
    model.ablate(Ablation(kind))
    after = [h.tokens for h in greedy(model, src, src_len)]
    assert before != after


def tiny_transformer_model() -> Transformer:
    torch.manual_seed(0)
    cfg = TransformerConfig(layers=2, heads=2, d_model=16, ffn=32, dropout=0.0)
    model = build_model(dataclasses.replace(cfg, attention_dropout=0.0), 23, 23)
    assert isinstance(model, Transformer)
    return model.eval()


def two_sources() -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Two batches of one sentence that differ in their source words only."""
    src = torch.tensor([[5, 6, 7, 8, EOS]])
    other = torch.tensor([[9, 10, 11, 12, EOS]])
    return src, other, torch.tensor([5]), torch.tensor([[1, 13, 14, 15]])


def test_without_cross_attention_a_transformer_cannot_read_the_source() -> None:
    """``none`` on every cross-attention head of every layer: the decoder's
    outputs no longer depend on the source at all (nothing else reads it)."""
    src, other, src_len, tgt_in = two_sources()
    model = tiny_transformer_model()
    a, _ = model(src, src_len, tgt_in, maps=False)
    b, _ = model(other, src_len, tgt_in, maps=False)
    assert not torch.allclose(a, b)
    model.ablate(Ablation("none"))
    a, _ = model(src, src_len, tgt_in, maps=False)
    b, _ = model(other, src_len, tgt_in, maps=False)
    torch.testing.assert_close(a, b)


def test_without_encoder_self_attention_each_position_reads_only_its_word() -> None:
    """``none`` on the encoder's self-attention: the encoder's output at a
    position depends on that position's word only (and its position)."""
    src, _, src_len, _ = two_sources()
    changed = src.clone()
    changed[0, 2] = 20
    model = tiny_transformer_model()
    model.ablate(Ablation("none", "encoder_self"))
    a, b = model.encode(src, src_len), model.encode(changed, src_len)
    for layer in range(2):  # the cross keys of every layer, per position
        keys_a, keys_b = a.cross[layer][0], b.cross[layer][0]  # (B, h, S, d_k)
        same = [p for p in range(5) if p != 2]
        torch.testing.assert_close(keys_a[:, :, same], keys_b[:, :, same])
        assert not torch.allclose(keys_a[:, :, 2], keys_b[:, :, 2])


def test_one_layer_and_one_head_change_their_maps_alone() -> None:
    src, _, src_len, tgt_in = two_sources()
    model = tiny_transformer_model()
    _, trained = model(src, src_len, tgt_in)
    model.ablate(Ablation("uniform", "decoder_self", layers=(2,), heads=(1,)))
    _, ablated = model(src, src_len, tgt_in)
    torch.testing.assert_close(ablated.cross[:, 0], trained.cross[:, 0])
    torch.testing.assert_close(
        ablated.decoder_self[:, 1, 1], trained.decoder_self[:, 1, 1]
    )
    even = torch.ones(4, 4).tril()
    torch.testing.assert_close(ablated.decoder_self[0, 1, 0], even / even.sum(-1, True))
    assert not torch.allclose(ablated.cross[:, 1], trained.cross[:, 1])


# ---- refusals, one line each


def test_modes_without_attention_and_unknown_kinds_are_refused() -> None:
    with pytest.raises(UserError, match="mode 'none' has no attention to ablate"):
        tiny_model("none").ablate(Ablation("uniform"))
    with pytest.raises(UserError, match="choose one of uniform, shuffle, none"):
        parse("zero")


@pytest.mark.parametrize(
    "args, words",
    [
        (("uniform", "self"), "--attention self: choose one of cross, encoder_self"),
        (("uniform", None, "two"), "--layers two: give numbers from 1"),
        ((None, None, None, "1"), "--heads says where --ablate acts: add --ablate"),
    ],
)
def test_bad_flags_are_one_line_naming_the_flag(args: tuple, words: str) -> None:
    with pytest.raises(UserError, match=words):
        parse(*args)


def test_where_a_model_has_no_such_layer_or_head_it_says_so() -> None:
    with pytest.raises(UserError, match="--layers 3: this model has 2; choose from 1"):
        tiny_transformer_model().ablate(Ablation("none", layers=(1, 3)))
    with pytest.raises(UserError, match="--heads 0: this model has 2"):
        tiny_transformer_model().ablate(Ablation("none", heads=(0,)))
    with pytest.raises(UserError, match="an RNN has one attention, cross, of one"):
        tiny_model("additive").ablate(Ablation("none", heads=(1,)))


def test_evaluate_offers_every_ablation() -> None:
    from seq2seq.cli.parser import parser

    commands = next(a for a in parser()._actions if a.dest == "command")
    ablate = next(
        a for a in commands.choices["evaluate"]._actions if a.dest == "ablate"
    )
    assert tuple(ablate.choices) == HOWS


def test_an_ablations_tag_names_its_files() -> None:
    assert parse("uniform") == Ablation("uniform")
    assert Ablation("uniform").tag == "uniform"  # the columns compare reads
    narrowed = parse("none", "cross", "2", "3,1,3")
    assert narrowed is not None and narrowed.tag == "none-cross-layer2-head1+3"


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("recurrence", PATHS)
@pytest.mark.parametrize("feeding", [True, False])
def test_every_ablation_runs_on_every_training_path(
    how: str, recurrence: str, feeding: bool
) -> None:
    """An ablated RNN's teacher-forced pass (forced decoding: AER, heatmaps)
    on any train.recurrence path is the reference's: the ablation moves the
    model onto the steps path, where the replaced weights are computed."""
    from seq2seq.config import DecoderConfig, RNNConfig
    from seq2seq.model.fast import compiled
    from seq2seq.model.interface import Model

    if recurrence == "compiled" and compiled.load()[0] is None:
        pytest.skip(compiled.load()[1])  # test_recurrence fails where c++ exists

    cfg = RNNConfig(
        attention="additive",
        attention_dim=8,
        decoder=DecoderConfig(embed_dim=8, hidden_size=16, input_feeding=feeding),
    )
    src = torch.tensor([[5, 6, 7, EOS], [8, 9, EOS, 0]])
    src_len, tgt_in = torch.tensor([4, 3]), torch.tensor([[1, 5, 6], [1, 7, 0]])
    outs = []
    for path in ("steps", recurrence):
        torch.manual_seed(0)
        model: Model = build_model(cfg, 20, 20, path).eval()
        model.ablate(Ablation(how))
        torch.manual_seed(1)
        with torch.no_grad():
            outs.append(model(src, src_len, tgt_in)[0])
            greedy(model, src, src_len)  # search steps as before
    torch.testing.assert_close(outs[0], outs[1])
