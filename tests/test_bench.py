"""The benchmark scripts run on a tiny model and report what they measure
(speed targets themselves live in the scripts' output, never in tests)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, tiny_overrides, torchrun

from seq2seq.data.synth import write_corpus


def script(name: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def tiny_sets(tmp_path: Path, name: str) -> list[str]:
    """A tiny corpus in tmp_path and the ``--set`` arguments of a tiny run on it."""
    write_corpus(
        tmp_path / "corpus", seed=5, sizes={"train": 400, "val": 20, "test": 30}
    )
    items = tiny_overrides(tmp_path / "corpus", tmp_path / "runs", name)
    return [arg for item in items for arg in ("--set", item)]


def test_train_and_decode_benchmarks(tmp_path: Path) -> None:
    sets = tiny_sets(tmp_path, "bench")
    config = str(REPO / "configs/synth_ende/additive.yaml")
    run = tmp_path / "bench_run"
    train = script(
        "train.py", "--config", config, "--steps", "6", "--warmup", "2",
        "--threads", "1", "--out", str(run), *sets,
    )  # fmt: skip
    assert train["steps"] == 6 and train["target_tokens_per_s"] > 0
    # Output layer alone: 2 FLOPs per multiply-add, forward + 2 backward matmuls.
    hidden, vocab = 16, 300
    assert train["mflop_per_target_token"] * 1e6 > 3 * 2 * hidden * vocab
    assert 0 < train["fraction_of_peak"] < 1
    assert train["peak_rss_gib"] > 0.1
    decode = script("decode.py", str(run), "--threads", "1", "--batch", "8")
    assert decode["sentences"] == 30
    for search in ("greedy", "beam 5, alpha 1.0"):
        assert decode[search]["sentences_per_s"] > 0
        assert 0 <= decode[search]["bleu"] <= 100
    plot = tmp_path / "cost.png"
    proc = subprocess.run(
        [
            sys.executable, str(REPO / "scripts/bench/decode_cost.py"), str(run),
            "--split", "test", "--checkpoint", "last", "--threads", "1",
            "--out", str(plot),
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = [
        line for line in proc.stdout.splitlines() if line.startswith("| bench_run")
    ]
    assert len(table) == 2 and plot.read_bytes().startswith(b"\x89PNG")  # 2 tables
    prof = script(
        "profile_step.py", "--threads", "1", "decode", str(run), "--beam", "5",
        "--sentences", "1",
    )  # fmt: skip
    assert prof["sentences"] == 1 and prof["search"] == "beam 5, alpha 1.0"
    assert prof["wall_ms"] > 0 and 0 < prof["matmul_share"] < 1


def test_paired_benchmark_times_a_setting_both_ways(tmp_path: Path) -> None:
    sets = tiny_sets(tmp_path, "pair")
    config = str(REPO / "configs/synth_ende/additive.yaml")
    args = ["--config", config, "--steps", "4", "--warmup", "2", "--threads", "1"]
    report = script("train.py", *args, "--pair", "train.chunked_loss", *sets)
    assert report["pair"] == "train.chunked_loss" and report["steps"] == 4
    assert report["off_target_tokens_per_s"] > 0 < report["on_target_tokens_per_s"]
    assert report["speedup"] > 0 and report["median_step_ratio"] > 0
    # The chunked loss does the same matmuls, one of them in place: same count.
    mflop = report["off_mflop_per_target_token"]
    assert mflop == report["on_mflop_per_target_token"] > 3 * 2 * 16 * 300 / 1e6
    # two values of any setting: the step loop against the compiled loops
    two = script("train.py", *args, "--pair", "train.recurrence=steps,auto", *sets)
    assert (two["pair"], two["off"], two["on"]) == ("train.recurrence", "steps", "auto")
    assert two["speedup"] > 0
    for key in ("train.lr", "train.nonsense", "train.recurrence=steps"):
        proc = subprocess.run(
            [sys.executable, str(REPO / "scripts/bench/train.py"), *args,
             "--pair", key, *sets],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode != 0
        assert proc.stderr.strip().splitlines()[-1].startswith(f"error: --pair {key}")


def test_time_to_bleu_reports_a_curve(tmp_path: Path) -> None:
    sets = tiny_sets(tmp_path, "ttb")
    proc = subprocess.run(
        [
            sys.executable, str(REPO / "scripts/bench/time_to_bleu.py"),
            "--config", str(REPO / "configs/synth_ende/additive.yaml"),
            "--every", "8", "--beam", "2", "--threads", "1", "--target", "0",
            *sets,
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    points = [json.loads(line) for line in lines if line.startswith('{"step"')]
    assert [p["step"] for p in points] == [8, 16]  # tiny_overrides: 16 steps
    summary = json.loads("\n".join(lines[lines.index("{") :]))
    assert summary["minutes_to_target"] == points[0]["minutes"]  # target 0: at once
    assert summary["best_test_bleu"] == max(p["test_bleu"] for p in points)


def joey_test_log(seconds: float, bleu: float) -> str:
    """The lines of a JoeyNMT 2.3.0 test log that bench/report.py reads
    (the dev set first, then the test set)."""
    return (
        "INFO - joeynmt.prediction - Generation took 9.0[sec].\n"
        "INFO - joeynmt.prediction - Evaluation result (greedy): bleu:  1.00\n"
        "INFO - joeynmt.prediction - Decoding on test set... (device: cpu)\n"
        f"INFO - joeynmt.prediction - Generation took {seconds}[sec].\n"
        f"INFO - joeynmt.prediction - Evaluation result (greedy): bleu:  {bleu}\n"
    )


def test_decode_only_report_keeps_each_toolkits_fastest_repetition(
    tmp_path: Path,
) -> None:
    for beam, seconds, bleu in ((1, 5.0, 33.85), (5, 20.0, 35.96)):
        for rep, slower in ((1, 2.0), (2, 1.0)):  # the second repetition is faster
            log = tmp_path / f"joey_test_beam{beam}.r{rep}.log"
            log.write_text(joey_test_log(seconds * slower, bleu))
        (tmp_path / f"joey_hyp_beam{beam}.test").write_text("a b c\n" * 1000)
    for rep, rate in ((1, 600.0), (2, 500.0)):  # here the first one
        ours = {"sentences_per_s": rate, "bleu": 33.0}
        runs = {"greedy": ours, "beam 5, alpha 1.0": {**ours, "bleu": 35.0}}
        (tmp_path / f"ours_decode.r{rep}.json").write_text(json.dumps(runs))
    report = script("report.py", str(tmp_path), "2280", "--decode-only")
    greedy = report["greedy"]
    assert greedy["joeynmt"]["sentences_per_s"] == 200.0  # 1000 sentences / 5 s
    assert greedy["joeynmt"]["each"] == [100.0, 200.0]
    assert greedy["joeynmt"]["bleu"] == 33.85  # the test set's, not the dev set's
    assert greedy["seq2seq"]["each"] == [600.0, 500.0]
    assert greedy["ratio"] == 3.0
    assert report["beam 5"]["ratio"] == 12.0
    assert report["beam 5"]["joeynmt"]["mean_hyp_words"] == 3


def test_joeynmt_bench_refuses_bad_arguments(tmp_path: Path) -> None:
    def bench(
        *args: str, repeats: str = "1", seed: str = "42", ours_set: str = ""
    ) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "BENCH_DIR": str(tmp_path / "bench")}
        return subprocess.run(
            ["bash", str(REPO / "scripts/bench/joeynmt.sh"), *args],
            capture_output=True,
            text=True,
            env=env | {"REPEATS": repeats, "SEED": seed, "OURS_SET": ours_set},
            timeout=60,
        )

    odd = bench("30")
    assert odd.returncode == 2 and "multiple of 20" in odd.stderr
    none = bench("320", repeats="0")
    assert none.returncode == 2 and "REPEATS=0" in none.stderr
    seedless = bench("320", seed="-1")
    assert seedless.returncode == 2 and "SEED=-1" in seedless.stderr
    loose = bench("320", ours_set="train.seed=1 fused")
    assert loose.returncode == 2 and "OURS_SET item 'fused'" in loose.stderr
    unknown = bench("320", "--fast")
    assert unknown.returncode == 2 and "unknown option '--fast'" in unknown.stderr
    nothing = bench("320", "--decode-only")
    assert nothing.returncode == 2 and "needs a full run" in nothing.stderr
    spec = bench("320", "transformer", "--decode-only")  # its own scratch folder
    assert spec.returncode == 2 and "transformer/models/bench" in spec.stderr
    typo = bench("320", "transfomer")
    assert typo.returncode == 2 and "unknown option 'transfomer'" in typo.stderr
    assert not (tmp_path / "bench" / "venv").exists()  # stopped before installing


def bench_report(ours: tuple[float, float], joey: tuple[float, float]) -> dict:
    """The BLEU part of what bench/report.py prints for one full run."""

    def side(bleu: tuple[float, float]) -> dict:
        return {"greedy": {"bleu": bleu[0]}, "beam 5": {"bleu": bleu[1]}}

    ratios = {"training target tokens/s": 2.6}
    return {"steps": 2280, "joeynmt": side(joey), "seq2seq": side(ours)} | {
        "ratios": ratios
    }


def test_seed_summary_gives_mean_spread_and_differences(tmp_path: Path) -> None:
    runs = {42: ((33.5, 35.0), (33.6, 35.0)), 1: ((34.5, 36.0), (33.6, 34.0))}
    for seed, (ours, joey) in runs.items():
        (tmp_path / f"seed{seed}").mkdir()
        report = json.dumps(bench_report(ours, joey))
        (tmp_path / f"seed{seed}" / "report.json").write_text(report)
    out = script("seeds.py", str(tmp_path / "seed42"), str(tmp_path / "seed1"))
    assert list(out["seeds"]) == ["1", "42"]  # by seed
    assert out["seeds"]["42"]["seq2seq"] == {"greedy": 33.5, "beam 5": 35.0}
    assert out["seq2seq"]["greedy"] == {"mean": 34.0, "sd": 0.71}
    assert out["joeynmt"]["beam 5"] == {"mean": 34.5, "sd": 0.71}
    diff = out["seq2seq minus joeynmt"]
    assert diff["greedy"] == {"of the means": 0.4, "each seed": [0.9, -0.1]}
    assert diff["beam 5"]["each seed"] == [2.0, 0.0]


def test_seed_summary_and_runner_refuse_bad_input(tmp_path: Path) -> None:
    def run(*command: str) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "BENCH_DIR": str(tmp_path / "seeds")}
        return subprocess.run(command, capture_output=True, text=True, env=env)

    summary = [sys.executable, str(REPO / "scripts/bench/seeds.py")]
    for folder, message in (("run1", "seed<N>"), ("seed3", "seed3/report.json")):
        (tmp_path / folder).mkdir()
        proc = run(*summary, str(tmp_path / folder))
        assert proc.returncode != 0 and message in proc.stderr
    runner = ["bash", str(REPO / "scripts/bench/seeds.sh")]
    for args, message in (([], "usage"), (["2280", "x"], "seed 'x'")):
        proc = run(*runner, *args)
        assert proc.returncode == 2 and message in proc.stderr
    assert not (tmp_path / "seeds").exists()  # stopped before running anything


def test_training_benchmark_under_torchrun(tmp_path: Path) -> None:
    sets = tiny_sets(tmp_path, "ddp")
    config = str(REPO / "configs/synth_ende/additive.yaml")
    bench = str(REPO / "scripts/bench/train.py")
    args = [bench, "--config", config, "--steps", "4", "--warmup", "2"]
    stdout = torchrun([*args, "--threads", "1", *sets])
    report = json.loads(stdout)  # one report: only rank 0 prints
    assert report["processes"] == 2 and report["threads"] == 1
    assert report["target_tokens_per_s"] > 0 and report["matmul_peak_gflop_s"] > 0
    assert 0 <= report["fraction_of_peak"] < 1  # rounds to 0 on so tiny a model
    hidden, vocab = 16, 300  # as in test_train_and_decode_benchmarks
    assert report["mflop_per_target_token"] * 1e6 > 3 * 2 * hidden * vocab
    assert report["peak_rss_gib"] > 0.2  # two processes, summed
    with pytest.raises(AssertionError, match="without torchrun"):
        torchrun([bench, "--pair", "train.chunked_loss"])


def test_profile_of_training_steps(tmp_path: Path) -> None:
    sets = tiny_sets(tmp_path, "prof")
    config = str(REPO / "configs/synth_ende/additive.yaml")
    args = ["--config", config, "--steps", "1", *sets]
    prof = script("profile_step.py", "--threads", "1", "train", *args, "--warmup", "0")
    assert prof["steps"] == 1 and prof["wall_ms"] > 0 and prof["aten_calls"] > 100
    assert 0 < prof["matmul_ms"] < prof["profiled_ms"]
    assert 0 < prof["matmul_share"] < 1 and prof["matmul_gflop_s"] > 0
    assert len(prof["top"]) == 12
    # The FLOPs from the profiler's shapes are FlopCounterMode's, on the same
    # first batch (bench_train counts during its warm-up), up to its rounding.
    bench = script("train.py", "--threads", "1", *args, "--warmup", "1")
    counted = bench["mflop_per_target_token"]  # rounded to 0.01
    assert abs(prof["matmul_mflop_per_target_token"] - counted) <= 0.0055
    cut = script("profile_step.py", "train", *args, "--warmup", "0", "--sentences", "1")
    assert cut["sentences"] == 1 and cut["target_tokens"] < prof["target_tokens"]
    command = [sys.executable, str(REPO / "scripts/bench/profile_step.py")]
    refused = subprocess.run(
        [*command, "train", "--steps", "0"], capture_output=True, text=True
    )
    assert refused.returncode != 0 and "--steps 0: must be >= 1" in refused.stderr


def test_scripts_refuse_a_missing_run_or_config_in_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    for args in (
        ["train.py", "--config", missing + ".yaml"],
        ["decode.py", missing],
        ["profile_step.py", "decode", missing],
    ):
        proc = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "bench" / args[0]), *args[1:]],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
        assert missing in proc.stderr and not proc.stdout


def test_attention_cost_table_and_plot(tmp_path: Path) -> None:
    """Two short lengths, each encoder in a process of its own: a row per
    length, every figure positive, the plot written."""
    png = tmp_path / "cost.png"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/bench/attention_cost.py"),
            *("--lengths", "16", "32", "--batch", "2", "--repeats", "1"),
            *("--threads", "1", "--plot", str(png)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [
        r
        for r in done.stdout.splitlines()
        if r.startswith("| 16 |") or r.startswith("| 32 |")
    ]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert len(cells) == 6 and all(float(c.replace(",", "")) >= 0 for c in cells)
    assert png.stat().st_size > 0
    (fitted,) = [r for r in done.stdout.splitlines() if r.startswith("| slope from 16")]
    assert len(fitted.strip("|").split("|")) == 7


def test_attention_cost_slopes_are_least_squares_on_log_log() -> None:
    spec = importlib.util.spec_from_file_location(
        "attention_cost", REPO / "scripts/bench/attention_cost.py"
    )
    assert spec is not None and spec.loader is not None
    cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost)
    square = {n: 3.0 * n**2 for n in (64, 256, 512, 1024)}
    assert cost.slope(square, 256) == pytest.approx(2.0)
    bent = {64: 50.0, 256: 1.0, 512: 2.0, 1024: 4.0}  # fixed costs below 256
    assert cost.slope(bent, 256) == pytest.approx(1.0)
    assert math.isnan(cost.slope({256: 0.0, 512: 1.0}, 256))
