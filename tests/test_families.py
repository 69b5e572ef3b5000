"""seq2seq/families.py: model families in a registry. A config names its
family with ``model.family`` (``rnn`` where it names none, as every config
before families did); the model section is that family's dataclass, and a
key of another family's section is a one-line error saying whose it is. A
toy family registered in the test (a decoder that ignores the source and
attends evenly over it, from conftest) trains with ``train``, is evaluated
greedily and with a beam (its AER too), translated, aligned and drawn,
through the same code as the RNN: nothing above the model floor knows it is
not an RNN."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import yaml
from conftest import SourceBlind, overrides, snapshot, translates_aligned_and_drawn

from seq2seq import families
from seq2seq.cli import main
from seq2seq.config import key, load_config
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.lab.evaluate import evaluate
from seq2seq.model.model import Seq2Seq
from seq2seq.model.search import Decoding
from seq2seq.training.train import train


@dataclass(frozen=True)
class ToyConfig:
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


def toy_config(tmp_path: Path) -> tuple[Path, list[str]]:
    """A config of the toy family on a small synthetic corpus."""
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 20})
    sets = [
        s
        for s in overrides(corpus, tmp_path / "runs", "toy", steps=24)
        if not s.startswith("model.")
    ]
    sets += ["tokenizer.vocab_size=300", "train.batch_tokens=400"]
    sets += ["train.num_probes=1", "model.family=toy", "model.width=12"]
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump({"model": {"family": "toy"}}), encoding="utf-8")
    return path, sets


def test_a_toy_family_trains_evaluates_and_translates(
    toy_family, tmp_path: Path, capsys
) -> None:
    path, sets = toy_config(tmp_path)
    cfg = load_config(path, sets)
    assert cfg.model == ToyConfig(width=12)
    run_dir = train(cfg, "cpu", progress="off")
    lines = (run_dir / "history.jsonl").read_text().splitlines()
    history = [json.loads(x) for x in lines]
    assert history[-1]["step"] == 24
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["model"] == {"family": "toy", "width": 12}
    greedy = evaluate(run_dir, "test", "best", "cpu")
    beam = evaluate(run_dir, "test", "best", "cpu", Decoding(3))
    assert (greedy.family, greedy.label()) == ("toy", "toy/even")  # its mode
    assert greedy.aer is not None and 0 <= greedy.aer <= 1  # its even attention
    assert beam.scores.n == greedy.scores.n == 20
    before = snapshot(run_dir)
    capsys.readouterr()  # training's lines
    translates_aligned_and_drawn(run_dir, tmp_path, capsys)
    assert snapshot(run_dir) == before
    assert main(["probe", str(run_dir), "--sentences", "10", "--epochs", "1"]) == 2
    assert "reads the source through no single vector" in capsys.readouterr().err
    assert main(["evaluate", str(run_dir), "--ablate", "uniform"]) == 2
    assert "no attention to ablate" in capsys.readouterr().err
    events = list(run_dir.glob("events.out.tfevents.*"))  # the watched heatmaps
    assert events and any(e.stat().st_size > 10_000 for e in events)
    assert not isinstance(greedy, Seq2Seq)
