"""The input-feeding decoder with additive attention as one autograd node.

With input feeding (Luong et al. 2015, Sec. 3.3) step t reads the previous
step's attentional vector, so the cell, the attention and Eq. 5 cannot be
taken apart into whole-sequence operations as without it (recurrence.py).
Here the whole step runs in one loop under no grad, and its backward is
written by hand. Per step, for a one-layer GRU decoder and ``additive``:

    x   = [e_t; f_{t-1}]                       the embedding and the feed
    h_t = GRU(x, h_{t-1})                      (recurrence.py's equations)
    u_j = tanh(W_q h_t + U k_j)                (B, S, A); U k is precomputed
    s_j = v · u_j,  a = softmax(s) on real j   Bahdanau et al. 2015, Eq. 6
    c_t = Σ_j a_j k_j
    f_t = tanh(W_c [h_t; c_t] + b_c)           Luong Eq. 5

and backward, carrying dh and df (the feed's gradient from step t+1):

    dp  = (∂L/∂f_t + df) ⊙ (1 − f_t²),   [dh_c; dc] = dp W_c
    da_j = dc · k_j,   ds = a ⊙ (da − Σ a da)          (softmax)
    du_j = ds_j v ⊙ (1 − u_j²),   dq = Σ_j du_j,   d(Uk)_j += du_j
    dh  = dh + dh_c + dq W_q   →  the GRU step's backward  →  dx = dgi W_ih,
    df  = dx[E:] (to step t−1)

then every weight gradient (W_ih, W_hh, W_q, W_c) and dk = Σ_t a_t ⊗ dc_t
as GEMMs over all steps. u is not kept: backward recomputes it from the
saved queries W_q h_t, which saves a (B, T, S, A) tensor. The two loops are
functions with tensors in and out (:func:`feeding_forward`,
:func:`feeding_backward`), in Python here, compiled in csrc/loops.cpp (as for
recurrence.py). The step loop in decoder.py is the reference; tests check
both against it and with gradcheck.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from seq2seq.model.attention import Additive
from seq2seq.model.decoder import Memory


class AdditiveFeeding(torch.autograd.Function):
    """Attentional vectors f (B, T, H) of the one-layer GRU input-feeding
    decoder with additive attention, under teacher forcing, and the attention
    weights (B, T, S) (not differentiable: the loss reads only f).
    ``loops``: whose step loops (recurrence.PYTHON's or the compiled ones)."""

    @staticmethod
    def forward(
        ctx: Any,
        loops: Any,
        emb: Tensor,  # (B, T, E) embedded inputs (dropout applied)
        h0: Tensor,  # (B, H)
        keys: Tensor,  # (B, S, D)
        projected: Tensor,  # (B, S, A) U k
        mask: Tensor,  # (B, S) True on real positions
        w_ih: Tensor,  # (3H, E + H)
        w_hh: Tensor,  # (3H, H)
        b_ih: Tensor,
        b_hh: Tensor,
        w_q: Tensor,  # (A, H)
        v: Tensor,  # (1, A)
        w_c: Tensor,  # (H, H + D)
        b_c: Tensor,  # (H,)
    ) -> tuple[Tensor, Tensor]:
        batch, steps, e_dim = emb.shape
        hidden = h0.size(1)
        # The embedding's part of every step's input projection, at once.
        gi_e = torch.addmm(b_ih, emb.reshape(batch * steps, e_dim), w_ih[:, :e_dim].t())
        gi_e = gi_e.view(batch, steps, 3 * hidden)
        w_f = w_ih[:, e_dim:].contiguous()  # (3H, H) the feed's columns
        saved = loops.feeding_forward(
            gi_e, h0, keys, projected, mask, w_f, w_hh, b_hh, w_q, v, w_c, b_c
        )  # h, f, rz, n, ghn, q, a, c (B, T, ...)
        ctx.loops = loops
        ctx.save_for_backward(emb, h0, keys, projected, w_ih, w_hh, w_q, v, w_c, *saved)
        ctx.mark_non_differentiable(saved[6])
        return saved[1], saved[6]  # f (B, T, H), the weights a (B, T, S)

    @staticmethod
    def backward(ctx: Any, grad_f: Tensor, _: Tensor) -> tuple[Tensor | None, ...]:
        emb, h0, keys, projected, w_ih, w_hh, w_q, v, w_c, *saved = ctx.saved_tensors
        hs, fs, rz, n, ghn, q, a, c = saved
        batch, steps, hidden = hs.shape
        e_dim = emb.size(-1)
        w_f = w_ih[:, e_dim:].contiguous()
        dp, dc, dq, dgi, dgh, dh0, d_projected, dv = ctx.loops.feeding_backward(
            grad_f.contiguous(), h0, keys, projected, w_f, w_hh, w_q, v, w_c, *saved
        )
        prev_h = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)  # h_{t-1}
        prev_f = torch.cat([fs.new_zeros(batch, 1, hidden), fs[:, :-1]], dim=1)
        rows = batch * steps

        def flat(x: Tensor) -> Tensor:
            return x.reshape(rows, -1)

        x_in = torch.cat([emb, prev_f], dim=-1)  # (B, T, E + H)
        d_emb = (flat(dgi) @ w_ih[:, :e_dim]).view_as(emb)
        d_keys = torch.bmm(a.transpose(1, 2), dc)  # Σ_t a_t ⊗ dc_t (B, S, D)
        hc = torch.cat([hs, c], dim=-1)
        return (
            None,
            d_emb,
            dh0,
            d_keys,
            d_projected,
            None,
            flat(dgi).t() @ flat(x_in),
            flat(dgh).t() @ flat(prev_h),
            flat(dgi).sum(0),
            flat(dgh).sum(0),
            flat(dq).t() @ flat(hs),
            dv,
            flat(dp).t() @ flat(hc),
            flat(dp).sum(0),
        )


def feeding_forward(
    gi_e: Tensor,  # (B, T, 3H) the embedding's part of the input projection
    h0: Tensor,
    keys: Tensor,
    projected: Tensor,
    mask: Tensor,
    w_f: Tensor,  # (3H, H) the feed's part
    w_hh: Tensor,
    b_hh: Tensor,
    w_q: Tensor,
    v: Tensor,
    w_c: Tensor,
    b_c: Tensor,
) -> tuple[Tensor, ...]:
    """The forward loop: h, f (B, T, H), r and z (B, T, 2H), n, gh_n (B, T,
    H), the queries q = W_q h (B, T, A), the weights a (B, T, S) and the
    contexts c (B, T, D)."""
    batch, steps, _ = gi_e.shape
    hidden = h0.size(1)
    off = ~mask
    h, f = h0, h0.new_zeros(batch, hidden)
    saved: dict[str, list[Tensor]] = {k: [] for k in "h f rz n ghn q a c".split()}
    for t in range(steps):
        gi = torch.addmm(gi_e[:, t], f, w_f.t())  # (B, 3H)
        gh = torch.addmm(b_hh, h, w_hh.t())
        rz = torch.sigmoid(gi[:, : 2 * hidden] + gh[:, : 2 * hidden])
        n = torch.tanh(
            torch.addcmul(gi[:, 2 * hidden :], rz[:, :hidden], gh[:, 2 * hidden :])
        )
        h = torch.lerp(n, h, rz[:, hidden:])
        q = h @ w_q.t()  # (B, A)
        u = torch.tanh(q.unsqueeze(1) + projected)  # (B, S, A)
        scores = (u @ v.t()).squeeze(-1).masked_fill(off, float("-inf"))
        a = torch.softmax(scores, dim=-1)  # (B, S)
        c = torch.bmm(a.unsqueeze(1), keys).squeeze(1)  # (B, D)
        f = torch.tanh(torch.addmm(b_c, torch.cat([h, c], dim=1), w_c.t()))
        for name, value in zip(
            "h f rz n ghn q a c".split(),
            (h, f, rz, n, gh[:, 2 * hidden :], q, a, c),
            strict=True,
        ):
            saved[name].append(value)
    return tuple(torch.stack(saved[k], dim=1) for k in "h f rz n ghn q a c".split())


def feeding_backward(
    grad_f: Tensor,  # (B, T, H)
    h0: Tensor,
    keys: Tensor,
    projected: Tensor,
    w_f: Tensor,
    w_hh: Tensor,
    w_q: Tensor,
    v: Tensor,
    w_c: Tensor,
    hs: Tensor,
    fs: Tensor,
    rz: Tensor,
    n: Tensor,
    ghn: Tensor,
    q: Tensor,
    a: Tensor,
    c: Tensor,
) -> tuple[Tensor, ...]:
    """The reverse loop: every step's dp (B, T, H), dc (B, T, D), dq (B, T,
    A), dgi and dgh (B, T, 3H); and dh0, d(Uk) (B, S, A) and dv (1, A)."""
    hidden = hs.size(-1)
    r, z = rz[..., :hidden], rz[..., hidden:]
    prev_h = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)  # h_{t-1}
    to_a_n = (1 - z) * (1 - n * n)
    to_a_r = ghn * r * (1 - r)
    to_a_z = (prev_h - n) * z * (1 - z)
    to_p = 1 - fs * fs  # tanh' of Eq. 5
    w_c_h, w_c_c = w_c[:, :hidden], w_c[:, hidden:]
    dh, df = torch.zeros_like(h0), torch.zeros_like(h0)
    d_projected = torch.zeros_like(projected)  # (B, S, A)
    dv = torch.zeros_like(v)  # (1, A)
    out: dict[str, list[Tensor]] = {k: [] for k in "dp dc dq dgi dgh".split()}
    for t in reversed(range(hs.size(1))):
        dp = (grad_f[:, t] + df) * to_p[:, t]  # (B, H)
        dc = dp @ w_c_c  # (B, D)
        da = torch.bmm(keys, dc.unsqueeze(2)).squeeze(2)  # (B, S)
        at = a[:, t]
        ds = at * (da - (at * da).sum(dim=1, keepdim=True))
        u = torch.tanh(q[:, t].unsqueeze(1) + projected)  # (B, S, A), again
        dv += torch.einsum("bs,bsa->a", ds, u).unsqueeze(0)
        du = ds.unsqueeze(2) * v * (1 - u * u)  # (B, S, A)
        d_projected += du
        dq = du.sum(dim=1)  # (B, A)
        dh = dh + dp @ w_c_h + dq @ w_q  # all that reaches h_t
        da_n = dh * to_a_n[:, t]
        dgh = torch.cat([da_n * to_a_r[:, t], dh * to_a_z[:, t], da_n * r[:, t]], 1)
        dgi = torch.cat([dgh[:, : 2 * hidden], da_n], dim=1)  # (B, 3H)
        df = dgi @ w_f  # the feed f_{t-1}'s gradient
        dh = torch.addmm(dh * z[:, t], dgh, w_hh)  # dh_{t-1}
        for name, value in zip(
            "dp dc dq dgi dgh".split(), (dp, dc, dq, dgi, dgh), strict=True
        ):
            out[name].append(value)
    dp, dc, dq, dgi, dgh = (
        torch.stack(out[k][::-1], dim=1) for k in "dp dc dq dgi dgh".split()
    )
    return dp, dc, dq, dgi, dgh, dh, d_projected, dv


def additive_feeding(
    loops: Any,
    cell: nn.GRUCell,
    attention: Additive,
    combine: nn.Linear,
    emb: Tensor,
    h0: Tensor,
    memory: Memory,
) -> tuple[Tensor, Tensor]:
    """:class:`AdditiveFeeding` with the decoder's weights (its one GRU
    cell, its additive attention, Eq. 5's W_c), run by ``loops``."""
    args: tuple[Tensor, ...] = (
        emb,
        h0,
        memory.keys,
        memory.projected,
        memory.mask,
        cell.weight_ih,
        cell.weight_hh,
        cell.bias_ih,
        cell.bias_hh,
        attention.query_proj.weight,
        attention.v.weight,
        combine.weight,
        combine.bias,
    )
    if torch.is_autocast_enabled(emb.device.type):
        dtype = torch.get_autocast_dtype(emb.device.type)
        args = tuple(x.to(dtype) if x.is_floating_point() else x for x in args)
    with torch.autocast(emb.device.type, enabled=False):
        f, weights = AdditiveFeeding.apply(loops, *args)  # type: ignore[no-untyped-call]
    return f, weights
