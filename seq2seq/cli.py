"""The ``seq2seq`` command: prepare, train, evaluate, compare, translate,
experiment, probe, explore."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from seq2seq import run
from seq2seq.errors import UserError, exit_status
from seq2seq.files import check_output, exclusive
from seq2seq.training.progress import STYLES, tensorboard_command
from seq2seq.typed_yaml import Range, number, out_of_range

if TYPE_CHECKING:  # imported when used: `seq2seq --help` stays fast
    from seq2seq.model.search import Decoding

SPLITS = ["val", "test", "val_joined", "test_joined"]
SPLIT_HELP = "val_joined/test_joined join k = 1..4 consecutive pairs into one"


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


def decoding(args: argparse.Namespace) -> Decoding:
    from seq2seq.model.search import Decoding

    return Decoding(args.beam, args.alpha)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seq2seq", description=__doc__)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (
        add_prepare,
        add_train,
        add_evaluate,
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
    m30k.set_defaults(func=prepare_multi30k_command)
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
    bible.set_defaults(func=prepare_bible_command)
    synth = corpus.add_parser("synth_ende", help="the shipped English-German corpus")
    numeric(synth, "--seed", int, "the generator's seed", default=1)
    synth.add_argument(
        "--out", type=Path, default=Path("data/synth_ende"), help="folder for the files"
    )
    synth.set_defaults(func=prepare_synth_command)


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
    tr.set_defaults(func=train_command)


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
    ev.add_argument("--checkpoint", default="best", help="best, last, or a path")
    ev.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    ev.add_argument(
        "--ablate",
        choices=["uniform", "shuffle", "none"],
        help="decode with the attention weights replaced; report the BLEU drop",
    )
    ev.add_argument(
        "--attention",
        help="where --ablate acts in a Transformer: cross (default), "
        "encoder_self or decoder_self",
    )
    ev.add_argument(
        "--layers", help="--ablate only these layers (from 1: 1,3); default all"
    )
    ev.add_argument(
        "--heads", help="--ablate only these heads (from 1: 2); default all"
    )
    add_decoding(ev)
    ev.set_defaults(func=evaluate_command)


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
    cmp.set_defaults(func=compare_command)


def add_translate(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("translate", help="translate text with a trained run")
    tr.add_argument("run_dir", type=Path, help="a run directory of seq2seq train")
    tr.add_argument("--input", "-i", type=Path, help="default: standard input")
    tr.add_argument("--output", "-o", type=Path, help="default: standard output")
    numeric(tr, "--batch-size", int, "sentences at a time", default=32)
    tr.add_argument("--checkpoint", default="best", help="best, last, or a path")
    numeric(tr, "--nbest", int, "print N hypotheses with scores", default=1)
    tr.add_argument(
        "--alignments", action="store_true", help="add Pharaoh word alignments"
    )
    tr.add_argument("--plot", type=Path, metavar="DIR", help="a heatmap per line")
    tr.add_argument("--json", action="store_true", help="one JSON object per line")
    tr.add_argument("--device", default="auto", choices=DEVICES, help=DEVICE_HELP)
    add_decoding(tr)
    tr.set_defaults(func=translate_command)


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
    exp.set_defaults(func=experiment_command)


def add_probe(sub: argparse._SubParsersAction) -> None:
    pr = sub.add_parser(
        "probe", help="does the vector the decoder reads still hold word i?"
    )
    pr.add_argument("run_dirs", type=Path, nargs="+", help="run directories")
    pr.add_argument("--split", default="test", choices=["val", "test"])
    numeric(pr, "--sentences", int, "train pairs the probe learns from", default=3000)
    numeric(pr, "--epochs", int, "probe training epochs", default=5)
    pr.add_argument("--checkpoint", default="best", help="best, last, or a path")
    pr.add_argument("--plot", type=Path, help="also one PNG with every run's curves")
    pr.set_defaults(func=probe_command)


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
    ex.set_defaults(func=explore_command)


# The commands. Each imports what it needs when it runs: `seq2seq --help`
# stays fast.


def prepare_multi30k_command(args: argparse.Namespace) -> None:
    from seq2seq.data.download import prepare_multi30k

    mirror = [("the mirror", args.mirror)] if args.mirror else []
    check_output(args.out, "--out", mirror, folder=True)
    with exclusive(args.out, "seq2seq prepare multi30k"):
        prepare_multi30k(args.src, args.tgt, args.out, mirror=args.mirror)


def prepare_bible_command(args: argparse.Namespace) -> None:
    from seq2seq.data.bible.prepare import default_out, prepare_bible

    out = args.out or default_out(args.src, args.tgt)
    mirror = [("the mirror", args.mirror)] if args.mirror else []
    check_output(out, "--out", mirror, folder=True)
    with exclusive(out, "seq2seq prepare bible"):
        prepare_bible(args.src, args.tgt, out, mirror=args.mirror, seed=args.seed)


def prepare_synth_command(args: argparse.Namespace) -> None:
    from seq2seq.data.synth import write_corpus

    check_output(args.out, "--out", folder=True)
    with exclusive(args.out, "seq2seq prepare synth_ende"):
        manifest = write_corpus(args.out, seed=args.seed)
    counts = ", ".join(f"{k} {v['lines']:,}" for k, v in manifest["splits"].items())
    print(f"wrote {args.out} (seed {args.seed}): {counts} pairs")


def train_command(args: argparse.Namespace) -> None:
    from seq2seq.config import load_config
    from seq2seq.training.train import resume, train

    if args.resume is not None:
        if args.overwrite:
            raise UserError("--resume continues a run; --overwrite would erase it")
        run_dir = resume(args.resume, args.overrides, args.device, args.progress)
    else:
        cfg = load_config(args.config, args.overrides)
        run_dir = train(cfg, args.device, args.overwrite, args.progress)
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"done: {run_dir} (curves: {tensorboard_command(run_dir.parent)})")


def evaluate_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.ablate import parse
    from seq2seq.lab.evaluate import evaluate, format_result

    split, files = evaluated_set(args)
    result = evaluate(
        args.run_dir,
        split,
        args.checkpoint,
        args.device,
        decoding(args),
        parse(args.ablate, args.attention, args.layers, args.heads),
        files=files,
    )
    print(format_result(result))


def evaluated_set(args: argparse.Namespace) -> tuple[str, tuple[str, ...]]:
    """evaluate's split, or the name and files of --src/--ref."""
    if args.src is None:
        if args.ref or args.name:
            what = "--ref" if args.ref else "--name"
            raise UserError(f"evaluate: {what} goes with --src (the source file)")
        return args.split or "test", ()
    if args.split:
        raise UserError("evaluate: --split or --src, not both")
    if not args.ref:
        raise UserError(f"evaluate: --src {args.src} needs --ref (its reference file)")
    name = args.name or file_set_name(args.src)
    if name in SPLITS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        why = "a split's name" if name in SPLITS else "not a file name of its own"
        raise UserError(f"evaluate: {name!r} is {why}; name the set with --name")
    return name, tuple(str(f) for f in (args.src, *args.ref))


def file_set_name(src: Path) -> str:
    """test_2017_flickr.de(.gz) -> test_2017_flickr: a file's name without
    its compression and language suffixes."""
    name = src.name.removesuffix(".gz")
    return name.rsplit(".", 1)[0] if "." in name else name


def translate_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.translate import main as translate_main

    translate_main(args, decoding(args))


def experiment_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.experiment import experiment

    experiment(args.file, args.jobs, args.only)


def compare_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.compare import OUTPUTS, SIGNIFICANCE, compare, markdown

    results = compare(args.run_dirs, args.split, args.out, args.device, decoding(args))
    print(markdown(results))
    if (args.out / SIGNIFICANCE).is_file():
        print("\n" + (args.out / SIGNIFICANCE).read_text(encoding="utf-8"))
    print(f"\nwrote {args.out}/: {', '.join(OUTPUTS)}")


PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_probe_plot(args: argparse.Namespace) -> None:
    """--plot may not be a folder, an unknown format, or any file the probe
    reads (the checkpoint named by path, every run's corpus files)."""
    from seq2seq.training.checkpoint import load_run_config

    if args.plot.is_dir():
        raise UserError(f"--plot {args.plot}: a folder; give a .png file name")
    if args.plot.suffix.lower() not in PLOT_SUFFIXES:
        raise UserError(f"--plot {args.plot}: name a {', '.join(PLOT_SUFFIXES)} file")
    inputs = []
    if args.checkpoint not in run.CHECKPOINTS:
        inputs.append(("the checkpoint read", Path(args.checkpoint)))
    for run_dir in args.run_dirs:
        run.check_run(run_dir)
        data = load_run_config(run_dir).data
        for split in (data.train, data.val, data.test):
            if split is not None:
                inputs += [
                    ("a corpus file read", Path(f)) for f in (split.src, split.tgt)
                ]
    check_output(args.plot, "--plot", inputs)


def explore_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.explore import Explorer
    from seq2seq.lab.explore_http import server
    from seq2seq.lab.explore_request import is_loopback

    explorer = Explorer(args.run_dirs, args.device)
    httpd = server(explorer, args.host, args.port, args.sample)
    host, port = str(httpd.server_address[0]), httpd.server_address[1]
    names = ", ".join(r.name for r in explorer.runs)
    shown = f"[{host}]" if ":" in host else host
    print(f"serving {names} at http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    if not is_loopback(args.host):
        print(
            f"warning: --host {args.host} is not a loopback address: anyone who "
            f"can reach it on port {port} can use these models on this machine; "
            "to share the page, keep the default and tunnel to it (ssh -L "
            f"{port}:localhost:{port} THIS-MACHINE; docs/explore.md)",
            file=sys.stderr,
            flush=True,
        )
    if explorer.test_note:
        print(f"note: {explorer.test_note}", flush=True)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()


def probe_command(args: argparse.Namespace) -> None:
    from seq2seq.lab.probe import format_probe, probe

    if args.sentences < 1 or args.epochs < 1:
        raise UserError("--sentences and --epochs must be at least 1")
    if args.plot is not None:
        check_probe_plot(args)
    if args.plot is not None and not args.plot.absolute().parent.is_dir():
        raise UserError(f"--plot {args.plot}: no folder {args.plot.parent}; create it")
    results = []
    for run_dir in args.run_dirs:
        results.append(
            probe(run_dir, args.split, args.sentences, args.epochs, args.checkpoint)
        )
        print(format_probe(results[-1]))
        print(f"wrote {run.probe_file(run_dir, args.split)} and its .png")
    if args.plot is not None:
        from seq2seq.files import save_figure
        from seq2seq.training.figures import probe_figure

        save_figure(probe_figure(results), args.plot)
        print(f"wrote {args.plot}")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        check_numbers(args)
        args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        status = exit_status(err, args.debug)
        if status is None:
            raise
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
