"""seq2seq/families.py: model families in a registry. A config names its
family with ``model.family`` (``rnn`` where it names none, as every config
before families did); the model section is that family's dataclass, and a
key of another family's section is a one-line error saying whose it is. A
family outside the package running through every command:
test_family_folder.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import pytest
from conftest import SourceBlind

from seq2seq import families
from seq2seq.config import ModelConfig, key, load_config
from seq2seq.errors import UserError


@dataclass(frozen=True)
class ToyConfig(ModelConfig):
    family: Literal["toy"] = key("toy", "the model family")
    width: int = key(16, "the embedding's width")


def build_toy(cfg: ToyConfig, src_vocab: int, tgt_vocab: int, path: str):  # noqa: ANN201
    return SourceBlind(tgt_vocab, cfg.width)


@pytest.fixture
def toy_family() -> Iterator[None]:
    families.register(
        "toy", ToyConfig, build_toy, lambda cfg, path: None, "a target LM"
    )
    try:
        yield
    finally:
        del families.FAMILIES["toy"]


def test_the_rnn_is_registered_and_the_default() -> None:
    """model/registered.py registers both families on the first lookup."""
    assert families.DEFAULT == "rnn" and "rnn" in families.registry()
    assert families.family("transformer").config.__name__ == "TransformerConfig"
    rnn = families.family("rnn")
    assert rnn.config.__name__ == "RNNConfig"
    with pytest.raises(ValueError, match="registered twice"):
        families.register("rnn", rnn.config, rnn.build, rnn.unsupported, "again")


def test_a_config_without_a_family_is_an_rnn() -> None:
    cfg = load_config("configs/synth_ende/additive.yaml")
    assert cfg.model.family == "rnn" and cfg.model.attention == "additive"
    same = load_config("configs/synth_ende/additive.yaml", ["model.family=rnn"])
    assert same == cfg


def test_an_unknown_family_lists_the_known_ones(toy_family) -> None:
    with pytest.raises(UserError) as err:
        load_config("configs/synth_ende/additive.yaml", ["model.family=transformr"])
    assert (
        "config key 'model.family': 'transformr' is not one of rnn, transformer, toy"
        in str(err.value)
    )


def test_a_key_of_another_family_says_whose_it_is(toy_family) -> None:
    with pytest.raises(UserError) as err:
        load_config("configs/synth_ende/additive.yaml", ["model.width=8"])
    assert "'model.width' is a key of model.family toy" in str(err.value)
    assert "this section's family is rnn" in str(err.value)
    with pytest.raises(UserError) as err:
        load_config("configs/synth_ende/base.yaml", ["model.family=toy"])
    assert "is a key of model.family rnn" in str(err.value)  # the base's keys
    with pytest.raises(UserError, match="unknown config key 'model.nope'"):
        load_config("configs/synth_ende/additive.yaml", ["model.nope=1"])
