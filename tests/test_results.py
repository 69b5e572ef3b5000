"""The typed results: each reads the files older versions wrote, and writes
the keys users' files have always had, in the same order."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from seq2seq.errors import UserError
from seq2seq.results import (
    Bucket,
    CompareRow,
    Evaluation,
    Joined,
    TrainingState,
    TrainingSummary,
    Validation,
)

# The keys of an eval_<name>.json as `seq2seq evaluate` writes them today.
KEYS = [
    "run",
    "split",
    "mode",
    "family",
    "params",
    "checkpoint",
    "decoding",
    "ablation",
    "step",
    "n",
    "bleu",
    "chrf",
    "bleu_lc",
    "signature",
    "chrf_signature",
    "buckets",
    "by_sentences",
    "aer",
]

# The first evaluate wrote these keys only (no decoding, ablation, bleu_lc or
# by_sentences): such files are still in users' run folders.
FIRST = {
    "run": "runs/old",
    "split": "test",
    "mode": "additive",
    "params": 1234,
    "checkpoint": "best",
    "step": 800,
    "n": 3,
    "bleu": 41.5,
    "chrf": 60.25,
    "signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0",
    "chrf_signature": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.0",
    "buckets": [
        {"lo": 1, "hi": 10, "n": 2, "bleu": 50.0},
        {"lo": 11, "hi": 20, "n": 0, "bleu": None},
        {"lo": 21, "hi": 30, "n": 1, "bleu": 12.5},
    ],
    "aer": 0.25,
}


def test_a_file_of_the_first_version_reads_with_the_meaning_it_had() -> None:
    e = Evaluation.from_dict(FIRST)
    assert (e.decoding, e.ablation, e.bleu_drop) == ("greedy", None, None)
    assert e.scores.bleu_lc is None and e.scores.by_sentences == ()
    assert e.buckets[1] == Bucket(11, 20, 0, None)
    assert [b.n for b in e.scores.filled()] == [2, 1]
    assert e.bleu == 41.5 and e.step == 800 and e.aer == 0.25
    assert e.family == "rnn" and e.label() == "additive"  # before families


def test_labels_name_the_family_where_families_mix() -> None:
    from seq2seq.families import run_label

    assert run_label("rnn", "additive") == "additive"
    assert run_label("rnn", "additive", mixed=True) == "rnn/additive"
    assert run_label("transformer", "multihead") == "transformer"
    assert run_label("transformer", "multihead", mixed=True) == "transformer"
    no_residual = run_label("transformer", "no-residual")  # an ablation, named
    assert no_residual == "transformer/no-residual"


def test_todays_file_round_trips_with_its_keys_in_order() -> None:
    data = FIRST | {
        "decoding": "beam 5, alpha 1.0",
        "ablation": None,
        "family": "rnn",
        "bleu_lc": 43.0,
        "buckets": [
            {"lo": 1, "hi": 10, "n": 2, "bleu": 50.0, "chrf": 70.5},
            {"lo": 11, "hi": 20, "n": 0, "bleu": None},
        ],
        "by_sentences": [
            {"k": 1, "n": 2, "bleu": 40.0, "hyp_sentences": 1.0, "ref_sentences": 1.0}
        ],
    }
    data = {key: data[key] for key in KEYS}  # evaluate's order
    e = Evaluation.from_dict(data)
    assert list(e.to_dict()) == KEYS
    assert e.to_dict() == data
    assert json.loads(e.to_json()) == data


def test_an_ablation_writes_its_drop_last() -> None:
    e = Evaluation.from_dict(FIRST | {"ablation": "uniform", "bleu_drop": 30.0})
    assert list(e.to_dict()) == [*KEYS, "bleu_drop"]
    assert e.to_dict()["bleu_drop"] == 30.0


def test_joined_counts_written_before_they_existed_stay_absent() -> None:
    old = {"k": 2, "n": 5, "bleu": 20.0}
    assert Joined.from_dict(old).to_dict() == old
    new = old | {"hyp_sentences": 1.5, "ref_sentences": 2.0}
    assert Joined.from_dict(new).to_dict() == new


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"run": "x"}', "not an evaluation written by seq2seq evaluate"),
        ("[1, 2]", "not an evaluation written by seq2seq evaluate"),
        (json.dumps(FIRST | {"buckets": [{"lo": 1}]}), "KeyError"),
    ],
)
def test_a_damaged_file_is_one_line_naming_it(
    tmp_path: Path, text: str, needle: str
) -> None:
    path = tmp_path / "eval_test.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=needle) as err:
        Evaluation.read(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_history_line_round_trips_and_the_best_keeps_five_scores() -> None:
    line = {"step": 8, "loss": 5.6, "ppl": 295.0, "bleu": 0.2, "chrf": 2.1}
    line |= {"epoch": 1, "lr": 0.00048, "elapsed_s": 6.8, "attention": {"aer": 1.0}}
    v = Validation.from_dict(line)
    assert json.dumps(v.to_dict()) == json.dumps(line)  # the same text
    assert v.scores() == {k: line[k] for k in ("step", "loss", "ppl", "bleu", "chrf")}
    # written without epoch and lr (older code, or a bare Validator.run)
    bare = {k: line[k] for k in ("step", "loss", "ppl", "bleu", "chrf")}
    old = Validation.from_dict(bare)
    assert old.epoch is None and old.to_dict() == bare | {"attention": {}}


def test_the_better_validation_follows_the_stop_metric() -> None:
    a = Validation(1, loss=3.7, ppl=40.0, bleu=6.0, chrf=30.0)
    b = Validation(2, loss=3.6, ppl=37.0, bleu=3.2, chrf=29.0)
    assert a.beats(None, "bleu") and b.beats(a, "loss") and not b.beats(a, "bleu")


def test_the_saved_runs_checkpoint_state_reads_and_writes_back_unchanged() -> None:
    # tests/fixtures/saved_run: a run written by older code (its README)
    import torch

    saved = Path(__file__).parent / "fixtures/saved_run/additive"
    for name in ("best.pt", "last.pt"):
        state = torch.load(saved / name, weights_only=True)["state"]
        typed = TrainingState.from_dict(state)
        assert typed.to_dict() == state
        assert list(typed.to_dict()) == list(state)
    last = TrainingState.from_dict(
        torch.load(saved / "last.pt", weights_only=True)["state"]
    )
    assert last.finished and last.best is not None and last.best.step == 8


def test_a_compare_row_keeps_compare_jsons_keys_in_order() -> None:
    evaluation = Evaluation.from_dict(FIRST)
    row = CompareRow("runs/a", evaluation, {}, (1.0,), TrainingSummary())
    keys = ["run", "mode", "family", "params", "bleu", "chrf", "buckets", "aer"]
    keys += ["bleu_lc"]
    keys += ["by_sentences", "decoding", "ablation_drops", "length_ratio"]
    keys += ["val_bleu", "val_ppl", "best_epoch", "epochs", "train_minutes"]
    assert list(row.to_dict()) == keys  # not paired: no vs_baseline at all
    paired = replace(row, paired=True)
    assert list(paired.to_dict()) == [*keys, "vs_baseline"]
    assert paired.to_dict()["vs_baseline"] is None  # the baseline itself
