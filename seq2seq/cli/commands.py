"""What each ``seq2seq`` command does. Each imports what it needs when it
runs: ``seq2seq --help`` stays fast."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from seq2seq import run
from seq2seq.errors import UserError
from seq2seq.files import check_output, exclusive
from seq2seq.training.progress import tensorboard_command

if TYPE_CHECKING:
    from seq2seq.model.search import Decoding


def decoding(args: argparse.Namespace) -> Decoding:
    from seq2seq.model.search import Decoding

    return Decoding(args.beam, args.alpha)


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
    from seq2seq.lab.evaluate import evaluate, format_result, scored_set

    split, files = scored_set(args.split, args.src, args.ref or [], args.name)
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


def score_command(args: argparse.Namespace) -> None:
    from seq2seq.files import atomic_write
    from seq2seq.lab.score import format_report, score

    edges = bucket_edges(args.buckets)
    if args.json is not None:
        read = [*args.hyp, *args.ref, *([args.src] if args.src else [])]
        check_output(args.json, "--json", [("a file scored", f) for f in read])
    report = score(args.hyp, args.ref, args.src, edges, args.hyp_name)
    print(format_report(report))
    if args.json is not None:
        atomic_write(args.json, report.to_json())
        print(f"\nwrote {args.json}")


def bucket_edges(text: str) -> tuple[int, ...]:
    """--buckets 10,20,30: increasing whole numbers of words."""
    try:
        edges = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UserError(
            f"--buckets {text}: not whole numbers; give upper edges like 10,20,30,40"
        ) from None
    if edges[0] < 1 or any(a >= b for a, b in zip(edges, edges[1:], strict=False)):
        raise UserError(
            f"--buckets {text}: give increasing edges from 1 word, like 10,20,30,40"
        )
    return edges


def average_command(args: argparse.Namespace) -> None:
    from seq2seq.training.averaging import write_average

    run.check_run(args.run_dir)
    path, steps = write_average(args.run_dir, args.k)
    print(
        f"wrote {path}: the mean of the weights at steps "
        f"{', '.join(map(str, steps))} (evaluate --checkpoint averaged)"
    )


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
