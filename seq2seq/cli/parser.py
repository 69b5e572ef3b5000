"""The ``seq2seq`` command's options: one sub-parser per command, each
numeric option with its range (:data:`RANGES`, checked before any work)."""

from __future__ import annotations

import argparse
from pathlib import Path

from seq2seq import run
from seq2seq.cli import commands
from seq2seq.errors import UserError
from seq2seq.families import ATTENTION_KINDS
from seq2seq.training.progress import STYLES
from seq2seq.typed_yaml import Range, number, out_of_range

SPLITS = list(run.SPLITS)
EVAL_BUCKETS = (10, 20, 30, 40)  # config.EvalConfig's default, tested equal
SPLIT_HELP = "val_joined/test_joined join k = 1..4 consecutive pairs into one"


CHECKPOINT_HELP = "best, last, averaged (seq2seq average), or a path"
DEVICES = ["auto", "cpu", "cuda"]
DEVICE_HELP = "auto: CUDA where there is one (bf16 autocast), else the CPU"


# The range of every numeric option, by its dest; main() checks them before
# any work, and each option's help states its range.
# Every numeric option has a ceiling as well as a floor (as every config key
# has, seq2seq/config.py): far above any use, below what would overflow.
RANGES = {
    "beam": Range(lo=1, hi=1000),
    "alpha": Range(lo=0, hi=10),
    "seed": Range(lo=0, hi=2**32 - 1),
    "batch_size": Range(lo=1, hi=100_000),
    "nbest": Range(lo=1, hi=1000),
    "jobs": Range(lo=1, hi=1024),
    "sentences": Range(lo=1, hi=10**8),
    "epochs": Range(lo=1, hi=10**6),
    "port": Range(lo=0, hi=65535),
    "sample": Range(lo=1, hi=10**6),
    "k": Range(lo=1, hi=1000),
}


def numeric(p: argparse.ArgumentParser, flag: str, tp: type, help: str, **kw) -> None:
    """A numeric option whose help ends with its range from :data:`RANGES`."""
    dest = flag.lstrip("-").replace("-", "_")
    p.add_argument(flag, type=tp, help=f"{help} ({RANGES[dest]})", **kw)


def check_numbers(args: argparse.Namespace) -> None:
    for dest, rng in RANGES.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if why := out_of_range(value, rng):
            flag = "--" + dest.replace("_", "-")
            raise UserError(f"{flag} {number(value)}: {why}")


def add_decoding(p: argparse.ArgumentParser) -> None:
    numeric(p, "--beam", int, "beam size (1: greedy)", default=1)
    numeric(
        p, "--alpha", float, "beam length penalty: log p / length**alpha", default=1.0
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seq2seq", description=__doc__)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (
        add_prepare,
        add_train,
        add_evaluate,
        add_score,
        add_average,
        add_compare,
        add_translate,
        add_experiment,
        add_probe,
        add_explore,
    ):
        add(sub)
    return p


def add_prepare(sub: argparse._SubParsersAction) -> None:
    prep = sub.add_parser("prepare", help="make a corpus ready under data/")
    corpus = prep.add_subparsers(dest="corpus", required=True)
    m30k = corpus.add_parser("multi30k", help="Multi30k task 1 (download or mirror)")
    m30k.add_argument("--src", default="de", help="source language: de en fr cs")
    m30k.add_argument("--tgt", default="en", help="target language: de en fr cs")
    m30k.add_argument(
        "--mirror",
        type=Path,
        help="local folder holding the .gz files "
        "(default: $SEQ2SEQ_DATA_MIRROR, else download)",
    )
    m30k.add_argument(
        "--out", type=Path, default=Path("data/multi30k"), help="folder for the files"
    )
    m30k.set_defaults(func=commands.prepare_multi30k_command)
    bible = corpus.add_parser(
        "bible", help="two Bibles verse-aligned: long real sentences (es, en)"
    )
    bible.add_argument("--src", default="es", help="source language: es en")
    bible.add_argument("--tgt", default="en", help="target language: es en")
    bible.add_argument(
        "--mirror",
        type=Path,
        help="a SWORD library folder (mods.d/, modules/) holding the modules "
        "(default: $SEQ2SEQ_SWORD_MIRROR, /usr/share/sword, else download)",
    )
    numeric(
        bible, "--seed", int, "the seed that draws the held-out chapters", default=1
    )
    bible.add_argument(
        "--out", type=Path, help="folder for the files (default: data/bible_SRCTGT)"
    )
    bible.set_defaults(func=commands.prepare_bible_command)
    synth = corpus.add_parser("synth_ende", help="the shipped English-German corpus")
    numeric(synth, "--seed", int, "the generator's seed", default=1)
    synth.add_argument(
        "--out", type=Path, default=Path("data/synth_ende"), help="folder for the files"
    )
    synth.set_defaults(func=commands.prepare_synth_command)


def add_train(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("train", help="train a model from a YAML config")
    start = tr.add_mutually_exclusive_group(required=True)
    start.add_argument("--config", type=Path, help="a new run from this config")
    start.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue RUN_DIR from its last.pt (--set may raise the budget)",
    )
    tr.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. train.lr=3e-4",
    )
    tr.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    tr.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing run folder of the same name (a run, inside runs_dir)",
    )
    tr.add_argument(
        "--progress",
        default="auto",
        choices=STYLES,
        help="a bar, labelled log lines, or nothing (auto: a bar at a terminal, "
        "lines in a log)",
    )
    tr.set_defaults(func=commands.train_command)


def add_evaluate(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("evaluate", help="score a trained run on a split")
    ev.add_argument("run_dir", type=Path, help="a run directory of seq2seq train")
    ev.add_argument("--split", choices=SPLITS, help=SPLIT_HELP + " (default: test)")
    ev.add_argument(
        "--src",
        type=Path,
        help="instead of a split: any source file, one sentence a line",
    )
    ev.add_argument(
        "--ref",
        type=Path,
        action="append",
        help="--src's reference, line for line; repeat for more references",
    )
    ev.add_argument(
        "--name",
        help="what --src's files are called (default: --src's name "
        "without its language suffix): eval_NAME.json, hyp_NAME.txt",
    )
    ev.add_argument("--checkpoint", default="best", help=CHECKPOINT_HELP)
    ev.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    ev.add_argument(
        "--ablate",
        choices=["uniform", "shuffle", "none"],
        help="decode with the attention weights replaced; report the BLEU drop",
    )
    ev.add_argument(
        "--attention",
        help="which of the family's attentions --ablate acts on: "
        f"{', '.join(ATTENTION_KINDS)} (default: cross; an RNN has only cross)",
    )
    ev.add_argument(
        "--layers", help="--ablate only these layers (from 1: 1,3); default all"
    )
    ev.add_argument(
        "--heads", help="--ablate only these heads (from 1: 2); default all"
    )
    add_decoding(ev)
    ev.set_defaults(func=commands.evaluate_command)


def add_score(sub: argparse._SubParsersAction) -> None:
    sc = sub.add_parser(
        "score", help="score any system's output: BLEU, chrF, by length, bootstrap"
    )
    sc.add_argument(
        "--hyp",
        type=Path,
        action="append",
        required=True,
        help="a system's output, one line per reference line; repeat for more "
        "systems (each paired with the first)",
    )
    sc.add_argument(
        "--ref",
        type=Path,
        action="append",
        required=True,
        help="the reference; repeat for more references",
    )
    sc.add_argument("--src", type=Path, help="the source: BLEU and chrF by length")
    sc.add_argument(
        "--hyp-name",
        action="append",
        default=[],
        help="what to call each --hyp, in order (default: its path)",
    )
    sc.add_argument(
        "--buckets",
        default=",".join(map(str, EVAL_BUCKETS)),
        help="upper edges of the length buckets in source words, as eval.buckets",
    )
    sc.add_argument("--json", type=Path, help="also write the scores to this file")
    sc.set_defaults(func=commands.score_command)


def add_average(sub: argparse._SubParsersAction) -> None:
    av = sub.add_parser(
        "average", help="averaged.pt: the mean of a run's last kept checkpoints"
    )
    av.add_argument("run_dir", type=Path, help="a run trained with train.average_last")
    numeric(av, "-k", int, "the last K kept checkpoints (default: every one kept)")
    av.set_defaults(func=commands.average_command)


def add_compare(sub: argparse._SubParsersAction) -> None:
    cmp = sub.add_parser("compare", help="one table and one plot across runs")
    cmp.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        help="run directories; the first is the baseline",
    )
    cmp.add_argument("--split", default="test", choices=SPLITS, help=SPLIT_HELP)
    cmp.add_argument(
        "--out", type=Path, default=Path("compare"), help="folder for table and plot"
    )
    cmp.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    add_decoding(cmp)
    cmp.set_defaults(func=commands.compare_command)


def add_translate(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("translate", help="translate text with a trained run")
    tr.add_argument("run_dir", type=Path, help="a run directory of seq2seq train")
    tr.add_argument("--input", "-i", type=Path, help="default: standard input")
    tr.add_argument("--output", "-o", type=Path, help="default: standard output")
    numeric(tr, "--batch-size", int, "sentences at a time", default=32)
    tr.add_argument("--checkpoint", default="best", help=CHECKPOINT_HELP)
    numeric(tr, "--nbest", int, "print N hypotheses with scores", default=1)
    tr.add_argument(
        "--alignments", action="store_true", help="add Pharaoh word alignments"
    )
    tr.add_argument("--plot", type=Path, metavar="DIR", help="a heatmap per line")
    tr.add_argument("--json", action="store_true", help="one JSON object per line")
    tr.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    add_decoding(tr)
    tr.set_defaults(func=commands.translate_command)


def add_experiment(sub: argparse._SubParsersAction) -> None:
    exp = sub.add_parser(
        "experiment", help="train a list of configs alike, then compare"
    )
    exp.add_argument("file", type=Path, help="an experiment YAML file")
    numeric(exp, "--jobs", int, "trainings at a time (default: the file's jobs)")
    exp.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this config (its stem, e.g. hard) or run (hard-s42); repeatable",
    )
    exp.set_defaults(func=commands.experiment_command)


def add_probe(sub: argparse._SubParsersAction) -> None:
    pr = sub.add_parser(
        "probe", help="does the vector the decoder reads still hold word i?"
    )
    pr.add_argument("run_dirs", type=Path, nargs="+", help="run directories")
    pr.add_argument("--split", default="test", choices=["val", "test"])
    numeric(pr, "--sentences", int, "train pairs the probe learns from", default=3000)
    numeric(pr, "--epochs", int, "probe training epochs", default=5)
    pr.add_argument("--checkpoint", default="best", help=CHECKPOINT_HELP)
    pr.add_argument("--plot", type=Path, help="also one PNG with every run's curves")
    pr.set_defaults(func=commands.probe_command)


def add_explore(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser(
        "explore", help="a local page: type a sentence, watch each run attend"
    )
    ex.add_argument("run_dirs", type=Path, nargs="+", help="run directories")
    ex.add_argument("--host", default="127.0.0.1", help="address to listen on")
    numeric(ex, "--port", int, "port to listen on (0: any free one)", default=8765)
    numeric(
        ex,
        "--sample",
        int,
        "test lines the curve decodes a run, when its eval_test.json is not current",
        default=1000,
    )
    ex.add_argument("--device", default="cpu", choices=DEVICES, help=DEVICE_HELP)
    ex.set_defaults(func=commands.explore_command)
