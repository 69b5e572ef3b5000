"""The training loss: the output layer (Eq. 6, Luong 2015) and its cross-entropy.

Two implementations of one function, ``sum over real target tokens of
-log softmax(W_s h~_t + b)[y_t]``, with optional label smoothing (Szegedy et
al. 2016):

- :func:`cross_entropy` materialises the (N, V) logits and calls
  ``F.cross_entropy``: the reference.
- :func:`chunked_cross_entropy` (``train.chunked_loss``) walks the N rows in
  chunks that fit in the CPU's cache and computes each chunk's logits, loss and
  gradients at once, so the (N, V) logits, their log-softmax and its gradient
  never exist. It is the same loss up to rounding (tested against the
  reference), about a third faster on the CPU, and it frees the largest
  tensors of a training step.
"""

from __future__ import annotations

from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq.specials import PAD

# Rows per chunk: about 2**20 logits (4 MB in fp32), an L2 cache's worth.
CHUNK_LOGITS = 2**20


def cross_entropy(
    h: Tensor, output: nn.Linear, target: Tensor, smoothing: float = 0.0
) -> Tensor:
    """Summed cross-entropy of ``output(h)`` (N, V) against ``target`` (N,);
    PAD targets are ignored."""
    logits = output(h).float()  # (N, V); fp32 softmax even under bf16 autocast
    return F.cross_entropy(
        logits, target, ignore_index=PAD, label_smoothing=smoothing, reduction="sum"
    )


def chunked_cross_entropy(
    h: Tensor, output: nn.Linear, target: Tensor, smoothing: float = 0.0
) -> Tensor:
    """:func:`cross_entropy`, computed chunk by chunk with its gradients."""
    loss = _FusedCrossEntropy.apply(  # type: ignore[no-untyped-call]
        h, output.weight, output.bias, target, smoothing
    )
    return cast(Tensor, loss)


class _FusedCrossEntropy(torch.autograd.Function):
    """The loss is the graph's last node, so its gradients can be computed in
    the forward pass, while each chunk's logits are still in cache. Per row,
    with p = softmax(x) and lse = log sum_j exp(x_j) (eps = smoothing):

        loss = (1 - eps) (lse - x_y) + eps (lse - mean_j x_j)
        dloss/dx = p - (1 - eps) onehot(y) - eps / V
    """

    @staticmethod
    def forward(
        ctx: Any, h: Tensor, weight: Tensor, bias: Tensor, target: Tensor, eps: float
    ) -> Tensor:
        want_grad = any(ctx.needs_input_grad[:3])
        device = h.device.type
        # Under autocast the matmuls run in its dtype, the softmax in fp32.
        dtype = (
            torch.get_autocast_dtype(device)
            if torch.is_autocast_enabled(device)
            else h.dtype
        )
        w = weight.to(dtype)  # (V, H)
        b = bias.to(dtype)  # (V,)
        vocab = w.size(0)
        rows = max(1, CHUNK_LOGITS // vocab)
        loss = torch.zeros((), dtype=torch.float32, device=h.device)
        grad_h = grad_w = grad_b = None
        if want_grad:
            grad_h = torch.empty_like(h)  # (N, H)
            grad_w = torch.zeros_like(weight, dtype=torch.float32)  # (V, H)
            grad_b = torch.zeros_like(bias, dtype=torch.float32)  # (V,)
        with torch.autocast(device, enabled=False):
            for start in range(0, h.size(0), rows):
                hc = h[start : start + rows].to(dtype)  # (c, H)
                y = target[start : start + rows].unsqueeze(1)  # (c, 1)
                real = (y != PAD).float()  # (c, 1)
                x = torch.addmm(b, hc, w.t()).float()  # (c, V) logits
                lse = torch.logsumexp(x, dim=1, keepdim=True)  # (c, 1)
                nll = lse - x.gather(1, y)
                if eps > 0:
                    nll = (1 - eps) * nll + eps * (lse - x.mean(1, keepdim=True))
                loss += (nll * real).sum()
                if grad_h is None or grad_w is None or grad_b is None:
                    continue  # no gradients wanted
                g = x.sub_(lse).exp_()  # softmax p, in place of the logits
                g.scatter_add_(1, y, torch.full_like(real, eps - 1.0))
                if eps > 0:
                    g.sub_(eps / vocab)
                g.mul_(real)  # PAD rows contribute nothing
                gd = g.to(dtype)
                grad_h[start : start + rows] = gd @ w  # (c, H)
                if dtype == grad_w.dtype:  # in place: no (V, H) temporary
                    grad_w.addmm_(gd.t(), hc)  # (V, H)
                else:
                    grad_w.add_(gd.t() @ hc)
                grad_b.add_(g.sum(0))
        ctx.save_for_backward(grad_h, grad_w, grad_b)
        ctx.dtypes = weight.dtype, bias.dtype
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        grad_h, grad_w, grad_b = ctx.saved_tensors
        w_dtype, b_dtype = ctx.dtypes
        return (
            grad_h * grad,
            (grad_w * grad).to(w_dtype),
            (grad_b * grad).to(b_dtype),
            None,
            None,
        )
