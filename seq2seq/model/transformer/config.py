"""The Transformer family's ``model`` section (Vaswani et al. 2017): its keys,
checked when a config loads. It imports no torch, so that a config (and
``seq2seq --help``) loads without building anything; model.py builds the
model from it and registers both (seq2seq/families.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from seq2seq.config import (
    BELOW_1,
    LAYERS,
    WIDTH,
    Config,
    ModelConfig,
    check_key,
    key,
)

STANDARD = "multihead"  # the variant's name where nothing is ablated


@dataclass(frozen=True)
class TransformerConfig(ModelConfig):
    """The Transformer family's model section (model/transformer/ builds it;
    Vaswani et al. 2017). ``residual``, ``norm: none`` and ``causal`` are the
    lesson's ablations: each trains and is named by :attr:`variant`."""

    family: Literal["transformer"] = key(
        "transformer",
        "the model family (seq2seq/families.py); the keys below are its own",
    )
    layers: int = key(3, "encoder layers, and as many decoder layers", rng=LAYERS)
    heads: int = key(4, "attention heads; d_model must divide by them", rng=LAYERS)
    d_model: int = key(256, "every position's vector width", rng=WIDTH)
    ffn: int = key(1024, "the position-wise feed-forward's inner width", rng=WIDTH)
    dropout: float = key(
        0.1, "on embeddings, sublayer outputs, inside the FFN", rng=BELOW_1
    )
    attention_dropout: float = key(0.0, "on the attention weights", rng=BELOW_1)
    norm: Literal["pre", "post", "none"] = key(
        "pre",
        "LayerNorm before each sublayer (pre), after its residual sum (post, "
        "the paper's), or none (an ablation)",
    )
    residual: bool = key(True, "x + sublayer(x); false is an ablation")
    causal: bool = key(
        True,
        "the decoder reads only the target prefix; false is an ablation that "
        "reads the future in training, which search cannot give it",
    )
    positions: Literal["sinusoidal", "learned"] = key(
        "sinusoidal", "position vectors: the paper's sinusoids, or a learned table"
    )
    max_positions: int = key(
        1024, "learned positions: the longest sentence, in subwords", rng=WIDTH
    )
    tie_embeddings: bool = key(
        True, "the output layer is the target embedding (Press & Wolf 2017)"
    )
    share_embeddings: bool = key(
        False,
        "the source embedding is the target's too: one matrix for a joint "
        "vocabulary (tokenizer.joint)",
    )
    fused_attention: bool = key(
        True,
        "torch's fused scaled_dot_product_attention where no weights are "
        "asked for; false: Eq. 1 written out (the reference)",
    )

    def __post_init__(self) -> None:
        check_key(
            self.d_model % self.heads == 0,
            "model.heads",
            f"d_model {self.d_model} does not divide into {self.heads} heads; "
            "pick heads that divide it (or a d_model that is a multiple)",
        )
        check_key(
            self.d_model % 2 == 0 or self.positions == "learned",
            "model.d_model",
            f"sinusoidal positions pair sines and cosines: {self.d_model} must be even",
        )

    @property
    def variant(self) -> str:
        """The run's name beside its family: ``multihead``, the standard, or
        what it changes (``post-norm``, ``no-norm``, ``no-residual``,
        ``non-causal``, joined by ``+``): tables and legends show it."""
        changes = [
            {"pre": "", "post": "post-norm", "none": "no-norm"}[self.norm],
            "" if self.residual else "no-residual",
            "" if self.causal else "non-causal",
        ]
        return "+".join(c for c in changes if c) or STANDARD

    def hparams(self) -> dict[str, str | int | float]:
        return {
            "family": self.family,
            "mode": self.variant,
            "layers": self.layers,
            "heads": self.heads,
            "d_model": self.d_model,
            "ffn": self.ffn,
        }

    def check_with(self, cfg: Config) -> None:
        check_key(
            not self.share_embeddings or cfg.tokenizer.joint,
            "model.share_embeddings",
            "one embedding for both sides needs one vocabulary: set "
            "tokenizer.joint=true, or model.share_embeddings=false",
        )


def label(mode: str) -> str:
    """What tables call a Transformer run (families.run_label): the family's
    name for the standard variant, else the variant after it
    (``transformer/no-residual``)."""
    return "transformer" if mode == STANDARD else f"transformer/{mode}"
