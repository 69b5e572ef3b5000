"""A third model family is one folder and one registration line.

tests/bag_family/ is a family the package has never heard of: a bag of
source embeddings (one self-attention, no positions) read by a GRU decoder
through dot-product cross-attention, its config section, model and
registration in that folder, written against the public floor only (the
config's ModelConfig and key, families.register, model/interface.py, the
loss). Registered, it trains, validates, evaluates (greedy and beam, AER
too), translates, aligns and draws, is compared, answers in the explorer
with both its kinds of map, and appears in TensorBoard's HPARAMS, through
the same commands as the RNN and the Transformer; and nothing under
seq2seq/ names it (what ``git diff --stat`` of adding it shows)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import yaml
from conftest import REPO, overrides, translates_aligned_and_drawn
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from seq2seq import families
from seq2seq.cli import main
from seq2seq.data.synth import write_corpus
from seq2seq.lab.explore import Explorer
from seq2seq.results import Evaluation

FOLDER = Path(__file__).parent / "bag_family"
# What a family's own folder may import of the package: the model floor's
# public parts. Training, search, the lab and the other families' parts stay
# out of reach, as they do for model/transformer/.
FLOOR = {
    "seq2seq",  # `from seq2seq import families`
    "seq2seq.config",
    "seq2seq.families",
    "seq2seq.model.interface",
    "seq2seq.model.loss",
    "seq2seq.model.ablation",
    "seq2seq.specials",
}


@pytest.fixture
def bag() -> Iterator[None]:
    import bag_family

    bag_family.register()  # the one registration line
    try:
        yield
    finally:
        del families.FAMILIES["bag"]


def test_the_folder_reads_only_the_model_floor() -> None:
    imported: set[str] = set()
    for path in FOLDER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
    ours = {m for m in imported if m.split(".")[0] == "seq2seq"}
    assert ours and ours <= FLOOR, ours - FLOOR
    named = [
        p
        for p in (REPO / "seq2seq").rglob("*.py")
        if "bag_family" in p.read_text(encoding="utf-8")
        or "BagConfig" in p.read_text(encoding="utf-8")
    ]
    assert named == []


def train_bag(tmp_path: Path, corpus: Path, name: str) -> Path:
    sets = [
        s
        for s in overrides(corpus, tmp_path / "runs", name, steps=16)
        if not s.startswith("model.")
    ]
    sets += ["tokenizer.vocab_size=300", "train.batch_tokens=400"]
    config = tmp_path / "bag.yaml"
    config.write_text(
        yaml.safe_dump({"model": {"family": "bag", "width": 12}}), encoding="utf-8"
    )
    argv = ["train", "--config", str(config), "--progress", "off"]
    assert main([*argv, *(a for s in sets for a in ("--set", s))]) == 0
    return tmp_path / "runs" / name


def test_a_family_in_its_own_folder_runs_through_every_command(
    bag, tmp_path: Path, capsys
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, seed=5, sizes={"train": 300, "val": 20, "test": 20})
    mixed = train_bag(tmp_path, corpus, "mixed")
    assert "family=bag mode=mixed" in capsys.readouterr().out  # the start-up line
    saved = yaml.safe_load((mixed / "config.yaml").read_text())
    assert saved["model"] == {"family": "bag", "width": 12, "self_attention": True}
    lines = (mixed / "history.jsonl").read_text().splitlines()
    history = [json.loads(x) for x in lines]
    assert history[-1]["step"] == 16 and 0 <= history[-1]["attention"]["aer"] <= 1

    assert main(["evaluate", str(mixed)]) == 0
    assert main(["evaluate", str(mixed), "--beam", "3"]) == 0
    greedy = Evaluation.read(mixed / "eval_test.json")
    beam = Evaluation.read(mixed / "eval_test_beam3.json")
    assert (greedy.family, greedy.label()) == ("bag", "bag/mixed")
    assert greedy.aer is not None and 0 <= greedy.aer <= 1
    assert beam.scores.n == greedy.scores.n == 20

    capsys.readouterr()
    translates_aligned_and_drawn(mixed, tmp_path, capsys)
    out = tmp_path / "compared"
    assert main(["compare", str(mixed), "--out", str(out)]) == 0
    assert "| bag/mixed |" in (out / "compare.md").read_text(encoding="utf-8")
    assert main(["probe", str(mixed), "--sentences", "10", "--epochs", "1"]) == 2
    assert "reads the source through no single vector" in capsys.readouterr().err
    assert main(["evaluate", str(mixed), "--ablate", "uniform"]) == 2
    assert "a bag model has no attention to ablate" in capsys.readouterr().err

    events = EventAccumulator(str(mixed), size_guidance={"images": 0})
    events.Reload()
    images = events.Tags()["images"]
    for kind in ("cross", "encoder_self"):  # both its kinds, drawn
        assert any(t.startswith(f"{kind}/layer1/") for t in images), (kind, images)
    assert events.PluginTagToContent("hparams")  # the section's hparams()
    assert families.family("bag").config().hparams() == {
        "family": "bag",
        "width": 16,
        "self_attention": True,
    }

    explorer = Explorer([mixed], "cpu")
    assert explorer.info()["runs"][0]["label"] == "bag/mixed"
    (answer,) = explorer.translate("the dog sleeps .")["runs"]
    assert list(answer["maps"]) == ["cross", "encoder_self"]
    for kind, m in answer["maps"].items():  # each row a distribution (3 digits)
        weights = torch.tensor(m["weights"])  # (L, h, rows, cols)
        assert weights.shape == (1, 1, len(m["rows"]), len(m["cols"])), kind
        sums = weights.sum(-1)
        torch.testing.assert_close(sums, torch.ones_like(sums), atol=0.01, rtol=0)
