"""The bag family's ``model`` section: its name and its keys, each with its
meaning and range, checked when a config loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from seq2seq.config import WIDTH, ModelConfig, key


@dataclass(frozen=True)
class BagConfig(ModelConfig):
    family: Literal["bag"] = key("bag", "the model family")
    width: int = key(16, "the embeddings' and the decoder state's width", rng=WIDTH)
    self_attention: bool = key(True, "mix each source word with the others first")
