"""Every context mode behind one interface: (query, keys, mask) -> (context, w)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from conftest import MODES
from torch import Tensor, nn

from seq2seq import modes
from seq2seq.config import RNNConfig
from seq2seq.errors import UserError
from seq2seq.model import attention as att
from seq2seq.model.fast.steps import attend_steps
from seq2seq.model.model import build_model
from seq2seq.modes import Sizes
from seq2seq.typed_yaml import build

B, S, D = 3, 6, 8
MASK = torch.tensor(
    [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.bool
)


SIZES = Sizes(query=D, key=D, attention=5, bidirectional=True, reverse=False)


def modules() -> dict[str, att.Attention]:
    """Every registered mode (seq2seq/modes.py), built at the sizes above: a
    mode registered without passing the checks below fails the suite."""
    torch.manual_seed(0)
    return {name: m.build(SIZES) for name, m in modes.registry().items()}


ALIGNING = [n for n, m in modules().items() if m.has_alignment]
# Modes whose weights are the base class's softmax of scores (not mean, hard).
SOFTMAX = [n for n, m in modules().items() if type(m).forward is att.Attention.forward]


def check_weights(module: att.Attention) -> None:
    """A mode's weights: a distribution, exactly 0 on padding, and the context
    their mix of the encoder states (one-hot weights, as ``hard``'s, too)."""
    torch.manual_seed(1)
    query, keys = torch.randn(B, D), torch.randn(B, S, D)
    keys = keys * MASK.unsqueeze(-1)  # encoder states are zero on padding
    context, weights = module(query, keys, MASK)
    assert context.shape == (B, D) and weights.shape == (B, S)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B))
    assert torch.all(weights[~MASK] == 0.0)  # exactly zero, not just small
    assert torch.all(weights >= 0)
    torch.testing.assert_close(context, torch.einsum("bs,bsd->bd", weights, keys))


def check_no_leak(module: att.Attention) -> None:
    """Nothing at padded positions, however large, reaches weights or context."""
    torch.manual_seed(2)
    query, keys = torch.randn(B, D), torch.randn(B, S, D)
    noisy = keys.clone()
    noisy[~MASK] = 1e3 * torch.randn(int((~MASK).sum()), D)
    c1, w1 = module(query, keys, MASK)
    c2, w2 = module(query, noisy, MASK)
    torch.testing.assert_close(w1, w2)
    torch.testing.assert_close(c1, c2)


def check_precomputed(module: att.Attention) -> None:
    """Keys projected once per batch give what projecting them per call gives."""
    torch.manual_seed(3)
    query, keys = torch.randn(B, D), torch.randn(B, S, D)
    projected = module.project_keys(keys, MASK)
    a = module(query, keys, MASK)
    b = module(query, keys, MASK, projected)
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])


def check_steps(module: att.Attention) -> None:
    """Every step at once (the sequence path, model/fast/steps.py) equals one step at a
    time, forward and backward."""
    torch.manual_seed(5)
    queries = torch.randn(B, 4, D, requires_grad=True)  # (B, T, Hq)
    keys = torch.randn(B, S, D)
    projected = module.project_keys(keys, MASK)
    steps = [module(q, keys, MASK, projected) for q in queries.unbind(1)]
    context, weights = attend_steps(module, queries, keys, MASK, projected)
    torch.testing.assert_close(context, torch.stack([c for c, _ in steps], 1))
    if module.has_alignment:
        torch.testing.assert_close(weights, torch.stack([w for _, w in steps], 1))
    else:
        assert weights is None
    looped = torch.stack([c for c, _ in steps], 1).pow(2).sum()
    if not looped.requires_grad:  # a context made of no parameter (none)
        assert not context.requires_grad
        return
    grads = [
        torch.autograd.grad(
            out, [queries, *module.parameters()], allow_unused=True, retain_graph=True
        )
        for out in (context.pow(2).sum(), looped)
    ]
    for got, want in zip(*grads, strict=True):
        if want is None or got is None:  # not a function of this one (mean: query)
            assert (want is None or not want.any()) and (got is None or not got.any())
        else:
            torch.testing.assert_close(got, want)


def test_every_config_value_is_a_registered_mode_and_back() -> None:
    field = {f.name: f for f in dataclasses.fields(RNNConfig)}["attention"]
    assert field.metadata["choices"]() == tuple(modules())
    assert MODES == list(modules())  # the model and search tests' parametrization


@pytest.mark.parametrize("name", ALIGNING)
def test_weights_are_a_distribution_with_zero_on_padding(name: str) -> None:
    check_weights(modules()[name])


@pytest.mark.parametrize("name", SOFTMAX)
def test_softmax_weights_reach_every_real_position(name: str) -> None:
    torch.manual_seed(1)
    _, weights = modules()[name](torch.randn(B, D), torch.randn(B, S, D), MASK)
    assert torch.all(weights[MASK] > 0)


@pytest.mark.parametrize("name", list(modules()))
def test_padding_content_cannot_leak(name: str) -> None:
    check_no_leak(modules()[name])


@pytest.mark.parametrize("name", list(modules()))
def test_precomputed_keys_give_the_same_result(name: str) -> None:
    check_precomputed(modules()[name])


@pytest.mark.parametrize("name", list(modules()))
def test_every_step_at_once_equals_one_step_at_a_time(name: str) -> None:
    check_steps(modules()[name])


@pytest.mark.parametrize("name", [n for n in modules() if n not in ALIGNING])
def test_a_mode_without_alignment_returns_no_weights(name: str) -> None:
    context, weights = modules()[name](torch.randn(B, D), torch.randn(B, S, D), MASK)
    assert weights is None and context.shape == (B, D)


class _LeaksPadding(att.Attention):
    """A broken mode: uniform weights over every position, padding included."""

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        return projected.new_zeros(projected.shape[:2])

    def distribution(self, query, keys, mask, projected=None) -> Tensor:
        return torch.full(mask.shape, 1 / mask.size(1))


class _Cosine(att.Attention):
    """docs/add-a-mode.md's example: e = cos(h_t, W h_s) / tau."""

    def __init__(self, query_dim: int, key_dim: int, tau: float = 0.1) -> None:
        super().__init__()
        self.key_proj = nn.Linear(key_dim, query_dim, bias=False)
        self.tau = tau

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return F.normalize(self.key_proj(keys), dim=-1)  # (B, S, Hq)

    def scores(self, query: Tensor, projected: Tensor) -> Tensor:
        q = F.normalize(query, dim=-1).unsqueeze(2)  # (B, Hq, 1)
        return torch.bmm(projected, q).squeeze(2) / self.tau  # (B, S)


def test_a_new_mode_is_one_class_and_one_registration() -> None:
    """As docs/add-a-mode.md says: register the class, and the config accepts
    the name, build_model builds it, and the shared checks run on it."""
    modes.register(
        "cosine", lambda s: _Cosine(s.query, s.key), "cosine scores", "cosine attention"
    )
    try:
        raw = {"attention": "cosine", "decoder": {"hidden_size": 16}}
        cfg = build(RNNConfig, raw, "model")
        model = build_model(cfg, src_vocab=11, tgt_vocab=13)
        assert isinstance(model.decoder.attention, _Cosine)
        for check in (check_weights, check_no_leak, check_precomputed, check_steps):
            check(modes.MODES["cosine"].build(SIZES))
    finally:
        del modes.MODES["cosine"]
    with pytest.raises(UserError, match="'cosine' is not one of none, context"):
        build(RNNConfig, {"attention": "cosine"}, "model")


def test_the_shared_checks_catch_a_broken_mode() -> None:
    with pytest.raises(AssertionError):
        check_weights(_LeaksPadding())
    with pytest.raises(AssertionError):
        check_no_leak(_LeaksPadding())


def test_mean_is_uniform_over_real_positions() -> None:
    _, weights = att.MeanPool()(torch.randn(B, D), torch.randn(B, S, D), MASK)
    torch.testing.assert_close(weights[1, :3], torch.full((3,), 1 / 3))
    assert weights[2, 0] == 1.0


def test_scaled_dot_divides_by_sqrt_d() -> None:
    query, keys = torch.randn(B, D), torch.randn(B, S, D)
    raw = att.Dot().scores(query, keys)
    torch.testing.assert_close(att.ScaledDot().scores(query, keys), raw / D**0.5)


def test_dot_attends_to_the_matching_key() -> None:
    keys = torch.eye(S).unsqueeze(0) * 20  # (1, S, S): orthogonal keys
    query = keys[0, 4].unsqueeze(0)
    _, weights = att.Dot()(query, keys, torch.ones(1, S, dtype=torch.bool))
    assert weights.argmax().item() == 4 and weights.max() > 0.99


def test_none_gives_zero_context_and_no_weights() -> None:
    context, weights = att.NoContext(D)(torch.randn(B, 5), torch.randn(B, S, D), MASK)
    assert weights is None and context.shape == (B, D)
    assert torch.all(context == 0)


def test_final_state_reads_last_forward_and_first_backward() -> None:
    keys = torch.arange(B * S * D, dtype=torch.float).view(B, S, D)
    context, weights = att.FinalState(bidirectional=True)(torch.randn(B, 5), keys, MASK)
    assert weights is None
    # sentence 1 has 3 real positions: forward half from position 2, backward from 0
    torch.testing.assert_close(context[1, : D // 2], keys[1, 2, : D // 2])
    torch.testing.assert_close(context[1, D // 2 :], keys[1, 0, D // 2 :])
    uni = att.FinalState(bidirectional=False)(torch.randn(B, 5), keys, MASK)[0]
    torch.testing.assert_close(uni[2], keys[2, 0])


def test_gradients_flow_through_scores() -> None:
    module = modules()["additive"]
    query = torch.randn(B, D, requires_grad=True)
    context, _ = module(query, torch.randn(B, S, D), MASK)
    context.sum().backward()
    assert query.grad is not None and query.grad.abs().sum() > 0
    assert all(p.grad is not None for p in module.parameters())


def test_hard_is_one_hot_forward_and_soft_backward() -> None:
    torch.manual_seed(4)
    hard = att.Hard(D, D, 5)
    query = torch.randn(B, D, requires_grad=True)
    keys = torch.randn(B, S, D)
    context, weights = hard(query, keys, MASK)
    soft = hard.distribution(query, keys, MASK)
    # forward: exactly one real position, the soft argmax
    assert torch.equal(weights.detach().sum(-1), torch.ones(B))
    assert torch.equal((weights.detach() == 1).sum(-1), torch.ones(B, dtype=torch.long))
    assert torch.equal(weights.detach().argmax(-1), soft.argmax(-1))
    assert torch.all(weights.detach()[~MASK] == 0)
    chosen = keys[torch.arange(B), weights.detach().argmax(-1)]
    torch.testing.assert_close(context.detach(), chosen)
    # backward: the softmax's gradient reaches the query and the scorer
    context.pow(2).sum().backward()
    assert query.grad is not None and query.grad.abs().sum() > 0
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in hard.parameters())
