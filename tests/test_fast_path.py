"""Which path trains the recurrences (seq2seq/model/fast/path.py): what each
supports, and a config that asks for a path its model cannot take refused at
load with the key to change."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import REPO

from seq2seq.config import Config, DecoderConfig, RNNConfig, load_config
from seq2seq.errors import UserError
from seq2seq.model.fast.path import PATHS, unsupported


def model(mode: str = "additive", rnn: str = "gru", layers: int = 1) -> RNNConfig:
    decoder = DecoderConfig(rnn=rnn, layers=layers, input_feeding=True)
    return RNNConfig(attention=mode, decoder=decoder)


def test_steps_and_auto_train_every_model() -> None:
    for m in (model(), model("general"), model(rnn="lstm"), model(layers=2)):
        assert unsupported(m, "steps") is None and unsupported(m, "auto") is None


def test_input_feeding_on_the_sequence_paths_needs_the_fused_step() -> None:
    assert unsupported(model(), "sequence") is None
    assert unsupported(model(), "compiled") is None
    for m in (model("general"), model(rnn="lstm"), model(layers=2)):
        for path in ("sequence", "compiled"):
            why = unsupported(m, path)
            assert why is not None and why.startswith(f"{path}: with model.decoder")
    no_feeding = dataclasses.replace(
        model("general"), decoder=DecoderConfig(input_feeding=False)
    )
    assert unsupported(no_feeding, "sequence") is None


def test_a_config_asking_for_what_its_model_cannot_take_is_refused() -> None:
    base = REPO / "configs" / "synth_ende" / "additive.yaml"
    cfg = load_config(base, ["train.recurrence=sequence"])
    assert isinstance(cfg, Config) and cfg.train.recurrence == "sequence"
    with pytest.raises(UserError, match="train.recurrence.*use auto or steps"):
        load_config(
            base,
            [
                "train.recurrence=sequence",
                "model.decoder.input_feeding=true",
                "model.attention=general",
            ],
        )
    assert PATHS == ("auto", "compiled", "sequence", "steps")
