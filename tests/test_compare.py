"""seq2seq compare: table, CSV, JSON and plot across finished runs."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REPO, tiny_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from seq2seq.config import load_config, save_config
from seq2seq.data.synth import write_corpus
from seq2seq.errors import UserError
from seq2seq.lab.compare import (
    ablation_drops,
    compare,
    rows,
    significance_markdown,
    training_summary,
)
from seq2seq.lab.evaluate import evaluate
from seq2seq.model.search import Decoding
from seq2seq.results import (
    CompareRow,
    Evaluation,
    Paired,
    PairedBucket,
    TrainingSummary,
    Validation,
    VsBaseline,
)
from seq2seq.training.train import train


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("compare")
    write_corpus(root / "corpus", seed=6, sizes={"train": 400, "val": 20, "test": 40})
    out = []
    for mode in ("none", "additive"):
        cfg = load_config(
            REPO / f"configs/synth_ende/{mode}.yaml",
            tiny_overrides(root / "corpus", root / "runs", mode),
        )
        out.append(train(cfg, "cpu"))
    evaluate(out[1], "test", device_name="cpu")  # the other is evaluated by compare
    return out


def as_json(results: list[CompareRow]) -> list[dict]:
    """The rows as compare.json holds them."""
    return [r.to_dict() for r in results]


def test_compare_writes_table_csv_json_and_plot(runs, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    results = as_json(compare(runs, "test", out, "cpu"))
    assert (runs[0] / "eval_test.json").is_file()  # evaluated on demand
    data = json.loads((out / "compare.json").read_text())
    assert data == results and [r["mode"] for r in data] == ["none", "additive"]
    for r in data:
        assert {"run", "mode", "params", "bleu", "chrf", "buckets", "aer"} <= set(r)
        assert sum(b["n"] for b in r["buckets"]) == 40
        keys = {"lo", "hi", "n", "bleu"}  # and chrF where a bucket holds a pair
        for b in r["buckets"]:
            assert set(b) == (keys | {"chrf"} if b["n"] else keys)
    assert data[0]["aer"] is None and data[1]["aer"] is not None
    hyps = (runs[1] / "hyp_test.txt").read_text().split()
    refs = (runs[0].parent.parent / "corpus" / "test.de").read_text().split()
    assert data[1]["length_ratio"] == [pytest.approx(len(hyps) / len(refs))]
    table = (out / "compare.md").read_text()
    assert table.count("\n") == 4 and "additive" in table and "lowercased" in table
    assert "AER: n/a" not in table  # the synthetic corpus has gold links
    rows = list(csv.reader((out / "compare.csv").open()))
    assert len(rows) == 3 and rows[2][2] == str(data[1]["params"])
    assert rows[0][3] == "train min" and float(rows[2][3]) > 0
    assert rows[0][4:6] == ["epochs", "best epoch"]
    assert all(h["epoch"] >= 1 and h["lr"] > 0 for h in history_of(runs[1]))
    assert (out / "bleu_by_length.png").read_bytes().startswith(b"\x89PNG")
    # paired bootstrap against the first run, overall and per bucket
    assert data[0]["vs_baseline"] is None
    vs = data[1]["vs_baseline"]
    assert vs["baseline"] == str(runs[0]) and 0 < vs["p_value"] <= 1
    assert abs(vs["score"] - data[1]["bleu"]) < 1e-9
    assert [(b["lo"], b["hi"]) for b in vs["buckets"]] == [
        (b["lo"], b["hi"]) for b in data[1]["buckets"]
    ]
    assert "bs:1000" in (out / "significance.md").read_text()
    # the same table and plot in TensorBoard, as a run of their own
    events = EventAccumulator(str(out))
    events.Reload()
    assert "compare/bleu_by_length" in events.Tags()["images"]
    assert {"compare/table/text_summary", "compare/significance/text_summary"} <= set(
        events.Tags()["tensors"]
    )


def row(run: str, mode: str, buckets: list[dict], **kw: object) -> CompareRow:
    """A compare row of a made-up evaluation."""
    scores = {"run": run, "split": "test", "mode": mode, "params": 1, "n": 8}
    scores |= {"bleu": 1.0, "chrf": 2.0, "signature": "", "buckets": buckets}
    evaluation = Evaluation.from_dict(scores)
    return CompareRow(run, evaluation, {}, (), TrainingSummary(), **kw)


def test_significance_table_leaves_out_empty_buckets() -> None:
    buckets = [{"lo": 1, "hi": 10, "n": 5}, {"lo": 11, "hi": 51, "n": 3}]
    empty = {"lo": 52, "hi": 52, "n": 0}  # Multi30k's test set has no 51+ words
    buckets = [b | {"bleu": 1.0} for b in buckets] + [empty | {"bleu": None}]
    base = row("a", "none", buckets)
    p = [Paired(1.0, 1.0, 1.0, p) for p in (0.01, 0.2)]
    per_bucket = (PairedBucket(1, 10, 5, p[0]), PairedBucket(11, 51, 3, p[1]))
    per_bucket += (PairedBucket(52, 52, 0, None),)
    vs = VsBaseline("a", Paired(20.5, 20.0, 1.0, 0.001), per_bucket)
    other = row("b", "additive", buckets, paired=True, vs_baseline=vs)
    table = significance_markdown([base, other], "sig").splitlines()
    assert table[2] == (
        "| run | mode | BLEU (mean ± 95% CI) | p vs baseline | p 1-10 | p 11-51 |"
    )
    assert table[4] == "| b | additive | 20.0 ± 1.0 | 0.0010 | 0.0100 | 0.2000 |"


def history_of(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "history.jsonl").open()]


def test_training_summary_reads_epochs_from_history(tmp_path: Path) -> None:
    def summary(*lines: dict) -> TrainingSummary:
        (tmp_path / "history.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines)
        )
        return training_summary(tmp_path)

    line = {"step": 1, "loss": 2.2, "bleu": 5.0, "ppl": 9.0, "chrf": 20.0}
    line |= {"elapsed_s": 60.0}
    got = summary(
        line | {"epoch": 1}, line | {"bleu": 7.0, "epoch": 2}, line | {"epoch": 4}
    )
    assert got == TrainingSummary(7.0, 9.0, 2, 4, 1.0)
    # older histories have no epochs; a resumed one may have them from the middle
    assert summary(line).epochs is None and summary(line).best_epoch is None
    mixed = summary(line | {"bleu": 9.0}, line | {"epoch": 3})
    assert (mixed.epochs, mixed.best_epoch) == (3, None)
    made = row("r", "none", [{"lo": 1, "hi": 9, "n": 1, "bleu": 1.0}])
    _, body = rows([replace(made, training=mixed)])
    assert body[0][4:6] == ["3", "-"]
    assert training_summary(tmp_path / "nowhere").epochs is None
    # a last line cut short by a kill is left out, not a traceback
    summary(line | {"epoch": 1})
    with (tmp_path / "history.jsonl").open("a") as f:
        f.write('{"bleu": 99.0, "ep')
    assert training_summary(tmp_path).val_bleu == 5.0


def test_the_best_validation_follows_the_stop_metric(tmp_path: Path) -> None:
    """With train.stop_metric: loss the best epoch is the lowest loss, as in
    training's choice of best.pt, not the highest BLEU."""
    lines = [
        {"step": 10, "epoch": 1, "bleu": 6.0, "loss": 3.7, "ppl": 40.0, "chrf": 30.0},
        {"step": 20, "epoch": 2, "bleu": 3.2, "loss": 3.6, "ppl": 37.0, "chrf": 29.0},
    ]
    (tmp_path / "history.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    assert training_summary(tmp_path).best_epoch == 1  # no config: BLEU
    cfg = load_config(REPO / "configs/synth_ende/none.yaml", ["train.stop_metric=loss"])
    save_config(cfg, tmp_path / "config.yaml")
    assert training_summary(tmp_path).best_epoch == 2
    first, second = (Validation.from_dict(x) for x in lines)
    assert second.beats(first, "loss") and first.beats(None, "bleu")
    assert not second.beats(first, "bleu")


def test_compare_refuses_mismatched_buckets(runs, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    result = json.loads((runs[1] / "eval_test.json").read_text())
    result["buckets"] = result["buckets"][:1]
    (other / "eval_test.json").write_text(json.dumps(result))
    with pytest.raises(UserError, match="different length buckets"):
        compare([runs[1], other], "test", tmp_path / "cmp", "cpu")


def test_seeds_of_one_config_are_summarised(runs, tmp_path: Path) -> None:
    again = load_config(
        runs[1] / "config.yaml", ["train.seed=2", f"runs_dir={tmp_path}", "name=s2"]
    )
    second = train(again, "cpu")
    results = as_json(
        compare([runs[0], runs[1], second], "test", tmp_path / "cmp", "cpu")
    )
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "Mean ± std over seeds" in table
    summary = table.split("Mean ± std over seeds")[1]
    assert "| additive | 2 |" in summary and "| none |" not in summary
    assert len(results) == 3


def test_compare_on_the_joined_test_set(runs, tmp_path: Path) -> None:
    compare(runs, "test_joined", tmp_path / "joined", "cpu")
    results = as_json(compare(runs, "test_joined", tmp_path / "joined", "cpu"))  # again
    assert len(list((tmp_path / "joined").glob("events.out.tfevents.*"))) == 1
    for r in results:  # 40 pairs joined 1, 2, 3, 4, 1, ... -> 16 long pairs
        assert sum(b["n"] for b in r["buckets"]) == 16
        assert [(b["k"], b["n"]) for b in r["by_sentences"]] == [
            (1, 4),
            (2, 4),
            (3, 4),
            (4, 4),
        ]
    head = (tmp_path / "joined" / "compare.md").read_text().splitlines()[0]
    assert "BLEU 4 joined (n=4)" in head
    for r in results:  # words written / reference words: overall, then k = 1..4
        assert len(r["length_ratio"]) == 5 and all(x >= 0 for x in r["length_ratio"])
    assert results[1]["vs_baseline"]["p_value"] > 0  # paired on the joined pairs
    assert (runs[0] / "hyp_test_joined.txt").read_text().count("\n") == 16


def test_compare_with_beam_search_keeps_greedy_results(runs, tmp_path: Path) -> None:
    greedy = json.loads((runs[1] / "eval_test.json").read_text())
    results = as_json(compare(runs, "test", tmp_path / "beam", "cpu", Decoding(beam=3)))
    assert [r["decoding"] for r in results] == ["beam 3, alpha 1.0"] * 2
    for run in runs:
        assert (run / "eval_test_beam3.json").is_file()
        assert (run / "hyp_test_beam3.txt").read_text().count("\n") == 40
    assert json.loads((runs[1] / "eval_test.json").read_text()) == greedy


def test_ablation_reports_its_bleu_drop_in_compare(runs, tmp_path: Path) -> None:
    ablated = evaluate(runs[1], "test", device_name="cpu", ablation="shuffle")
    base = json.loads((runs[1] / "eval_test.json").read_text())
    assert ablated.bleu_drop == pytest.approx(base["bleu"] - ablated.bleu)
    assert ablated.ablation == "shuffle" and ablated.aer is None
    assert (runs[1] / "eval_test_ablate-shuffle.json").is_file()
    results = as_json(compare(runs, "test", tmp_path / "c", "cpu"))
    assert results[0]["ablation_drops"] == {}
    assert results[1]["ablation_drops"] == {"shuffle": ablated.bleu_drop}
    head = (tmp_path / "c" / "compare.md").read_text().splitlines()[0]
    assert "BLEU drop, shuffle attention" in head
    with pytest.raises(UserError, match="no attention to ablate"):
        evaluate(runs[0], "test", device_name="cpu", ablation="uniform")
    # an ablation of an older checkpoint than the one scored is left out
    path = runs[1] / "eval_test_ablate-shuffle.json"
    path.write_text(json.dumps(ablated.to_dict() | {"step": base["step"] - 1}))
    assert ablation_drops(runs[1], "test", base["step"]) == {}
    path.write_text(ablated.to_json())


def test_a_run_named_twice_is_refused(runs, tmp_path: Path) -> None:
    again = Path(str(runs[1]) + "/../" + runs[1].name)  # the same folder, spelt anew
    with pytest.raises(UserError, match="is named twice"):
        compare([runs[0], runs[1], again], "test", tmp_path / "cmp", "cpu")
    assert not (tmp_path / "cmp").exists()


def test_runs_scored_on_other_test_files_compare_without_pairing(
    runs, tmp_path: Path, capsys
) -> None:
    """Other test files (here a shorter test set) share no sentences to pair:
    BLEU, chrF and the length buckets are compared, the bootstrap is skipped
    with its reason, and no earlier significance.md is left to mislead."""
    cfg = load_config(runs[1] / "config.yaml")
    short = {}
    for side in ("src", "tgt", "align"):
        lines = Path(getattr(cfg.data.test, side)).read_text().splitlines()[:25]
        short[side] = tmp_path / f"short.{side}"
        short[side].write_text("".join(x + "\n" for x in lines))
    other = tmp_path / "other"
    shutil.copytree(runs[1], other)
    for stale in other.glob("eval_*.json"):
        stale.unlink()
    test = type(cfg.data.test)(**{k: str(v) for k, v in short.items()})
    data = type(cfg.data)(**{**cfg.data.__dict__, "test": test})
    save_config(type(cfg)(**{**cfg.__dict__, "data": data}), other / "config.yaml")
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "significance.md").write_text("an earlier comparison's\n")
    results = as_json(compare([runs[1], other], "test", out, "cpu"))
    assert [sum(b["n"] for b in r["buckets"]) for r in results] == [40, 25]
    assert all(r["bleu"] is not None and "vs_baseline" not in r for r in results)
    assert not (out / "significance.md").exists()
    assert "no paired bootstrap: the runs were scored on different test" in (
        capsys.readouterr().out
    )


def test_a_test_set_without_gold_links_says_aer_is_na_once(
    runs, tmp_path: Path
) -> None:
    """The Bibles' case: no gold alignments, so one line under the table
    says AER is n/a (each run's cell is '-'), not an error per run."""
    copies = []
    for run_dir in runs:
        copy = tmp_path / run_dir.name
        shutil.copytree(run_dir, copy)
        for stale in copy.glob("eval_*.json"):
            stale.unlink()
        cfg = load_config(copy / "config.yaml")
        test = replace(cfg.data.test, align=None)
        data = replace(cfg.data, test=test)
        save_config(replace(cfg, data=data), copy / "config.yaml")
        copies.append(copy)
    results = compare(copies, "test", tmp_path / "cmp", "cpu")
    assert all(r.evaluation.aer is None for r in results)
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert table.count("AER: n/a") == 1, table


def test_out_may_not_be_a_run_folder(runs, tmp_path: Path) -> None:
    """compare replaces the TensorBoard events in --out: never a run's."""
    events = sorted(p.name for p in runs[1].glob("events.out.tfevents.*"))
    with pytest.raises(UserError, match="refused, nothing written: it is a run"):
        compare(runs, "test", runs[1], "cpu")
    with pytest.raises(UserError, match="it lies in the run folder"):
        compare(runs[:1], "test", runs[1] / "compare", "cpu")  # another run's
    assert sorted(p.name for p in runs[1].glob("events.out.tfevents.*")) == events
    assert not (runs[1] / "compare").exists()
