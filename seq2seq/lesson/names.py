"""Each mode as a figure's legend says it to a student."""

from __future__ import annotations

# What each mode lets the decoder read, in a student's words (legends, slides).
PLAIN_NAMES = {
    "none": "no attention (one vector, h₀)",
    "context": "one vector at every step",
    "mean": "mean of the encoder states",
    "hard": "hard attention (one state)",
    "additive": "additive attention",
    "dot": "dot-product attention",
    "scaled_dot": "scaled dot-product attention",
    "general": "general (bilinear) attention",
}


def plain_name(mode: str) -> str:
    """``mode`` for a legend: what the decoder reads (the mode's name when
    it has no plain name)."""
    return PLAIN_NAMES.get(mode, mode)
