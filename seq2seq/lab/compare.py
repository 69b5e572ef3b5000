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
from dataclasses import replace
from pathlib import Path

from seq2seq import run
from seq2seq.config import SplitFiles, load_config
from seq2seq.data.corpus import eval_split, load_split, split_files
from seq2seq.data.parallel import Split, read_lines
from seq2seq.errors import UserError
from seq2seq.families import mixes_families
from seq2seq.files import atomic_write, check_output, save_figure
from seq2seq.lab.evaluate import cached_evaluate
from seq2seq.model.ablation import HOWS
from seq2seq.model.search import GREEDY, Decoding
from seq2seq.results import (
    CompareRow,
    Evaluation,
    Joined,
    TrainingSummary,
    VsBaseline,
)
from seq2seq.training.board import Board
from seq2seq.training.checkpoint import load_run_config
from seq2seq.training.figures import bleu_length_figure
from seq2seq.training.metrics import bootstrap_by_length
from seq2seq.training.validate import read_history
from seq2seq.typed_yaml import read_yaml

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
) -> list[CompareRow]:
    """The evaluation of every run, in the order given."""
    results = []
    references: dict[SplitFiles, Split] = {}  # read each test set once
    for folder in map(Path, run_dirs):
        evaluated = cached_evaluate(folder, split, device, decoding)
        name = split + decoding.tag
        results.append(
            CompareRow(
                run=str(folder),
                evaluation=evaluated,
                ablation_drops=ablation_drops(folder, name, evaluated.step),
                length_ratio=length_ratios(folder, split, decoding.tag, references),
                training=training_summary(folder),
            )
        )
    if mixes_families(r.evaluation.family for r in results):
        results = [replace(r, mixed=True) for r in results]
    # A bucket is known by where it starts: the last one ends at the longest
    # sentence of its test set, which other test files need not share.
    edges = {tuple(b.lo for b in r.evaluation.buckets) for r in results}
    if len(edges) > 1:
        raise UserError(
            "the runs use different length buckets (eval.buckets); evaluate them "
            "with the same buckets to compare"
        )
    return results


def length_ratios(
    folder: Path, split: str, tag: str, references: dict[SplitFiles, Split]
) -> tuple[float, ...]:
    """Words written / reference words: overall, then for each number of
    sentences joined (a joined split). A model that stops early shows here.
    Empty when the run lacks its config or hypotheses. ``references`` caches
    the test sets already read."""
    config, hyp_file = run.config_file(folder), run.hypotheses_file(folder, split + tag)
    if not (config.is_file() and hyp_file.is_file()):
        return ()
    files = split_files(load_run_config(folder).data, split)
    if files not in references:
        references[files] = eval_split(files, split)
    pairs = references[files]
    hyps = read_lines(hyp_file)
    if len(hyps) != len(pairs.tgt):
        return ()

    def ratio(index: Sequence[int]) -> float:
        written = sum(len(hyps[i].split()) for i in index)
        return written / max(sum(len(pairs.tgt[i].split()) for i in index), 1)

    sizes = sorted({len(g) for g in pairs.groups})
    by_k = [[i for i, g in enumerate(pairs.groups) if len(g) == k] for k in sizes]
    everything = [ratio(range(len(hyps)))]
    joined = [ratio(index) for index in by_k] if len(sizes) > 1 else []
    return tuple(everything + joined)


def ablation_drops(
    folder: Path, name: str, step: int | None = None
) -> dict[str, float]:
    """BLEU drop of every ``evaluate --ablate`` result the run has for ``name``,
    of the checkpoint at ``step`` only (an older one's would mix two models)."""
    drops = {}
    for kind in HOWS:
        path = run.evaluation_file(folder, f"{name}_ablate-{kind}")
        if path.is_file():
            ablated = Evaluation.read(path)
            if ablated.bleu_drop is None:
                raise UserError(f"{path}: records no bleu_drop; delete it")
            if step is None or ablated.step in (None, step):
                drops[kind] = ablated.bleu_drop
    return drops


def significance(
    results: list[CompareRow], split: str, edges: list[int], tag: str = ""
) -> tuple[list[CompareRow], str | None]:
    """Paired bootstrap of every run against the first (the baseline), overall
    and per length bucket: the rows with their ``vs_baseline``, and the
    sacreBLEU signature; the rows as they were and None when the runs were
    scored on different text."""
    runs = [Path(r.run) for r in results]
    files = [split_files(load_run_config(r).data, split) for r in runs]
    if any(f != files[0] for f in files):
        return results, None  # not the same test set: nothing to pair
    data = load_split(load_run_config(runs[0]).data, split)
    hyps = [read_lines(run.hypotheses_file(r, split + tag)) for r in runs]
    if any(len(h) != len(data.tgt) for h in hyps):
        return results, None  # not the same test set: nothing to pair
    words = [len(s.split()) for s in data.src]
    signature = ""
    paired = [replace(results[0], paired=True)]
    for r, h in zip(results[1:], hyps[1:], strict=True):
        test, buckets, signature = bootstrap_by_length(
            hyps[0], h, data.tgt, words, edges
        )
        vs = VsBaseline(results[0].run, test, buckets)
        paired.append(replace(r, paired=True, vs_baseline=vs))
    return paired, signature


def significance_markdown(results: list[CompareRow], signature: str) -> str:
    """The paired bootstrap as a markdown table; length buckets that hold no
    sentence (e.g. 51+ words on Multi30k's test set) get no column."""
    base = results[0]
    head = ["run", "mode", "BLEU (mean ± 95% CI)", "p vs baseline"] + [
        f"p {b.lo}-{b.hi}" for b in base.evaluation.scores.filled()
    ]
    lines = [
        f"Paired bootstrap against {base.run} ({base.label}); {signature}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in results[1:]:
        vs = r.vs_baseline
        assert vs is not None  # significance() paired every run after the first
        cells = [r.run, r.label, f"{vs.test.mean:.1f} ± {vs.test.ci:.1f}"]
        cells.append(f"{vs.test.p_value:.4f}")
        cells += [f"{b.test.p_value:.4f}" if b.test else "-" for b in vs.buckets if b.n]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def training_summary(folder: Path) -> TrainingSummary:
    """The best validation (by the run's ``train.stop_metric``, as training
    chose its best.pt): its BLEU, perplexity and epoch; the epochs trained (the
    epoch of the last validation, counted from 1) and training minutes, from
    the run's history.jsonl; None for what it does not hold (histories written
    before epochs were recorded)."""
    history = read_history(run.history_file(folder))
    if not history:
        return TrainingSummary()
    config = run.config_file(folder)
    metric = load_config(config).train.stop_metric if config.is_file() else "bleu"
    best = history[0]
    for validation in history[1:]:
        if validation.beats(best, metric):
            best = validation
    elapsed = history[-1].elapsed_s
    minutes = None if elapsed is None else elapsed / 60
    return TrainingSummary(best.bleu, best.ppl, best.epoch, history[-1].epoch, minutes)


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def rows(results: list[CompareRow]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the comparison table."""
    first = results[0].evaluation.scores
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
        + [f"BLEU {b.lo}-{b.hi} (n={b.n})" for b in first.filled()]
        + [f"chrF {b.lo}-{b.hi}" for b in first.filled()]
        + [f"BLEU {b.k} joined (n={b.n})" for b in _joined(results[0])]
        + [f"BLEU drop, {kind} attention" for kind in _ablations(results)]
        + ["length ratio" + (" (all / k = 1, 2, ...)" if _joined(results[0]) else "")]
        + ["BLEU lowercased (tutorial setting)"]
    )
    body = [
        [r.run, r.label, f"{r.evaluation.params:,}"]
        + _number_cells(_numbers(r, results))
        + [" / ".join(f"{x:.2f}" for x in r.length_ratio) or "-"]
        + [_cell(r.evaluation.scores.bleu_lc)]
        for r in results
    ]
    return head, body


# Decimals of the table's numeric columns after run, mode and params, as
# _numbers gives them: train min, epochs, best epoch, val BLEU, val ppl, BLEU,
# chrF, AER; one for every column after them (BLEU and chrF by length,
# joined, ablations).
DIGITS = (1, 0, 0, 1, 2, 1, 1, 3)


def _number_cells(numbers: list[float | None]) -> list[str]:
    digits = (*DIGITS, *[1] * (len(numbers) - len(DIGITS)))
    return [_cell(x, d) for x, d in zip(numbers, digits, strict=True)]


def _numbers(r: CompareRow, results: list[CompareRow]) -> list[float | None]:
    """A row's numbers in the table's order, from train min to the ablations
    (DIGITS' first eight, then one decimal each)."""
    t, s = r.training, r.evaluation.scores
    return (
        [t.train_minutes, t.epochs, t.best_epoch, t.val_bleu, t.val_ppl]
        + [s.bleu, s.chrf, r.evaluation.aer]
        + [b.bleu for b in s.filled()]
        + [b.chrf for b in s.filled()]
        + [b.bleu for b in _joined(r)]
        + [r.ablation_drops.get(kind) for kind in _ablations(results)]
    )


def _ablations(results: list[CompareRow]) -> list[str]:
    """The ablations (model/ablation.HOWS order) that at least one run has."""
    return [k for k in HOWS if any(k in r.ablation_drops for r in results)]


def _joined(result: CompareRow) -> tuple[Joined, ...]:
    """BLEU by number of sentences joined, for a ``*_joined`` split; else ()."""
    by_k = result.evaluation.scores.by_sentences
    return by_k if len(by_k) > 1 else ()


def seed_groups(results: list[CompareRow]) -> list[list[int]]:
    """Indices of runs whose configs differ only in ``train.seed`` (and where
    they were written: ``name``, ``runs_dir``)."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        cfg = read_yaml(run.config_file(Path(r.run)))
        cfg.pop("name", None)
        cfg.pop("runs_dir", None)
        cfg.get("train", {}).pop("seed", None)
        groups.setdefault(json.dumps(cfg, sort_keys=True), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def seeds_markdown(results: list[CompareRow], groups: list[list[int]]) -> str:
    """Mean ± standard deviation over the seeds of each group."""

    def spread(values: list[float | None]) -> str:
        xs = [v for v in values if v is not None]
        return f"{statistics.mean(xs):.1f} ± {statistics.stdev(xs):.1f}" if xs else "-"

    first = results[0].evaluation.scores
    head = ["mode", "runs", "BLEU", "chrF"] + [
        f"BLEU {b.lo}-{b.hi}" for b in first.filled()
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in groups:
        rs = [results[i].evaluation.scores for i in group]
        cells = [results[group[0]].label, str(len(rs))]
        cells += [spread([s.bleu for s in rs]), spread([s.chrf for s in rs])]
        cells += [
            spread([s.buckets[k].bleu for s in rs])
            for k, b in enumerate(rs[0].buckets)
            if b.n
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(results: list[CompareRow]) -> str:
    head, body = rows(results)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def _label(result: CompareRow) -> str:
    """A run's legend entry: its directory name, with the mode if not in it."""
    name = Path(result.run).name
    return name if result.label in name else f"{name} [{result.label}]"


def write_csv(results: list[CompareRow], path: Path) -> None:
    """The table's columns, with raw numbers."""
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(rows(results)[0])  # the table's header
    for r in results:
        writer.writerow(
            [r.run, r.label, r.evaluation.params]
            + _numbers(r, results)
            + [" / ".join(f"{x:.3f}" for x in r.length_ratio)]
            + [r.evaluation.scores.bleu_lc]
        )
    atomic_write(path, f.getvalue())


def compare(
    run_dirs: Sequence[Path],
    split: str = "test",
    out: Path = Path("compare"),
    device: str = "auto",
    decoding: Decoding = GREEDY,
) -> list[CompareRow]:
    """Compare the runs on ``split``: write the table, the paired bootstrap,
    compare.json, the plot and a TensorBoard run into ``out``."""
    check_runs(run_dirs, out)
    results = collect(run_dirs, split, device, decoding)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown(results)
    if not any(split_files(load_run_config(r).data, split).align for r in run_dirs):
        table += f"\n\nAER: n/a, {split} has no gold word alignments to score it by."
    groups = seed_groups(results)
    if groups:
        table += "\n\nMean ± std over seeds:\n\n" + seeds_markdown(results, groups)
    atomic_write(out / TABLE, table + "\n")
    write_csv(results, out / CSV)
    signature = None
    if len(results) > 1:
        edges = [b.hi for b in results[0].evaluation.buckets[:-1]]
        results, signature = significance(results, split, edges, decoding.tag)
    (out / SIGNIFICANCE).unlink(missing_ok=True)  # an earlier compare's
    paired = significance_markdown(results, signature) if signature else ""
    if paired:
        atomic_write(out / SIGNIFICANCE, paired + "\n")
    elif len(results) > 1:
        print(
            f"compare: no paired bootstrap: the runs were scored on different {split} "
            "files (it pairs the same sentences); BLEU, chrF and the length buckets "
            "are compared as they are"
        )
    rows_json = [r.to_dict() for r in results]
    atomic_write(out / JSON, json.dumps(rows_json, indent=2) + "\n")
    lines = [(_label(r), r.evaluation.buckets) for r in results]
    fig = bleu_length_figure(lines, f"{split}, {decoding.describe()}")
    save_figure(fig, out / PLOT)
    for old in out.glob("events.out.tfevents.*"):  # an earlier compare's: replaced
        old.unlink()
    board = Board(out)  # `tensorboard --logdir runs` shows it as a run named compare
    board.writer.add_figure("compare/bleu_by_length", fig, 0, close=True)
    board.text("compare/table", table, 0)
    if paired:
        board.text("compare/significance", paired, 0)
    board.close()
    return results


def check_runs(run_dirs: Sequence[Path], out: Path) -> None:
    """At least one run, each named once, and ``out`` no run's folder."""
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
