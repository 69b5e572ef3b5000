"""Notebook 5's first exercise: the student writes single-head attention, and
:func:`check_attention` compares it with the lab's module
(seq2seq/lesson/attention.py) on shapes, values, masks and gradients. It says
"done", or what is wrong in words, never in code.

The function a student writes::

    attention(x_q, x_kv, w_q, w_k, w_v, mask=None) -> (output, weights)

x_q (B, Tq, d_model) and x_kv (B, Tk, d_model); w_q, w_k, w_v (d_model, d_k);
``mask`` broadcasting to (B, Tq, Tk), 0 (or False) where a query may not
look; output (B, Tq, d_k) and weights (B, Tq, Tk).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from seq2seq.lesson.attention import SingleHeadAttention, causal_mask

Attention = Callable[..., tuple[Tensor, Tensor]]
D_MODEL, D_K = 8, 4


def _case(seed: int) -> tuple[SingleHeadAttention, Tensor, Tensor, list[Tensor]]:
    """The lab's module and inputs: 2 sentences, 3 queries over 5 keys."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layer = SingleHeadAttention(D_MODEL, D_K)
    x_q, x_kv = (
        torch.randn(2, 3, D_MODEL, generator=g),
        torch.randn(2, 5, D_MODEL, generator=g),
    )
    ws = [m.weight.detach().T.clone() for m in (layer.w_q, layer.w_k, layer.w_v)]
    return layer, x_q, x_kv, ws


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=1e-5)


def check_attention(attention: Attention) -> str:
    """One line: "done: ..." or "not yet: " and the first thing wrong."""
    try:
        return _check(attention)
    except NotImplementedError:
        return "not yet: write attention() in the cell above"
    except Exception as err:  # the student's code, whatever it raises
        return f"not yet: it raised {type(err).__name__}: {err}"


def _check(attention: Attention) -> str:
    layer, x_q, x_kv, ws = _case(0)
    out, weights = attention(x_q, x_kv, *ws)
    want_out, want_w = layer(x_q, x_kv)
    if tuple(out.shape) != (2, 3, D_K) or tuple(weights.shape) != (2, 3, 5):
        return (
            f"not yet: for 2 sentences, 3 queries and 5 keys with d_k = {D_K}, the "
            f"output should be (2, 3, {D_K}) and the weights (2, 3, 5); got "
            f"{tuple(out.shape)} and {tuple(weights.shape)}"
        )
    if not _close(weights.sum(-1), torch.ones(2, 3)):
        return "not yet: each query's weights should sum to 1 over the keys"
    if not _close(weights, want_w):
        sharper = (weights.max(-1).values > want_w.max(-1).values + 1e-4).all()
        if sharper:
            return "not yet: the weights are sharper than they should be"
        return "not yet: the weights differ from the lab's module"
    if not _close(out, want_out):
        return "not yet: the weights are right but the output is not their mix"
    return (
        _check_masks(attention)
        or _check_gradients(attention)
        or (
            "done: shapes, values, padding and causal masks (boolean and 0/1), a "
            "query with no key to read, and gradients all match the lab's module"
        )
    )


def _check_masks(attention: Attention) -> str | None:
    layer, x_q, x_kv, ws = _case(1)
    padding = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    for name, mask in (
        ("a boolean padding mask", padding[:, None, :]),
        ("a 0/1 float padding mask", padding[:, None, :].float()),
        ("a causal mask", causal_mask(5)[None, 2:]),  # queries 3..5 of 5 keys
    ):
        out, weights = attention(x_q, x_kv, *ws, mask=mask)
        want_out, want_w = layer(x_q, x_kv, mask)
        blocked = (mask == 0).expand_as(weights)
        if weights[blocked].abs().max() > 0:
            return f"not yet: with {name}, a key that may not be read gets weight"
        if not (_close(weights, want_w) and _close(out, want_out)):
            return f"not yet: with {name}, the result differs from the lab's module"
    none = torch.zeros(2, 3, 5, dtype=torch.bool)
    none[:, :2] = True  # the third query may read no key at all
    out, weights = attention(x_q, x_kv, *ws, mask=none)
    if torch.isnan(weights).any() or torch.isnan(out).any():
        return "not yet: a query with every key masked gives NaN"
    if weights[:, 2].abs().max() > 0 or out[:, 2].abs().max() > 0:
        return "not yet: a query with every key masked should read nothing (zeros)"
    return None


def _check_gradients(attention: Attention) -> str | None:
    layer, x_q, x_kv, ws = _case(2)
    mask = causal_mask(5)[None, 2:]
    inputs = [t.clone().requires_grad_(True) for t in (x_q, x_kv, *ws)]
    out, _ = attention(*inputs, mask=mask)
    out.pow(2).sum().backward()
    mine = [t.grad for t in inputs]
    theirs_in = [t.clone().requires_grad_(True) for t in (x_q, x_kv)]
    want, _ = layer(*theirs_in, mask)
    want.pow(2).sum().backward()
    weights = (layer.w_q.weight, layer.w_k.weight, layer.w_v.weight)
    theirs = [theirs_in[0].grad, theirs_in[1].grad] + [
        None if w.grad is None else w.grad.T for w in weights
    ]
    names = ("x_q", "x_kv", "w_q", "w_k", "w_v")
    for name, a, b in zip(names, mine, theirs, strict=True):
        if a is None or b is None or not _close(a, b):
            return f"not yet: the gradient with respect to {name} differs"
    return None
