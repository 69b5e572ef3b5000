"""The recurrences over whole sequences (model/fast/recurrence.py), their
step loops in Python and compiled (fast/compiled.py), the input-feeding
decoder as one node (fast/feeding.py), the encoder and the decoder on them
(fast/encoding.py, fast/decoding.py), and the paths that use them
(train.recurrence: sequence, compiled, auto) against the step-by-step
reference: the same mathematics, so gradcheck in float64 and agreement to
rounding in float32, for every loop implementation."""

from __future__ import annotations

import shutil

import pytest
import torch
from conftest import MODES
from torch import nn

from seq2seq.config import (
    Config,
    DecoderConfig,
    EncoderConfig,
    RNNConfig,
    config_from_dict,
)
from seq2seq.errors import UserError
from seq2seq.model.encoder import Encoder
from seq2seq.model.fast import compiled
from seq2seq.model.fast.encoding import encode_sequence
from seq2seq.model.fast.path import choose_path
from seq2seq.model.fast.recurrence import (
    PYTHON,
    GRUSequence,
    Loops,
    LSTMSequence,
    gru_sequence,
    run_lstm,
)
from seq2seq.model.model import Seq2Seq, build_model, loss_sum
from seq2seq.typed_yaml import build


def compiled_loops() -> Loops:
    """The compiled loops; a test of them fails where a C++ compiler exists
    but they were not built (make install builds them), and is skipped, with
    the reason, where none exists."""
    module, why = compiled.load()
    if module is not None:
        return module  # type: ignore[return-value]
    if shutil.which("c++") is None or compiled.unsupported() is not None:
        pytest.skip(why)
    pytest.fail(f"{why}; run make install")


@pytest.fixture(params=["python", "compiled"])
def loops(request: pytest.FixtureRequest) -> Loops:
    return PYTHON if request.param == "python" else compiled_loops()


def test_gradcheck_the_hand_written_backward_in_float64(loops: Loops) -> None:
    torch.manual_seed(0)
    cells = [nn.GRUCell(4, 6).double() for _ in range(2)]  # K = 2 recurrences
    x = torch.randn(2, 3, 5, 4, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2, 3, 6, dtype=torch.float64, requires_grad=True)
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    params = [torch.stack([getattr(c, n) for c in cells]) for n in names]
    apply = GRUSequence.apply
    assert torch.autograd.gradcheck(lambda *a: apply(loops, *a), (x, h0, *params))


def test_the_sequence_equals_the_cell_step_by_step(loops: Loops) -> None:
    torch.manual_seed(1)
    cell = nn.GRUCell(4, 6)
    x, h0 = torch.randn(3, 7, 4), torch.randn(3, 6)
    h, steps = h0, []
    for t in range(7):
        h = cell(x[:, t], h)
        steps.append(h)
    want = torch.stack(steps, dim=1)
    torch.testing.assert_close(gru_sequence(loops, cell, x, h0), want)


def test_the_compiled_loops_equal_the_python_ones_at_the_demos_sizes() -> None:
    """Forward and backward of a K = 2 GRU and LSTM at the demo's encoder
    sizes (25 sentences x 25 steps, H = 128), fp32: within 1e-5 relative."""
    fast = compiled_loops()
    gen = torch.Generator().manual_seed(4)
    for gates, fn in ((3, GRUSequence), (4, LSTMSequence)):
        shapes = [(2, 25, 25, 64), (2, 25, 128)] + [(2, 25, 128)] * (gates == 4)
        shapes += [(2, gates * 128, 64), (2, gates * 128, 128)]
        shapes += [(2, gates * 128), (2, gates * 128)]
        inputs = [
            (torch.randn(s, generator=gen) * 0.3).requires_grad_() for s in shapes
        ]
        outs = []
        for impl in (PYTHON, fast):
            out = fn.apply(impl, *inputs)
            out = out if isinstance(out, tuple) else (out,)
            probe = sum((o * (k + 1)).sin().sum() for k, o in enumerate(out))
            outs.append([*out, *torch.autograd.grad(probe, inputs)])
        for got, want in zip(outs[1], outs[0], strict=True):
            scale = want.abs().max().item()
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * scale)


def model(
    mode: str,
    layers: int,
    dtype: torch.dtype = torch.float32,
    feeding: bool = False,
    rnn: str = "gru",
    path: str = "steps",
    dropout: float = 0.0,
) -> Seq2Seq:
    """A tiny model, by default a GRU without input feeding, no dropout."""
    torch.manual_seed(0)
    cfg = RNNConfig(
        attention=mode,
        attention_dim=12,
        encoder=EncoderConfig(
            rnn=rnn, embed_dim=10, hidden_size=8, layers=layers, dropout=dropout
        ),
        decoder=DecoderConfig(
            rnn=rnn,
            embed_dim=10,
            hidden_size=16,
            layers=layers,
            dropout=dropout,
            input_feeding=feeding,
        ),
    )
    return build_model(cfg, src_vocab=23, tgt_vocab=29, recurrence=path).to(dtype)


def grads(m: Seq2Seq, batch) -> tuple[torch.Tensor, list[torch.Tensor]]:
    m.zero_grad()
    loss, _ = loss_sum(m, *batch)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in m.parameters()]


@pytest.fixture(params=["sequence", "compiled"])
def path(request: pytest.FixtureRequest) -> str:
    if request.param == "compiled":
        compiled_loops()  # skipped, with the reason, where it cannot run
    return request.param


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_loss_and_gradients_equal_the_step_loop(mode, layers, rnn, path, toy_batch):
    """fp32, every mode, GRU and LSTM, padded targets: within 1e-5 relative."""
    loss, ref = grads(model(mode, layers, rnn=rnn), toy_batch)
    fast_loss, got = grads(model(mode, layers, rnn=rnn, path=path), toy_batch)
    torch.testing.assert_close(fast_loss, loss, rtol=1e-5, atol=0)
    for g, r in zip(got, ref, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)


def test_input_feeding_in_one_node_equals_the_step_loop(path, toy_batch) -> None:
    """The one-node input-feeding decoder (feeding.py, additive): loss,
    gradients and attention weights within 1e-5 of the step loop."""
    step, fast = (model("additive", 1, feeding=True, path=p) for p in ("steps", path))
    loss, ref = grads(step, toy_batch)
    fast_loss, got = grads(fast, toy_batch)
    torch.testing.assert_close(fast_loss, loss, rtol=1e-5, atol=0)
    for g, r in zip(got, ref, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)
    src, src_len, tgt_in, _ = toy_batch
    with torch.no_grad():
        _, w_step = step(src, src_len, tgt_in)
        _, w_fast = fast(src, src_len, tgt_in)
    torch.testing.assert_close(w_fast.cross, w_step.cross)


@pytest.mark.parametrize(
    "feeding, rnn", [(False, "gru"), (True, "gru"), (False, "lstm")]
)
def test_with_dropout_one_layer_draws_the_same_masks_on_every_path(
    feeding, rnn, path, toy_batch
):
    """Training mode, dropout 0.3, one layer each side (Multi30k's spec): every
    path draws the embeddings' and the outputs' masks in the same order, so
    the loss and gradients are the step loop's, not only alike in
    distribution. (Between layers the step loop draws one mask a step and the
    fast paths one for the sequence: equal in distribution only.) A path
    that drew one mask more, or one fewer, fails here: such a difference
    trained Multi30k's additive to 28.4 BLEU in 5 epochs on one path and
    33-34 on the other, from one seed."""
    outs = []
    for name in ("steps", path):
        m = model("additive", 1, feeding=feeding, rnn=rnn, path=name, dropout=0.3)
        m.train()
        torch.manual_seed(5)
        outs.append(grads(m, toy_batch))
    (loss, ref), (fast_loss, got) = outs
    torch.testing.assert_close(fast_loss, loss, rtol=1e-5, atol=0)
    for g, r in zip(got, ref, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)


DIFFERENTIABLE = [m for m in MODES if m != "hard"]
FUSED_MODELS = [
    *[(m, 2, False, rnn) for m in DIFFERENTIABLE for rnn in ("gru", "lstm")],
    ("additive", 1, True, "gru"),
]


@pytest.mark.parametrize("mode, layers, feeding, rnn", FUSED_MODELS)
def test_gradcheck_the_sequence_path_decoder_in_float64(
    mode, layers, feeding, rnn, path, toy_batch
):
    """Every differentiable mode without input feeding, and ``additive`` with
    it (``hard``'s straight-through gradient is not the derivative of its
    forward, so numbers cannot check it)."""
    m = model(mode, layers, torch.float64, feeding, rnn, path)
    src, src_len, tgt_in, _ = toy_batch
    memory = m.encode(src, src_len)
    h0 = memory.final.detach().requires_grad_()

    def attentional(final: torch.Tensor) -> torch.Tensor:
        mem = type(memory)(
            memory.keys.detach(), memory.mask, memory.projected.detach(), final
        )
        return m.decoder(tgt_in, mem)[0]

    assert torch.autograd.gradcheck(attentional, (h0,))


@pytest.mark.parametrize(
    "feeding, rnn", [(False, "gru"), (True, "gru"), (False, "lstm")]
)
def test_sequence_path_training_follows_the_step_loop_for_16_steps(
    feeding, rnn, path, toy_batch
):
    """Adam from the same start, the same batch 16 times: every step's loss
    within 1e-4 relative. (Not each weight: Adam divides a gradient by its own
    running size, so a weight whose gradient is near 0 moves by rounding
    noise either way; measured here, the losses agree to 2e-7.)"""
    losses: dict[str, list[float]] = {}
    for name in ("steps", path):
        m = model("additive", layers=1, feeding=feeding, rnn=rnn, path=name)
        opt = torch.optim.Adam(m.parameters(), lr=1e-2)
        losses[name] = []
        for _ in range(16):
            opt.zero_grad()
            loss, _ = loss_sum(m, *toy_batch)
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    assert losses["steps"][-1] < 0.5 * losses["steps"][0]  # it trained
    assert losses[path] == pytest.approx(losses["steps"], rel=1e-4)


@pytest.mark.parametrize(
    "model",
    [
        {"attention": "dot", "decoder": {"hidden_size": 512, "input_feeding": True}},
        {"decoder": {"input_feeding": True, "layers": 2}},
        {"decoder": {"rnn": "lstm", "input_feeding": True}},
    ],
)
def test_the_sequence_paths_are_refused_where_they_do_not_apply(model) -> None:
    """Asked for by name they are refused at load; ``auto`` trains such a
    model step by step."""
    data = {"train": {"src": "a", "tgt": "b"}, "val": {"src": "a", "tgt": "b"}}
    for path in ("sequence", "compiled"):
        raw = {"data": data, "model": model, "train": {"recurrence": path}}
        with pytest.raises(
            UserError,
            match=f"'train.recurrence': {path}: with model.decoder.input_feeding",
        ):
            build(Config, raw, "")
    raw = {"data": data, "model": model, "train": {"recurrence": "auto"}}
    cfg = build(Config, raw, "")
    chosen = choose_path(cfg.model, "auto")
    assert chosen.name == "steps" and chosen.loops is None and chosen.note


def test_auto_takes_the_python_loops_where_none_are_compiled(monkeypatch) -> None:
    """No build (no compiler, another CPU): ``auto`` trains on the Python
    loops and says why; ``compiled`` asked for by name is refused with it."""
    monkeypatch.setattr(compiled, "load", lambda: (None, "not built here"))
    cfg = RNNConfig()
    chosen = choose_path(cfg, "auto")
    assert (chosen.name, chosen.loops, chosen.note) == (
        "sequence",
        PYTHON,
        "not built here",
    )
    with pytest.raises(UserError, match="compiled: not built here; use auto"):
        choose_path(cfg, "compiled")
    assert choose_path(cfg, "sequence").loops is PYTHON
    assert choose_path(cfg, "steps").loops is None


def test_an_old_config_keeps_its_path() -> None:
    """train.fused_recurrence, the key's old name: false reads as steps, true
    as sequence (the Python loops they trained with); both names at once are
    refused."""
    data = {"train": {"src": "a", "tgt": "b"}, "val": {"src": "a", "tgt": "b"}}
    for old, new in ((False, "steps"), (True, "sequence")):
        raw = {"data": data, "train": {"fused_recurrence": old}}
        assert config_from_dict(raw).train.recurrence == new
    raw = {"data": data, "train": {"fused_recurrence": True, "recurrence": "auto"}}
    with pytest.raises(UserError, match="old name; keep only the second"):
        config_from_dict(raw)


@pytest.mark.parametrize(
    "bidirectional, reverse, layers",
    [(True, False, 1), (True, False, 2), (False, False, 2), (False, True, 1)],
)
@pytest.mark.parametrize("rnn", [nn.GRU, nn.LSTM])
def test_the_sequence_path_encoder_equals_the_packed_one(
    rnn, bidirectional, reverse, layers, loops
):
    """Annotations (zeros on padding), summary and gradients, padded rows."""
    torch.manual_seed(3)
    encoder = Encoder(rnn, 23, 10, 8, layers, bidirectional, 0.0, reverse)
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0], [4, 3, 0, 0, 0]])
    src_len, mask = torch.tensor([5, 3, 2]), src != 0
    outs = {}
    for one_node in (False, True):  # encode_sequence: an LSTM is packed in training
        encoder.zero_grad()
        if one_node:
            states, final = encode_sequence(encoder, src, src_len, mask, loops)
        else:
            states, final = encoder(src, src_len, mask)
        (states.pow(2).sum() + final.sum()).backward()
        outs[one_node] = [
            states,
            final,
            *(p.grad.clone() for p in encoder.parameters()),
        ]
    assert torch.all(outs[True][0][~mask] == 0)
    for got, want in zip(outs[True], outs[False], strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def lstm_params(cells: list[nn.LSTMCell]) -> list[torch.Tensor]:
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    return [torch.stack([getattr(c, n) for c in cells]) for n in names]


def test_gradcheck_the_lstm_backward_in_float64(loops: Loops) -> None:
    torch.manual_seed(2)
    cells = [nn.LSTMCell(4, 5).double() for _ in range(2)]  # K = 2 recurrences
    x = torch.randn(2, 3, 6, 4, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    c0 = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    inputs = (x, h0, c0, *lstm_params(cells))
    apply = LSTMSequence.apply
    assert torch.autograd.gradcheck(lambda *a: apply(loops, *a), inputs)


def test_the_lstm_sequence_equals_the_cell_step_by_step(loops: Loops) -> None:
    """Outputs and every gradient against nn.LSTMCell in a loop, in float32,
    with a loss on both h and c of every step."""
    torch.manual_seed(3)
    cell = nn.LSTMCell(4, 6)
    x = torch.randn(3, 7, 4, requires_grad=True)
    h0, c0 = torch.randn(3, 6), torch.randn(3, 6)
    h, c, hs, cs = h0, c0, [], []
    for t in range(7):
        h, c = cell(x[:, t], (h, c))
        hs.append(h)
        cs.append(c)
    ref_h, ref_c = torch.stack(hs, dim=1), torch.stack(cs, dim=1)
    weights = [(cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    args = (x.unsqueeze(0), h0.unsqueeze(0), c0.unsqueeze(0), weights)
    out_h, out_c = run_lstm(loops, *args)
    torch.testing.assert_close(out_h[0], ref_h)
    torch.testing.assert_close(out_c[0], ref_c)
    probe = torch.randn_like(ref_h)
    leaves = [x, *cell.parameters()]
    ref = torch.autograd.grad((ref_h * probe).sum() + ref_c.sum(), leaves)
    ours = torch.autograd.grad((out_h[0] * probe).sum() + out_c[0].sum(), leaves)
    for a, b in zip(ours, ref, strict=True):  # 1e-5 of each gradient's scale
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5 * b.abs().max().item())


@pytest.mark.parametrize("feeding", [False, True])
def test_bf16_autocast_trains_on_the_python_loops(feeding, toy_batch) -> None:
    """The compiled loops are built for fp32 and fp64: under bf16 autocast
    (train.precision: bf16) a model on the compiled path runs the Python
    loops instead, and trains."""
    compiled_loops()
    m = model("additive", layers=1, feeding=feeding, path="compiled")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss, _ = loss_sum(m, *toy_batch)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(
        torch.isfinite(p.grad).all() for p in m.parameters() if p.grad is not None
    )
