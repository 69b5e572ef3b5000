"""The fused (chunked) loss against the reference F.cross_entropy one."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from seq2seq.model import loss as loss_mod
from seq2seq.model.loss import chunked_cross_entropy, cross_entropy
from seq2seq.specials import PAD


def problem(n: int = 37, hidden: int = 12, vocab: int = 50, seed: int = 0):
    torch.manual_seed(seed)
    output = nn.Linear(hidden, vocab)
    h = torch.randn(n, hidden) * 2
    target = torch.randint(1, vocab, (n,))
    target[::5] = PAD  # padding positions must contribute nothing
    return h, output, target


def loss_and_grads(fn, h, output, target, smoothing, scale=1.0):
    output.zero_grad()
    h = h.clone().requires_grad_()
    loss = fn(h, output, target, smoothing)
    (loss * scale).backward()
    return loss.detach(), h.grad, output.weight.grad.clone(), output.bias.grad.clone()


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("rows", [1, 7, 37, 100])  # chunk sizes, uneven included
def test_fused_matches_reference(monkeypatch, smoothing: float, rows: int) -> None:
    h, output, target = problem()
    monkeypatch.setattr(loss_mod, "CHUNK_LOGITS", rows * 50)
    ref = loss_and_grads(cross_entropy, h, output, target, smoothing, scale=0.3)
    fused = loss_and_grads(chunked_cross_entropy, h, output, target, smoothing, 0.3)
    for a, b in zip(ref, fused, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_padding_rows_get_no_gradient() -> None:
    h, output, target = problem()
    _, grad_h, _, _ = loss_and_grads(chunked_cross_entropy, h, output, target, 0.1)
    assert (grad_h[target == PAD] == 0).all()
    assert (grad_h[target != PAD].abs().sum(1) > 0).all()


def test_without_grad_only_the_loss() -> None:
    h, output, target = problem()
    with torch.no_grad():
        fused = chunked_cross_entropy(h, output, target, 0.1)
        ref = cross_entropy(h, output, target, 0.1)
    torch.testing.assert_close(fused, ref)


def test_bf16_autocast_is_close() -> None:
    """Under autocast the matmuls run in bf16, the softmax in fp32; gradients
    come back in each input's dtype."""
    h, output, target = problem(hidden=32)
    ref = loss_and_grads(cross_entropy, h, output, target, 0.0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fused = loss_and_grads(chunked_cross_entropy, h, output, target, 0.0)
    assert fused[2].dtype == torch.float32
    torch.testing.assert_close(fused[0], ref[0], rtol=2e-2, atol=0)
    torch.testing.assert_close(fused[1], ref[1], rtol=0.1, atol=0.05)
