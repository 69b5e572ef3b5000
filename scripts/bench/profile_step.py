"""Where a training step or a corpus decode spends its time, as JSON.

    python scripts/bench/profile_step.py train
        [--config configs/multi30k/bench_additive.yaml] [--steps 10]
        [--warmup 10] [--sentences K] [--threads 2] [--set KEY=VALUE]
    python scripts/bench/profile_step.py decode RUN_DIR [--beam 1] [--batch 64]
        [--sentences K]

``train`` runs ``Loop.train_step`` (set up by ``build_loop``) on the config's
batches: ``--warmup`` steps, then ``--steps`` timed without the profiler,
then the same batches again under torch.profiler (a step costs the same
whatever the weights).
``--sentences K`` cuts every batch to its first K sentences, which shows what
a step costs whatever its size. ``decode`` does the same with
``decoding.decode_corpus`` on the test split of a trained run (its first K
sentences with ``--sentences K``).

Reports the wall-clock time without the profiler; the profiled time (operator
self times, which the profiler inflates); the matmuls' share of it and the
rate they ran at (FLOPs from their shapes, 2 m k n); how many ATen operator
calls were made (nested ones included); and the operators that took longest.
First: ``seq2seq prepare multi30k``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from seq2seq.config import load_config
from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import run_script
from seq2seq.model.search import Decoding
from seq2seq.training.checkpoint import open_run
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.device import pick_device
from seq2seq.training.distributed import Ranks
from seq2seq.training.train import build_loop


def matmul_flops(name: str, shapes: list[list[int]]) -> int:
    """2 m k n of a matmul call from its input shapes; 0 for other operators."""
    if name == "aten::mm":
        (m, k), (_, n) = shapes[0], shapes[1]
        return 2 * m * k * n
    if name in ("aten::addmm", "aten::addmm_"):  # (bias or out, a, b)
        (m, k), (_, n) = shapes[1], shapes[2]
        return 2 * m * k * n
    if name == "aten::bmm":
        (b, m, k), (_, _, n) = shapes[0], shapes[1]
        return 2 * b * m * k * n
    return 0


def summary(prof: profile, per: int, top: int = 12) -> dict:
    """The profile per unit of work (a step, or a corpus with ``per`` = 1)."""
    total_us, matmul_us, flops, calls = 0.0, 0.0, 0, 0
    for event in prof.events():
        total_us += event.self_cpu_time_total
        calls += event.name.startswith("aten::")
        done = matmul_flops(event.name, event.input_shapes)
        if done:
            matmul_us, flops = matmul_us + event.self_cpu_time_total, flops + done
    ranked = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    return {
        "profiled_ms": round(total_us / 1e3 / per, 2),
        "matmul_ms": round(matmul_us / 1e3 / per, 2),
        "matmul_share": round(matmul_us / total_us, 3),
        "matmul_gflop": round(flops / 1e9 / per, 6),
        "matmul_gflop_s": round(flops / matmul_us / 1e3, 1),
        "aten_calls": round(calls / per),
        "top": {
            e.key: {"ms": round(e.self_cpu_time_total / 1e3 / per, 2), "calls": e.count}
            for e in ranked[:top]
        },
    }


def timed_then_profiled(work: Callable[[], None], per: int) -> dict:
    """Wall-clock ms of ``work`` per unit, then its profile."""
    tick = time.perf_counter()
    work()
    wall_ms = (time.perf_counter() - tick) * 1e3 / per
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        work()
    return {"wall_ms": round(wall_ms, 2)} | summary(prof, per)


def profile_train(args: argparse.Namespace, device: torch.device) -> dict:
    cfg = load_config(args.config, args.overrides)
    with tempfile.TemporaryDirectory() as scratch:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the JSON
            loop = build_loop(cfg, Ranks(device=device), Path(scratch), progress="off")
        batches = loop.first_batches(args.warmup + args.steps)
        batches = [index[: args.sentences or None] for index in batches]
        for index in batches[: args.warmup]:
            loop.train_step(index)
        timed = batches[args.warmup :]

        tokens: list[int] = []

        def work() -> None:
            for index in timed:
                tokens.append(loop.train_step(index)[2])

        report = timed_then_profiled(work, len(timed))
    per_step = sum(tokens) / len(tokens)  # target tokens (twice the same batches)
    sentences = sum(len(index) for index in timed) / len(timed)
    head = {"config": args.config, "steps": len(timed), "sentences": sentences}
    head |= {"target_tokens": per_step}
    flops = report["matmul_gflop"] * 1e3 / per_step
    return head | report | {"matmul_mflop_per_target_token": round(flops, 3)}


def profile_decode(args: argparse.Namespace, device: torch.device) -> dict:
    opened = open_run(args.run_dir, "last", device)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    sources = encode(load_split(cfg.data, "test"), tok).src_ids
    sources = sources[: args.sentences or None]  # (the profiler reads its events
    # at about a second per ten thousand operator calls: a sample is enough)
    decoding, ratio = Decoding(args.beam), cfg.eval.max_len_ratio
    decode_corpus(model, sources[: args.batch], args.batch, ratio, device, decoding)

    def work() -> None:
        decode_corpus(model, sources, args.batch, ratio, device, decoding)

    head = {"run": str(args.run_dir), "search": decoding.describe()}
    return head | {"sentences": len(sources)} | timed_then_profiled(work, 1)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=2)
    sub = p.add_subparsers(dest="what", required=True)
    train = sub.add_parser("train", help="training steps")
    train.add_argument("--config", default="configs/multi30k/bench_additive.yaml")
    train.add_argument("--steps", type=int, default=10)
    train.add_argument("--warmup", type=int, default=10)
    train.add_argument("--sentences", type=int, default=0, help="K per batch")
    train.add_argument("--set", dest="overrides", action="append", default=[])
    decode = sub.add_parser("decode", help="decoding the test split")
    decode.add_argument("run_dir", type=Path)
    decode.add_argument("--beam", type=int, default=1)
    decode.add_argument("--batch", type=int, default=64)
    decode.add_argument("--sentences", type=int, default=0, help="first K; 0 = all")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    for name in ("threads", "steps", "batch", "beam"):
        if getattr(args, name, 1) < 1:
            sys.exit(f"error: --{name} {getattr(args, name)}: must be >= 1")
    for name in ("warmup", "sentences"):
        if getattr(args, name, 0) < 0:
            sys.exit(f"error: --{name} {getattr(args, name)}: must be >= 0")
    torch.set_num_threads(args.threads)
    device = pick_device("cpu")  # the CPU, with the allocator setting of every command
    run = profile_train if args.what == "train" else profile_decode
    report = {"threads": torch.get_num_threads()} | run(args, device)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    run_script(main)
