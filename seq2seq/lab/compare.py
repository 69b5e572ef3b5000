"""``seq2seq compare RUN_DIR... [--split test] [--out DIR]``: one table, one plot.

Reads each run's ``eval_<split>.json`` (evaluating the run first if it is
missing) and writes to ``DIR``: ``compare.md`` and ``compare.csv`` (the table),
``compare.json`` (machine-readable) and ``bleu_by_length.png`` (BLEU against
source length, one line per run, with the sentence count of each bucket).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seq2seq import run
from seq2seq.config import SplitFiles, load_config
from seq2seq.data.corpus import eval_split, load_split, split_files
from seq2seq.data.parallel import Split, read_lines
from seq2seq.errors import UserError
from seq2seq.files import atomic_write, check_output, save_figure
from seq2seq.lab.ablate import KINDS
from seq2seq.lab.evaluate import cached_evaluate
from seq2seq.model.search import GREEDY, Decoding
from seq2seq.results import Bucket, Evaluation
from seq2seq.training.board import Board
from seq2seq.training.figures import bleu_length_figure
from seq2seq.training.metrics import length_buckets, paired_bootstrap
from seq2seq.training.validate import read_history
from seq2seq.typed_yaml import read_yaml

FIELDS = ("run", "mode", "params", "bleu", "chrf", "buckets", "aer")

# What compare writes into its --out folder (the paired bootstrap beside
# them where there is one), named here only.
TABLE, CSV, JSON, PLOT = (
    "compare.md",
    "compare.csv",
    "compare.json",
    "bleu_by_length.png",
)
OUTPUTS = (TABLE, CSV, JSON, PLOT)
SIGNIFICANCE = "significance.md"


def collect(
    run_dirs: Sequence[Path], split: str, device: str, decoding: Decoding = GREEDY
) -> list[dict[str, Any]]:
    """The evaluation of every run, in the order given."""
    results = []
    references: dict[SplitFiles, Split] = {}  # read each test set once
    for folder in map(Path, run_dirs):
        evaluated = cached_evaluate(folder, split, device, decoding)
        result = evaluated.to_dict()
        results.append(
            {key: result[key] for key in FIELDS}
            | {
                "run": str(folder),
                "bleu_lc": result["bleu_lc"],
                "by_sentences": result["by_sentences"],
                "decoding": result["decoding"],
                "ablation_drops": ablation_drops(
                    folder, split + decoding.tag, evaluated.step
                ),
                "length_ratio": length_ratios(folder, split, decoding.tag, references),
            }
            | training_summary(folder)
        )
    # A bucket is known by where it starts: the last one ends at the longest
    # sentence of its test set, which other test files need not share.
    edges = {tuple(b["lo"] for b in r["buckets"]) for r in results}
    if len(edges) > 1:
        raise UserError(
            "the runs use different length buckets (eval.buckets); evaluate them "
            "with the same buckets to compare"
        )
    return results


def length_ratios(
    folder: Path, split: str, tag: str, references: dict[SplitFiles, Split]
) -> list[float]:
    """Words written / reference words: overall, then for each number of
    sentences joined (a joined split). A model that stops early shows here.
    Empty when the run lacks its config or hypotheses. ``references`` caches
    the test sets already read."""
    config, hyp_file = run.config_file(folder), run.hypotheses_file(folder, split + tag)
    if not (config.is_file() and hyp_file.is_file()):
        return []
    files = split_files(load_config(config).data, split)
    if files not in references:
        references[files] = eval_split(files, split)
    pairs = references[files]
    hyps = read_lines(hyp_file)
    if len(hyps) != len(pairs.tgt):
        return []

    def ratio(index: Sequence[int]) -> float:
        written = sum(len(hyps[i].split()) for i in index)
        return written / max(sum(len(pairs.tgt[i].split()) for i in index), 1)

    sizes = sorted({len(g) for g in pairs.groups})
    by_k = [[i for i, g in enumerate(pairs.groups) if len(g) == k] for k in sizes]
    everything = [ratio(range(len(hyps)))]
    return everything + ([ratio(index) for index in by_k] if len(sizes) > 1 else [])


def ablation_drops(
    folder: Path, name: str, step: int | None = None
) -> dict[str, float]:
    """BLEU drop of every ``evaluate --ablate`` result the run has for ``name``,
    of the checkpoint at ``step`` only (an older one's would mix two models)."""
    drops = {}
    for kind in KINDS:
        path = run.evaluation_file(folder, f"{name}_ablate-{kind}")
        if path.is_file():
            ablated = Evaluation.read(path)
            if ablated.bleu_drop is None:
                raise UserError(f"{path}: records no bleu_drop; delete it")
            if step is None or ablated.step in (None, step):
                drops[kind] = ablated.bleu_drop
    return drops


def significance(
    results: list[dict[str, Any]], split: str, edges: list[int], tag: str = ""
) -> str | None:
    """Paired bootstrap of every run against the first (the baseline), overall
    and per length bucket; adds ``vs_baseline`` to each result. Returns the
    sacreBLEU signature, or None when the runs were scored on different text."""
    runs = [Path(r["run"]) for r in results]
    files = [split_files(load_config(run.config_file(r)).data, split) for r in runs]
    if any(f != files[0] for f in files):
        return None  # not the same test set: nothing to pair
    data = load_split(load_config(run.config_file(runs[0])).data, split)
    hyps = [read_lines(run.hypotheses_file(r, split + tag)) for r in runs]
    if any(len(h) != len(data.tgt) for h in hyps):
        return None  # not the same test set: nothing to pair
    buckets = length_buckets([len(s.split()) for s in data.src], edges)
    signature = None
    for r, h in zip(results[1:], hyps[1:], strict=True):
        overall, signature = paired_bootstrap(hyps[0], {"run": h}, data.tgt)
        per_bucket = []
        for lo, hi, index in buckets:
            pick = [[x[i] for i in index] for x in (hyps[0], h, data.tgt)]
            scores = (
                paired_bootstrap(pick[0], {"run": pick[1]}, pick[2])[0] if index else {}
            )
            per_bucket.append(
                {"lo": lo, "hi": hi, "n": len(index), **scores.get("run", {})}
            )
        r["vs_baseline"] = {
            "baseline": results[0]["run"],
            **overall["run"],
            "buckets": per_bucket,
        }
    results[0]["vs_baseline"] = None
    return signature


def significance_markdown(results: list[dict[str, Any]], signature: str) -> str:
    """The paired bootstrap as a markdown table; length buckets that hold no
    sentence (e.g. 51+ words on Multi30k's test set) get no column."""
    base = results[0]
    head = ["run", "mode", "BLEU (mean ± 95% CI)", "p vs baseline"] + [
        f"p {b['lo']}-{b['hi']}" for b in _filled(base)
    ]
    lines = [
        f"Paired bootstrap against {base['run']} ({base['mode']}); {signature}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in results[1:]:
        vs = r["vs_baseline"]
        cells = [
            r["run"],
            r["mode"],
            f"{vs['mean']:.1f} ± {vs['ci']:.1f}",
            f"{vs['p_value']:.4f}",
        ]
        cells += [f"{b['p_value']:.4f}" if "p_value" in b else "-" for b in _filled(vs)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def training_summary(folder: Path) -> dict[str, Any]:
    """The best validation (by the run's ``train.stop_metric``, as training
    chose its best.pt): its BLEU, perplexity and epoch; the epochs trained (the
    epoch of the last validation, counted from 1) and training minutes, from
    the run's history.jsonl; None for what it does not hold (histories written
    before epochs were recorded)."""
    history = read_history(run.history_file(folder))
    if not history:
        return dict.fromkeys(
            ("val_bleu", "val_ppl", "best_epoch", "epochs", "train_minutes")
        )
    config = run.config_file(folder)
    metric = load_config(config).train.stop_metric if config.is_file() else "bleu"
    best = history[0]
    for validation in history[1:]:
        if validation.beats(best, metric):
            best = validation
    elapsed = history[-1].elapsed_s
    return {
        "val_bleu": best.bleu,
        "val_ppl": best.ppl,
        "best_epoch": best.epoch,
        "epochs": history[-1].epoch,
        "train_minutes": None if elapsed is None else elapsed / 60,
    }


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def rows(results: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the comparison table."""
    head = (
        [
            "run",
            "mode",
            "params",
            "train min",
            "epochs",
            "best epoch",
            "val BLEU",
            "val ppl",
            "BLEU",
            "chrF",
            "AER",
        ]
        + [f"BLEU {b['lo']}-{b['hi']} (n={b['n']})" for b in _filled(results[0])]
        + [f"BLEU {b['k']} joined (n={b['n']})" for b in _joined(results[0])]
        + [f"BLEU drop, {kind} attention" for kind in _ablations(results)]
        + ["length ratio" + (" (all / k = 1, 2, ...)" if _joined(results[0]) else "")]
        + ["BLEU lowercased (tutorial setting)"]
    )
    body = [
        [
            r["run"],
            r["mode"],
            f"{r['params']:,}",
            _cell(r["train_minutes"]),
            _cell(r["epochs"], 0),
            _cell(r["best_epoch"], 0),
            _cell(r["val_bleu"]),
            _cell(r["val_ppl"], 2),
            _cell(r["bleu"]),
            _cell(r["chrf"]),
            _cell(r["aer"], 3),
        ]
        + [_cell(b["bleu"]) for b in _filled(r)]
        + [_cell(b["bleu"]) for b in _joined(r)]
        + [_cell(r.get("ablation_drops", {}).get(kind)) for kind in _ablations(results)]
        + [" / ".join(f"{x:.2f}" for x in r.get("length_ratio", [])) or "-"]
        + [_cell(r["bleu_lc"])]
        for r in results
    ]
    return head, body


def _filled(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The length buckets that hold sentences (the same for every run)."""
    return [b for b in result["buckets"] if b["n"]]


def _ablations(results: list[dict[str, Any]]) -> list[str]:
    """The ablations (ablate.KINDS order) that at least one run has."""
    return [k for k in KINDS if any(k in r.get("ablation_drops", {}) for r in results)]


def _joined(result: dict[str, Any]) -> list[dict[str, Any]]:
    """BLEU by number of sentences joined, for a ``*_joined`` split; else []."""
    by_k = result.get("by_sentences", [])
    return by_k if len(by_k) > 1 else []


def seed_groups(results: list[dict[str, Any]]) -> list[list[int]]:
    """Indices of runs whose configs differ only in ``train.seed`` (and where
    they were written: ``name``, ``runs_dir``)."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        cfg = read_yaml(run.config_file(r["run"]))
        cfg.pop("name", None)
        cfg.pop("runs_dir", None)
        cfg.get("train", {}).pop("seed", None)
        groups.setdefault(json.dumps(cfg, sort_keys=True), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def seeds_markdown(results: list[dict[str, Any]], groups: list[list[int]]) -> str:
    """Mean ± standard deviation over the seeds of each group."""

    def spread(values: list[float | None]) -> str:
        xs = [v for v in values if v is not None]
        return f"{statistics.mean(xs):.1f} ± {statistics.stdev(xs):.1f}" if xs else "-"

    head = ["mode", "runs", "BLEU", "chrF"] + [
        f"BLEU {b['lo']}-{b['hi']}" for b in _filled(results[0])
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in groups:
        rs = [results[i] for i in group]
        cells = [
            rs[0]["mode"],
            str(len(rs)),
            spread([r["bleu"] for r in rs]),
            spread([r["chrf"] for r in rs]),
        ]
        cells += [
            spread([r["buckets"][k]["bleu"] for r in rs])
            for k, b in enumerate(rs[0]["buckets"])
            if b["n"]
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(results: list[dict[str, Any]]) -> str:
    head, body = rows(results)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def _label(result: dict[str, Any]) -> str:
    """A run's legend entry: its directory name, with the mode if not in it."""
    name = Path(result["run"]).name
    return name if result["mode"] in name else f"{name} [{result['mode']}]"


def write_csv(results: list[dict[str, Any]], path: Path) -> None:
    """The table's columns, with raw numbers."""
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(rows(results)[0])  # the table's header
    for r in results:
        writer.writerow(
            [
                r["run"],
                r["mode"],
                r["params"],
                r["train_minutes"],
                r["epochs"],
                r["best_epoch"],
                r["val_bleu"],
                r["val_ppl"],
                r["bleu"],
                r["chrf"],
                r["aer"],
            ]
            + [b["bleu"] for b in _filled(r)]
            + [b["bleu"] for b in _joined(r)]
            + [r.get("ablation_drops", {}).get(kind) for kind in _ablations(results)]
            + [" / ".join(f"{x:.3f}" for x in r.get("length_ratio", []))]
            + [r["bleu_lc"]]
        )
    atomic_write(path, f.getvalue())


def compare(
    run_dirs: Sequence[Path],
    split: str = "test",
    out: Path = Path("compare"),
    device: str = "auto",
    decoding: Decoding = GREEDY,
) -> list[dict[str, Any]]:
    if not run_dirs:
        raise UserError("compare: name at least one run directory")
    seen: dict[Path, Path] = {}
    for folder in map(Path, run_dirs):
        if (here := folder.resolve()) in seen:
            raise UserError(
                f"compare: {folder} is named twice (also as {seen[here]}); name "
                "each run once"
            )
        seen[here] = folder
    compared = [("a run folder compared", d) for d in seen.values()]
    check_output(out, "--out", compared, folder=True)
    results = collect(run_dirs, split, device, decoding)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown(results)
    groups = seed_groups(results)
    if groups:
        table += "\n\nMean ± std over seeds:\n\n" + seeds_markdown(results, groups)
    atomic_write(out / TABLE, table + "\n")
    write_csv(results, out / CSV)
    signature = None
    if len(results) > 1:
        edges = [b["hi"] for b in results[0]["buckets"][:-1]]
        signature = significance(results, split, edges, decoding.tag)
    (out / SIGNIFICANCE).unlink(missing_ok=True)  # an earlier compare's
    if signature:
        text = significance_markdown(results, signature) + "\n"
        atomic_write(out / SIGNIFICANCE, text)
    elif len(results) > 1:
        print(
            f"compare: no paired bootstrap: the runs were scored on different {split} "
            "files (it pairs the same sentences); BLEU, chrF and the length buckets "
            "are compared as they are"
        )
    atomic_write(out / JSON, json.dumps(results, indent=2) + "\n")
    lines = [(_label(r), [Bucket.from_dict(b) for b in r["buckets"]]) for r in results]
    fig = bleu_length_figure(lines, f"{split}, {decoding.describe()}")
    save_figure(fig, out / PLOT)
    for old in out.glob("events.out.tfevents.*"):  # an earlier compare's: replaced
        old.unlink()
    board = Board(out)  # `tensorboard --logdir runs` shows it as a run named compare
    board.writer.add_figure("compare/bleu_by_length", fig, 0, close=True)
    board.text("compare/table", table, 0)
    if signature:
        board.text("compare/significance", significance_markdown(results, signature), 0)
    board.close()
    return results
