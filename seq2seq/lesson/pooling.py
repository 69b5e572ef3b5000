"""Attention beyond translation (notebook 6): attention pooling over the
patches of a synthetic picture, trained in seconds.

A picture is a 3 x 3 grid of 8 x 8 patches. Every patch holds a bar, upright
or lying, in noise; one patch, at a random place, also has a frame. The
label is the framed patch's bar: upright or lying. A classifier that reads
the picture through the *mean* of its patches' embeddings sees nine bars
at once, eight of them distractors; one that reads it through *attention
pooling* (a learned query over the patches, the lesson's single-head
attention: Q from a parameter, K and V from the patches) can weight the
framed patch and read its bar alone. Nothing here is a sentence or an
alignment: the same weighted sum, choosing what to read.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from seq2seq.lesson.attention import SingleHeadAttention

GRID, SIDE = 3, 8  # patches per row, pixels per patch side
PATCHES = GRID * GRID


def pictures(size: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
    """``size`` pictures (B, 24, 24), their labels (B,) (1: the framed bar
    is upright) and where the frame is (B,), a patch index in row order."""
    image = 0.3 * torch.rand(size, GRID * SIDE, GRID * SIDE, generator=generator)
    upright = torch.rand(size, PATCHES, generator=generator) < 0.5  # (B, 9)
    framed = torch.randint(0, PATCHES, (size,), generator=generator)  # (B,)
    for b in range(size):
        for p in range(PATCHES):
            top, left = SIDE * (p // GRID), SIDE * (p % GRID)
            patch = image[b, top : top + SIDE, left : left + SIDE]
            if upright[b, p]:
                patch[1:-1, 3:5] = 1.0
            else:
                patch[3:5, 1:-1] = 1.0
            if p == int(framed[b]):
                patch[0, :] = patch[-1, :] = patch[:, 0] = patch[:, -1] = 1.0
    labels = upright[torch.arange(size), framed].long()
    return image, labels, framed


def patches(image: Tensor) -> Tensor:
    """(B, 24, 24) -> (B, 9, 64): the patches in row order, each flattened."""
    b = image.size(0)
    grid = image.view(b, GRID, SIDE, GRID, SIDE).transpose(2, 3)
    return grid.reshape(b, PATCHES, SIDE * SIDE)


class Classifier(nn.Module):
    """Patch embeddings, pooled into one vector (by attention or the mean),
    then a linear layer to the two labels."""

    def __init__(self, attention: bool, width: int = 32) -> None:
        super().__init__()
        # linear, as a Vision Transformer's patch embedding (Dosovitskiy et al.
        # 2021): the mean of the embeddings is then the embedding of the mean
        # patch, where the framed bar is one of nine
        self.embed = nn.Linear(SIDE * SIDE, width)
        self.attention = SingleHeadAttention(width, width) if attention else None
        self.query = nn.Parameter(torch.randn(1, 1, width))  # what to look for
        self.out = nn.Linear(width, 2)

    def forward(self, image: Tensor) -> tuple[Tensor, Tensor]:
        """Logits (B, 2) and the pooling weights over the patches (B, 9)."""
        x = self.embed(patches(image))  # (B, 9, width)
        if self.attention is None:
            weights = torch.full(x.shape[:2], 1 / PATCHES)  # the mean
            pooled = x.mean(dim=1)  # (B, width)
        else:
            query = self.query.expand(x.size(0), 1, -1)  # (B, 1, width)
            mixed, w = self.attention(query, x)  # (B, 1, width), (B, 1, 9)
            pooled, weights = mixed[:, 0], w[:, 0]
        return self.out(pooled), weights


@dataclass
class Pooled:
    model: Classifier
    accuracy: float  # on new pictures
    on_frame: float  # mean weight on the framed patch (1/9 for the mean)


def train_pooling(attention: bool, steps: int = 300, seed: int = 0) -> Pooled:
    """Train a :class:`Classifier` for ``steps`` Adam steps of 64 pictures and
    score it on 1,000 new ones."""
    torch.manual_seed(seed)
    model = Classifier(attention)
    data = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(steps):
        image, labels, _ = pictures(64, data)
        logits, _ = model(image)
        loss = nn.functional.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        image, labels, framed = pictures(1000, torch.Generator().manual_seed(seed + 1))
        logits, weights = model(image)
    right = (logits.argmax(-1) == labels).float().mean()
    on_frame = weights[torch.arange(1000), framed].mean()
    return Pooled(model, float(right), float(on_frame))
