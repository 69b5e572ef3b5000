"""Attention ablations: how much does a trained model rely on its weights?

Attention maps are useful but not guaranteed explanations (Jain & Wallace
2019). ``seq2seq evaluate --ablate HOW`` decodes with the trained weights
replaced, at every step, by

- ``uniform``: the same weight on every real source position (mean pooling);
- ``shuffle``: the model's own weights permuted at random over the real source
  positions (same sharpness, wrong places);
- ``none``: no context at all (c_t = 0, as in mode ``none``),

and reports the BLEU drop against the unablated model. Each ablation wraps the
trained attention module; the model is otherwise untouched.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seq2seq.errors import UserError
from seq2seq.model.attention import Attention, attend
from seq2seq.model.interface import Model

KINDS = ("uniform", "shuffle", "none")


class Ablated(Attention):
    """A trained attention whose weights are replaced by :meth:`replace`."""

    def __init__(self, inner: Attention) -> None:
        super().__init__()
        self.inner = inner

    def project_keys(self, keys: Tensor, mask: Tensor) -> Tensor:
        return self.inner.project_keys(keys, mask)

    def replace(self, weights: Tensor, mask: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        _, weights = self.inner(query, keys, mask, projected)  # (B, S)
        weights = self.replace(weights, mask)
        return attend(weights, keys), weights


class Uniform(Ablated):
    def replace(self, weights: Tensor, mask: Tensor) -> Tensor:
        uniform = mask.to(weights.dtype)  # (B, S)
        return uniform / uniform.sum(dim=1, keepdim=True)


class Shuffle(Ablated):
    """Random permutation over real positions, a new one at every step, drawn
    from a fixed seed so that an evaluation is reproducible."""

    def __init__(self, inner: Attention, seed: int = 0) -> None:
        super().__init__(inner)
        self.generator = torch.Generator().manual_seed(seed)

    def replace(self, weights: Tensor, mask: Tensor) -> Tensor:
        noise = torch.rand(mask.shape, generator=self.generator).to(mask.device)
        # Padding sorts last, so the first n_b positions of ``order`` are a
        # random permutation of the n_b real (left-aligned) positions.
        order = noise.masked_fill(~mask, 2.0).argsort(dim=1)
        return weights.gather(1, order)  # (B, S), zero stays on padding


class NoContext(Ablated):
    def forward(
        self, query: Tensor, keys: Tensor, mask: Tensor, projected: Tensor | None = None
    ) -> tuple[Tensor, None]:
        return keys.new_zeros(keys.size(0), keys.size(2)), None  # (B, D)


def ablate(model: Model, kind: str) -> None:
    """Swap the decoder's attention for the ablation ``kind`` (in place)."""
    if not model.has_alignment:
        raise UserError(
            f"--ablate {kind}: mode '{model.mode}' has no attention to ablate"
        )
    wrappers = {"uniform": Uniform, "shuffle": Shuffle, "none": NoContext}
    if kind not in wrappers:
        raise UserError(f"--ablate {kind}: choose one of {', '.join(KINDS)}")
    model.wrap_attention(wrappers[kind])
