"""A GRU over a whole sequence as one autograd node, with backpropagation
through time written by hand.

The step-by-step path (``nn.GRUCell`` in a Python loop, decoder.py) records
about ten autograd nodes per step and replays them in backward; on the CPU
that per-op overhead, not arithmetic, is what a small model's step costs. Here
the loop runs once forward without graph recording and once backward carrying
only dh; everything that does not depend on the previous step is done for all
steps at once:

    forward   gi = x W_ih^T + b_ih                    one GEMM, all steps
              for t:  gh = h W_hh^T + b_hh            (B, 3H)
                      r = σ(gi_r + gh_r),  z = σ(gi_z + gh_z)
                      n = tanh(gi_n + r ⊙ gh_n)
                      h = (1 − z) ⊙ n + z ⊙ h          (Cho et al. 2014, Eq. 5-8;
                                                       PyTorch's gate order r, z, n)
    backward  for t = T..1, with dh = ∂L/∂h_t (from above and from step t+1):
                      dn = dh ⊙ (1 − z),   dz = dh ⊙ (h_{t−1} − n)
                      da_n = dn ⊙ (1 − n²),  da_r = da_n ⊙ gh_n ⊙ r(1 − r)
                      da_z = dz ⊙ z(1 − z)
                      dgi_t = [da_r, da_z, da_n],  dgh_t = [da_r, da_z, da_n ⊙ r]
                      dh_{t−1} = dh ⊙ z + dgh_t W_hh
              then    dW_ih = dgi^T x,  dW_hh = dgh^T h_{<t},  db = Σ dg,  dx = dgi W_ih
                      (GEMMs over all B×T rows)

The two loops (forward, and backward's reverse loop) are functions with
tensors in and out: this module's, in Python, are the reference; the
compiled ones (csrc/loops.cpp, loaded by compiled.py) do the same with one
GEMM and one fused pass over the gates a step, and are what ``compiled``
trains with (the package docstring, model/fast/__init__.py, says which
path runs which).

The weights are those of ``nn.GRUCell``, so a checkpoint does not care which
path trained it; tests/test_recurrence.py checks both loops against the cell
with ``gradcheck`` in float64 and against the step loop in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

import torch
from torch import Tensor, nn

from seq2seq.model.fast import feeding

# One recurrence's (w_ih, w_hh, b_ih, b_hh), as nn.GRUCell/LSTMCell name them.
Weights = tuple[Tensor, Tensor, Tensor, Tensor]


class GRUSequence(torch.autograd.Function):
    """``h (K, B, T, H) = GRU(x (K, B, T, E), h0 (K, B, H))`` for K independent
    recurrences at once, each with its own weights (K, 3H, E), (K, 3H, H),
    (K, 3H), (K, 3H): K = 2 runs both directions of a bidirectional layer in
    the same batched matmuls, K = 1 a decoder layer. ``loops``: whose step
    loops run the sequence, :data:`PYTHON` (below) or the compiled ones
    (compiled.py), the same mathematics."""

    @staticmethod
    def forward(
        ctx: Any,
        loops: Loops,
        x: Tensor,
        h0: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor,
        b_hh: Tensor,
    ) -> Tensor:
        k, batch, steps, _ = x.shape
        hidden = h0.size(-1)
        flat = x.reshape(k, batch * steps, -1)
        gi = torch.baddbmm(b_ih.unsqueeze(1), flat, w_ih.transpose(1, 2))
        gi = gi.view(k, batch, steps, 3 * hidden)  # every step's input part
        out, rz, n, gh_n = loops.gru_forward(gi, h0, w_hh, b_hh)  # (K, B, T, .)
        ctx.loops = loops
        ctx.save_for_backward(x, h0, w_ih, w_hh, out, rz, n, gh_n)
        return out

    @staticmethod
    def backward(ctx: Any, grad_hs: Tensor) -> tuple[Tensor | None, ...]:
        x, h0, w_ih, w_hh, hs, rz, n, gh_n = ctx.saved_tensors
        k, batch, steps, hidden = hs.shape
        dgi, dgh, dh0 = ctx.loops.gru_backward(grad_hs, h0, hs, rz, n, gh_n, w_hh)
        # h_{t-1} for every t: h0, then the outputs shifted by one (K, B, T, H)
        prev = torch.cat([h0.unsqueeze(2), hs[:, :, :-1]], dim=2)
        rows_i = dgi.reshape(k, batch * steps, 3 * hidden)
        rows_h = dgh.reshape(k, batch * steps, 3 * hidden)
        dx = torch.bmm(rows_i, w_ih).view_as(x) if ctx.needs_input_grad[1] else None
        dw_ih = torch.bmm(rows_i.transpose(1, 2), x.reshape(k, batch * steps, -1))
        dw_hh = torch.bmm(rows_h.transpose(1, 2), prev.reshape(k, batch * steps, -1))
        return None, dx, dh0, dw_ih, dw_hh, rows_i.sum(1), rows_h.sum(1)


def gru_forward(
    gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The forward loop from every step's input part gi (K, B, T, 3H): the
    outputs, r and z (K, B, T, 2H), n, and the hidden part of n's
    pre-activation gh_n (K, B, T, H) that backward needs."""
    steps, hidden = gi.size(2), h0.size(-1)
    w_hh_t, b_hh = w_hh.transpose(1, 2), b_hh.unsqueeze(1)
    h, hs, rzs, ns, ghs = h0, [], [], [], []
    for t in range(steps):
        gh = torch.baddbmm(b_hh, h, w_hh_t)  # (K, B, 3H)
        rz = torch.sigmoid(gi[:, :, t, : 2 * hidden] + gh[..., : 2 * hidden])
        # n = tanh(gi_n + r * gh_n);  h = n + z (h - n)
        pre_n = torch.addcmul(
            gi[:, :, t, 2 * hidden :], rz[..., :hidden], gh[..., 2 * hidden :]
        )
        n = torch.tanh(pre_n)
        h = torch.lerp(n, h, rz[..., hidden:])
        hs.append(h)
        rzs.append(rz)
        ns.append(n)
        ghs.append(gh[..., 2 * hidden :])
    out = torch.stack(hs, dim=2)  # (K, B, T, H)
    rz, n, gh_n = (torch.stack(v, dim=2) for v in (rzs, ns, ghs))
    return out, rz, n, gh_n


def gru_backward(
    grad_hs: Tensor,
    h0: Tensor,
    hs: Tensor,
    rz: Tensor,
    n: Tensor,
    gh_n: Tensor,
    w_hh: Tensor,
) -> tuple[Tensor, Tensor, Tensor]:
    """The reverse loop: the gradients of every step's input and hidden
    pre-activations dgi, dgh (K, B, T, 3H) and dh0 (K, B, H)."""
    hidden = hs.size(-1)
    r, z = rz[..., :hidden], rz[..., hidden:]
    prev = torch.cat([h0.unsqueeze(2), hs[:, :, :-1]], dim=2)  # h_{t-1}
    # What does not depend on dh, for all steps at once (K, B, T, H) each:
    to_a_n = (1 - z) * (1 - n * n)  # da_n = dh * to_a_n
    to_a_r = gh_n * r * (1 - r)  # da_r = da_n * to_a_r
    to_a_z = (prev - n) * z * (1 - z)  # da_z = dh * to_a_z
    dh = torch.zeros_like(h0)
    da_ns, dghs = [], []
    for t in reversed(range(hs.size(2))):
        dh = dh + grad_hs[:, :, t]
        da_n = dh * to_a_n[:, :, t]
        parts = [da_n * to_a_r[:, :, t], dh * to_a_z[:, :, t], da_n * r[:, :, t]]
        dgh = torch.cat(parts, dim=-1)  # (K, B, 3H)
        dh = torch.baddbmm(dh * z[:, :, t], dgh, w_hh)  # dh_{t-1}
        da_ns.append(da_n)
        dghs.append(dgh)
    dgh = torch.stack(dghs[::-1], dim=2)  # (K, B, T, 3H)
    da_n = torch.stack(da_ns[::-1], dim=2)
    return torch.cat([dgh[..., : 2 * hidden], da_n], dim=-1), dgh, dh


def gru_sequence(loops: Loops, cell: nn.GRUCell, x: Tensor, h0: Tensor) -> Tensor:
    """Run ``cell`` over every step of x (B, T, E) from h0 (B, H): (B, T, H),
    the same as calling it step by step."""
    weights = (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    return run_gru(loops, x.unsqueeze(0), h0.unsqueeze(0), [weights])[0]


def run_gru(
    loops: Loops,
    x: Tensor,
    h0: Tensor,
    weights: Sequence[Weights],
) -> Tensor:
    """:class:`GRUSequence` of x (K, B, T, E) from h0 (K, B, H), recurrence k
    with ``weights[k]`` = (w_ih, w_hh, b_ih, b_hh)."""
    return cast(Tensor, _apply(GRUSequence, loops, [x, h0], weights))


def _apply(
    fn: type[torch.autograd.Function],
    loops: Loops,
    tensors: list[Tensor],
    weights: Sequence[Weights],
) -> Any:
    """``fn.apply(loops, *tensors, w_ih, w_hh, b_ih, b_hh)`` with recurrence
    k's weights stacked as (K, ...); under autocast everything is cast to the
    autocast dtype first, as a cell's own matmuls would be (the compiled
    loops send what they are not built for to the Python ones:
    compiled.CompiledLoops)."""
    params = [torch.stack(w) for w in zip(*weights, strict=True)]  # (K, ...) each
    inputs = [*tensors, *params]
    device = inputs[0].device.type
    if torch.is_autocast_enabled(device):
        dtype = torch.get_autocast_dtype(device)
        inputs = [t.to(dtype) for t in inputs]
    with torch.autocast(device, enabled=False):
        return fn.apply(loops, *inputs)  # type: ignore[no-untyped-call]


class LSTMSequence(torch.autograd.Function):
    """``h, c (K, B, T, H) = LSTM(x (K, B, T, E), h0, c0 (K, B, H))``, K
    recurrences at once as in :class:`GRUSequence`, with ``nn.LSTMCell``'s
    weights (K, 4H, E), (K, 4H, H), (K, 4H), (K, 4H) and gate order i, f, g, o:

        forward   a = x W_ih^T + b_ih + h_{t−1} W_hh^T + b_hh
                  i, f, o = σ(a_i), σ(a_f), σ(a_o),  g = tanh(a_g)
                  c_t = f ⊙ c_{t−1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
                  (Hochreiter & Schmidhuber 1997, with the forget gate of
                  Gers et al. 2000)
        backward  dc += dh ⊙ o ⊙ (1 − tanh²c_t)
                  da = [dc ⊙ g ⊙ i(1−i), dc ⊙ c_{t−1} ⊙ f(1−f),
                        dc ⊙ i ⊙ (1−g²), dh ⊙ tanh c_t ⊙ o(1−o)]
                  dh_{t−1} = da W_hh,  dc_{t−1} = dc ⊙ f
    and the weight gradients as GEMMs over all B×T rows after the loop."""

    @staticmethod
    def forward(
        ctx: Any,
        loops: Loops,
        x: Tensor,
        h0: Tensor,
        c0: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor,
        b_hh: Tensor,
    ) -> tuple[Tensor, Tensor]:
        k, batch, steps, _ = x.shape
        hidden = h0.size(-1)
        flat = x.reshape(k, batch * steps, -1)
        gi = torch.baddbmm((b_ih + b_hh).unsqueeze(1), flat, w_ih.transpose(1, 2))
        gi = gi.view(k, batch, steps, 4 * hidden)  # every step's input part
        out_h, out_c, acts = loops.lstm_forward(gi, h0, c0, w_hh)
        ctx.loops = loops
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, out_h, out_c, acts)
        return out_h, out_c

    @staticmethod
    def backward(
        ctx: Any, grad_hs: Tensor, grad_cs: Tensor
    ) -> tuple[Tensor | None, ...]:
        x, h0, c0, w_ih, w_hh, hs, cs, acts = ctx.saved_tensors
        k, batch, steps, hidden = hs.shape
        da, dh0, dc0 = ctx.loops.lstm_backward(grad_hs, grad_cs, c0, cs, acts, w_hh)
        prev_h = torch.cat([h0.unsqueeze(2), hs[:, :, :-1]], dim=2)  # h_{t-1}
        rows = da.reshape(k, batch * steps, 4 * hidden)
        dx = torch.bmm(rows, w_ih).view_as(x) if ctx.needs_input_grad[1] else None
        dw_ih = torch.bmm(rows.transpose(1, 2), x.reshape(k, batch * steps, -1))
        dw_hh = torch.bmm(rows.transpose(1, 2), prev_h.reshape(k, batch * steps, -1))
        db = rows.sum(1)  # b_ih and b_hh enter a alike; separate tensors for .grad
        return None, dx, dh0, dc0, dw_ih, dw_hh, db, db.clone()


def lstm_forward(
    gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The forward loop from every step's input part gi (K, B, T, 4H), both
    biases in it: h, c (K, B, T, H) and the gate activations (K, B, T, 4H)."""
    hidden = h0.size(-1)
    w_hh_t = w_hh.transpose(1, 2)
    h, c, hs, cs, acts = h0, c0, [], [], []
    for t in range(gi.size(2)):
        a = torch.baddbmm(gi[:, :, t], h, w_hh_t)  # (K, B, 4H)
        act = torch.sigmoid(a)  # then g's quarter in place: no grad here
        torch.tanh(
            a[..., 2 * hidden : 3 * hidden], out=act[..., 2 * hidden : 3 * hidden]
        )
        i, f, g, o = torch.split(act, hidden, dim=-1)
        c = torch.addcmul(f * c, i, g)
        h = o * torch.tanh(c)
        hs.append(h)
        cs.append(c)
        acts.append(act)
    return torch.stack(hs, dim=2), torch.stack(cs, dim=2), torch.stack(acts, 2)


def lstm_backward(
    grad_hs: Tensor, grad_cs: Tensor, c0: Tensor, cs: Tensor, acts: Tensor, w_hh: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The reverse loop: every step's pre-activation gradient da (K, B, T,
    4H), dh0 and dc0 (K, B, H)."""
    hidden = cs.size(-1)
    i, f, g, o = torch.split(acts, hidden, dim=-1)  # (K, B, T, H) each
    prev_c = torch.cat([c0.unsqueeze(2), cs[:, :, :-1]], dim=2)  # c_{t-1}
    tc = torch.tanh(cs)
    # What does not depend on dh or dc, for all steps at once:
    to_c = o * (1 - tc * tc)  # dc += dh * to_c
    to_i, to_f = g * i * (1 - i), prev_c * f * (1 - f)
    to_g, to_o = i * (1 - g * g), tc * o * (1 - o)
    dh, dc = torch.zeros_like(c0), torch.zeros_like(c0)
    das = []
    for t in reversed(range(cs.size(2))):
        dh = dh + grad_hs[:, :, t]
        dc = dc + grad_cs[:, :, t] + dh * to_c[:, :, t]
        parts = [dc * to_i[:, :, t], dc * to_f[:, :, t], dc * to_g[:, :, t]]
        da = torch.cat([*parts, dh * to_o[:, :, t]], dim=-1)  # (K, B, 4H)
        dh = torch.bmm(da, w_hh)  # dh_{t-1}
        dc = dc * f[:, :, t]  # dc_{t-1}
        das.append(da)
    return torch.stack(das[::-1], dim=2), dh, dc


def lstm_sequence(
    loops: Loops, cell: nn.LSTMCell, x: Tensor, h0: Tensor, c0: Tensor
) -> Tensor:
    """Run ``cell`` over every step of x (B, T, E) from (h0, c0) (B, H): the
    hidden states (B, T, H), the same as calling it step by step."""
    weights = [(cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    h, _ = run_lstm(loops, x.unsqueeze(0), h0.unsqueeze(0), c0.unsqueeze(0), weights)
    return h[0]


def run_lstm(
    loops: Loops,
    x: Tensor,
    h0: Tensor,
    c0: Tensor,
    weights: Sequence[Weights],
) -> tuple[Tensor, Tensor]:
    """:class:`LSTMSequence` of x (K, B, T, E) from h0, c0 (K, B, H), as
    :func:`run_gru` does for the GRU: (h, c), each (K, B, T, H)."""
    h, c = _apply(LSTMSequence, loops, [x, h0, c0], weights)
    return h, c


class Loops(Protocol):
    """Whose step loops a recurrence runs: this module's (:data:`PYTHON`, the
    reference) or the compiled ones (compiled.py), the same functions with
    the same tensors in and out."""

    def gru_forward(
        self, gi: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]: ...

    def gru_backward(
        self,
        grad_hs: Tensor,
        h0: Tensor,
        hs: Tensor,
        rz: Tensor,
        n: Tensor,
        gh_n: Tensor,
        w_hh: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]: ...

    def lstm_forward(
        self, gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]: ...

    def lstm_backward(
        self,
        grad_hs: Tensor,
        grad_cs: Tensor,
        c0: Tensor,
        cs: Tensor,
        acts: Tensor,
        w_hh: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]: ...

    # feeding.py's loops, whose many tensors differ by path in name only
    def feeding_forward(self, *tensors: Any, **_: Any) -> tuple[Tensor, ...]: ...

    def feeding_backward(self, *tensors: Any, **_: Any) -> tuple[Tensor, ...]: ...


class _PythonLoops:
    """The loops in Python, as a Loops: the reference, and what runs off the
    CPU (the input-feeding step's are in feeding.py)."""

    gru_forward = staticmethod(gru_forward)
    gru_backward = staticmethod(gru_backward)
    lstm_forward = staticmethod(lstm_forward)
    lstm_backward = staticmethod(lstm_backward)
    feeding_forward = staticmethod(feeding.feeding_forward)
    feeding_backward = staticmethod(feeding.feeding_backward)


PYTHON: Loops = _PythonLoops()
