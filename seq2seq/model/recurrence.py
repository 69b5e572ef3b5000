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

The weights are those of ``nn.GRUCell``, so a checkpoint does not care which
path trained it; tests/test_recurrence.py checks this path against the cell
with ``gradcheck`` in float64 and against the step loop in float32.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn


class GRUSequence(torch.autograd.Function):
    """``h (B, T, H) = GRU(x (B, T, E), h0 (B, H))`` with one cell's weights."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        x: Tensor,
        h0: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor,
        b_hh: Tensor,
    ) -> Tensor:
        batch, steps, _ = x.shape
        hidden = h0.size(1)
        gi = torch.addmm(b_ih, x.reshape(batch * steps, -1), w_ih.t())
        gi = gi.view(batch, steps, 3 * hidden)  # (B, T, 3H): every step's input part
        hs = x.new_empty(batch, steps, hidden)  # (B, T, H) the outputs h_t
        gates = x.new_empty(batch, steps, 4 * hidden)  # r, z, n, gh_n per step
        h = h0
        for t in range(steps):
            gh = torch.addmm(b_hh, h, w_hh.t())  # (B, 3H)
            i_r, i_z, i_n = gi[:, t].chunk(3, dim=1)
            h_r, h_z, h_n = gh.chunk(3, dim=1)
            r = torch.sigmoid(i_r + h_r)
            z = torch.sigmoid(i_z + h_z)
            n = torch.tanh(i_n + r * h_n)
            h = n + z * (h - n)  # (1 - z) n + z h
            hs[:, t] = h
            gates[:, t] = torch.cat([r, z, n, h_n], dim=1)
        ctx.save_for_backward(x, h0, w_ih, w_hh, hs, gates)
        return hs

    @staticmethod
    def backward(ctx: Any, grad_hs: Tensor) -> tuple[Tensor | None, ...]:
        x, h0, w_ih, w_hh, hs, gates = ctx.saved_tensors
        batch, steps, hidden = hs.shape
        # h_{t-1} for every t: h0, then the outputs shifted by one (B, T, H)
        prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
        dgi = x.new_empty(batch, steps, 3 * hidden)
        dgh = x.new_empty(batch, steps, 3 * hidden)
        dh = torch.zeros_like(h0)
        for t in reversed(range(steps)):
            dh = dh + grad_hs[:, t]
            r, z, n, h_n = gates[:, t].chunk(4, dim=1)
            da_n = dh * (1 - z) * (1 - n * n)
            da_r = da_n * h_n * r * (1 - r)
            da_z = dh * (prev[:, t] - n) * z * (1 - z)
            dgi[:, t] = torch.cat([da_r, da_z, da_n], dim=1)
            dgh[:, t] = torch.cat([da_r, da_z, da_n * r], dim=1)
            dh = torch.addmm(dh * z, dgh[:, t], w_hh)  # dh_{t-1}
        rows_i, rows_h = dgi.reshape(-1, 3 * hidden), dgh.reshape(-1, 3 * hidden)
        dx = (rows_i @ w_ih).view_as(x) if ctx.needs_input_grad[0] else None
        dw_ih = rows_i.t() @ x.reshape(batch * steps, -1)  # (3H, E)
        dw_hh = rows_h.t() @ prev.reshape(batch * steps, hidden)  # (3H, H)
        return dx, dh, dw_ih, dw_hh, rows_i.sum(0), rows_h.sum(0)


def gru_sequence(cell: nn.GRUCell, x: Tensor, h0: Tensor) -> Tensor:
    """Run ``cell`` over every step of x (B, T, E) from h0 (B, H): (B, T, H),
    the same as calling it step by step."""
    return run_gru(x, h0, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)


def run_gru(x: Tensor, h0: Tensor, *params: Tensor) -> Tensor:
    """:class:`GRUSequence` with weights (w_ih, w_hh, b_ih, b_hh). Under
    autocast the inputs are cast to the autocast dtype first, as a cell's own
    matmuls would be."""
    if torch.is_autocast_enabled(x.device.type):
        dtype = torch.get_autocast_dtype(x.device.type)
        x, h0, params = x.to(dtype), h0.to(dtype), tuple(p.to(dtype) for p in params)
    with torch.autocast(x.device.type, enabled=False):
        return GRUSequence.apply(x, h0, *params)
