"""Training throughput on the benchmark spec, as JSON.

    python scripts/bench/train.py [--config configs/multi30k/bench_additive.yaml]
        [--steps 300] [--warmup 20] [--threads 2] [--device cpu] [--set KEY=VALUE]

Runs the real training step (``Loop.train_step``, set up by ``build_loop``:
forward, loss, backward, clipping, Adam) on the config's batches, times
``--steps`` steps after ``--warmup`` (no validation inside), and prints:
target tokens/s and sentences/s, peak RSS, the matmul FLOPs of one step per
target token (counted by ``torch.utils.flop_counter`` on real batches,
forward + backward), the achieved GFLOP/s, this machine's fp32 matmul peak (a
2048x2048 matmul, best of several, measured in the same run) and the
fraction of it reached (``--peak`` prints the peak alone).
Target tokens = target subwords + one end-of-sentence per sentence, the count
JoeyNMT's "Tokens per Sec" uses. First: ``seq2seq prepare multi30k``.

    python scripts/bench/train.py --pair train.chunked_loss [--steps 100]
    python scripts/bench/train.py --pair train.recurrence=steps,compiled

compares two values of a setting instead (false and true where none are
given; "off" is the first, "on" the second): two loops, one each, train
the same batches, alternating step by step (and which of them goes first), so
that the machine's drift, tens of percent within minutes here, hits both
alike. It prints each one's target tokens/s, the speedup (off time / on time),
the median of the per-step ratios, and each one's matmul FLOPs per target
token (counted on the first batch, a warm-up step): a speed-up with fewer
FLOPs does less work, one with the same does it faster.

    torchrun --nproc_per_node 2 scripts/bench/train.py --threads 1

times the same under DistributedDataParallel, each process training its share
of every batch as ``seq2seq train`` does under torchrun: tokens/s and FLOPs
are of the whole batches, peak RSS is the sum over the processes, and the
matmul peak is measured with all their threads (processes x --threads).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from seq2seq.config import Config, load_config
from seq2seq.errors import UserError, run_script
from seq2seq.training.device import pick_device
from seq2seq.training.distributed import Ranks, end_process, process_group
from seq2seq.training.loop import Loop
from seq2seq.training.train import build_loop


def matmul_peak(
    device: torch.device,
    dtype: torch.dtype = torch.float32,
    n: int = 2048,
    repeats: int = 10,
) -> float:
    """GFLOP/s of an n x n matmul in ``dtype``, best of ``repeats``."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats):
        sync(device)
        tick = time.perf_counter()
        a @ b
        sync(device)
        best = min(best, time.perf_counter() - tick)
    return 2 * n**3 / best / 1e9


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def peak_rss_gib() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 2**20


def _addmm_flops(bias, a, b, out_shape=None, **kwargs) -> int:  # noqa: ANN001
    return 2 * a[0] * a[1] * b[1]  # shapes: a (m, k), b (k, n)


def flops_per_token(loop: Loop, batches: list[list[int]]) -> float:
    """Matmul FLOPs of forward + backward per target token, over ``batches``
    (under torchrun: every rank's share of them, summed)."""
    flops, tokens = 0, 0
    # The chunked loss accumulates W_s's gradient in place (addmm_), which the
    # counter does not know: count it as the addmm it is, 2 m k n.
    in_place = {torch.ops.aten.addmm_: _addmm_flops}
    for index in batches:
        counter = FlopCounterMode(display=False, custom_mapping=in_place)
        with counter:
            _, _, n = loop.train_step(index)
        flops, tokens = flops + counter.get_total_flops(), tokens + n
    return sum(loop.ranks.gather(flops)) / tokens


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="configs/multi30k/bench_additive.yaml")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument(
        "--out", type=Path, help="keep the trained model here (for bench/decode.py)"
    )
    p.add_argument(
        "--pair",
        metavar="KEY[=A,B]",
        help="time KEY=A against KEY=B (default: false against true)",
    )
    p.add_argument(
        "--peak", action="store_true", help="print the fp32 matmul peak (GFLOP/s)"
    )
    args = p.parse_args()
    if args.warmup < 1:  # FLOPs are counted on warm-up batches (measure, pair)
        sys.exit("error: --warmup must be >= 1")
    return args


def make_loop(cfg: Config, ranks: Ranks, run_dir: Path) -> Loop:
    """The training loop of ``cfg`` on this rank, set up as ``seq2seq train``
    sets it up (train.build_loop), writing into ``run_dir``: with ``--out`` a
    run folder that decode.py and ``seq2seq evaluate`` can load. Its one
    line about the model goes to stderr: stdout is the JSON report."""
    with contextlib.redirect_stdout(sys.stderr):
        return build_loop(cfg, ranks, run_dir, progress="off")


def measure(loop: Loop, warmup: int, steps: int) -> dict[str, float]:
    """Train ``warmup`` then ``steps`` batches; time the latter. FLOPs are
    counted during warm-up (the counter slows the steps it sees), so the model
    sees exactly warmup + steps batches."""
    batches = loop.first_batches(warmup + steps)
    counted = min(5, warmup)
    per_token = flops_per_token(loop, batches[:counted])
    for index in batches[counted:warmup]:
        loop.train_step(index)
    sync(loop.device)
    loop.ranks.wait()
    tokens, sentences, times = 0, 0, []
    tick = time.perf_counter()
    for index in batches[warmup : warmup + steps]:
        start = time.perf_counter()
        _, _, n = loop.train_step(index)
        sync(loop.device)
        times.append(time.perf_counter() - start)
        tokens, sentences = tokens + n, sentences + len(index)
    seconds = time.perf_counter() - tick
    return {
        "target_tokens_per_s": round(tokens / seconds, 1),
        "sentences_per_s": round(sentences / seconds, 2),
        "s_per_step_median": round(statistics.median(times), 4),
        "mflop_per_target_token": round(per_token / 1e6, 2),
        "achieved_gflop_s": round(per_token * tokens / seconds / 1e9, 1),
    }


def measure_pair(loops: dict[bool, Loop], warmup: int, steps: int) -> dict:
    """Train both loops on the same batches, alternating; time the last
    ``steps``. The first batch (warm-up) counts each side's matmul FLOPs,
    which says whether a speed-up does less work or does it faster."""
    seconds, ratios, tokens = {False: 0.0, True: 0.0}, [], 0
    mflop = {}
    for k, index in enumerate(loops[False].first_batches(warmup + steps)):
        took = {}
        for on in (k % 2 == 1, k % 2 == 0):  # who goes first alternates
            if k == 0:
                mflop[on] = round(flops_per_token(loops[on], [index]) / 1e6, 2)
                continue
            start = time.perf_counter()
            _, _, n = loops[on].train_step(index)
            sync(loops[on].device)
            took[on] = time.perf_counter() - start
        if k >= warmup:
            tokens += n
            ratios.append(took[False] / took[True])
            seconds = {on: seconds[on] + took[on] for on in seconds}
    return {
        "off_target_tokens_per_s": round(tokens / seconds[False], 1),
        "on_target_tokens_per_s": round(tokens / seconds[True], 1),
        "speedup": round(seconds[False] / seconds[True], 3),
        "median_step_ratio": round(statistics.median(ratios), 3),
        "off_mflop_per_target_token": mflop[False],
        "on_mflop_per_target_token": mflop[True],
    }


def pair_values(spec: str) -> tuple[str, str, str]:
    """``KEY`` -> (KEY, "false", "true"); ``KEY=A,B`` -> (KEY, A, B)."""
    key, _, values = spec.partition("=")
    if not values:
        return key, "false", "true"
    parts = values.split(",")
    if len(parts) != 2 or not all(parts):
        sys.exit(f"error: --pair {spec}: expected KEY or KEY=A,B")
    return key, parts[0], parts[1]


def pair(args: argparse.Namespace, device: torch.device) -> dict:
    """``--pair KEY[=A,B]``: KEY=A against KEY=B, steps interleaved."""
    key, off, on_value = pair_values(args.pair)
    try:
        cfgs = {
            on: load_config(args.config, [*args.overrides, f"{key}={value}"])
            for on, value in ((False, off), (True, on_value))
        }
    except UserError as e:
        sys.exit(f"error: --pair {args.pair}: {e}")
    if cfgs[False] == cfgs[True]:
        sys.exit(f"error: --pair {args.pair}: the two values are the same setting")
    with tempfile.TemporaryDirectory() as scratch:
        loops = {
            on: make_loop(cfgs[on], Ranks(device=device), Path(scratch) / str(on))
            for on in cfgs
        }
        report = {"config": args.config, "pair": key, "off": off, "on": on_value}
        report["steps"] = args.steps
        return report | measure_pair(loops, args.warmup, args.steps)


def machine(ranks: Ranks, precision: str, achieved: float) -> dict:
    """Peak RSS (of every process, summed), the matmul peaks on all the threads
    the run uses, and the fraction of them reached; rank 0 reports."""
    rss = sum(ranks.gather(peak_rss_gib()))
    if not ranks.main:
        return {}
    torch.set_num_threads(torch.get_num_threads() * ranks.world)
    peak = matmul_peak(ranks.device)
    out = {
        "peak_rss_gib": round(rss, 3),
        "matmul_peak_gflop_s": round(peak, 1),
        "fraction_of_peak": round(achieved / peak, 3),
    }
    if precision == "bf16":  # the peak bf16 matmuls could reach
        bf16 = matmul_peak(ranks.device, torch.bfloat16)
        out["matmul_peak_bf16_gflop_s"] = round(bf16, 1)
        out["fraction_of_bf16_peak"] = round(achieved / bf16, 3)
    if ranks.device.type == "cuda":
        memory = torch.cuda.max_memory_allocated() / 2**30
        out["cuda_peak_memory_gib"] = round(memory, 3)
    return out


def bench(args: argparse.Namespace, ranks: Ranks) -> dict:
    """Train and time the config on this rank; the report (rank 0's counts)."""
    cfg = load_config(args.config, args.overrides)
    with tempfile.TemporaryDirectory() as scratch:
        loop = make_loop(cfg, ranks, args.out or Path(scratch))
        speed = measure(loop, args.warmup, args.steps)
        loop.save_last()
        if loop.board is not None:  # rank 0's
            loop.board.close()
    report = {
        "config": args.config,
        "overrides": args.overrides,
        "device": str(ranks.device),
        "precision": cfg.train.precision,
        "threads": torch.get_num_threads(),
        "processes": ranks.world,
        "steps": args.steps,
        "params": loop.model.num_parameters(),
    }
    return (
        report | speed | machine(ranks, cfg.train.precision, speed["achieved_gflop_s"])
    )


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    if args.peak:  # joeynmt.sh measures it before JoeyNMT trains, too
        print(round(matmul_peak(device), 1))
        return
    if args.pair:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            sys.exit(
                "error: --pair times two loops in one process; run it without torchrun"
            )
        print(json.dumps(pair(args, device), indent=2))
        return
    with process_group(device) as ranks:
        report = bench(args, ranks)
    if ranks.main:
        print(json.dumps(report, indent=2))
    end_process(0)  # under torchrun, without gloo's racy teardown


if __name__ == "__main__":
    run_script(main)
