"""Read what scripts/bench/joeynmt.sh wrote and print both sides and the ratios.

    python scripts/bench/report.py BENCH_DIR STEPS [--decode-only]

JoeyNMT: target tokens/s = median of its "Tokens per Sec" log lines after step
20 (steps 21..STEPS, validation excluded), decode = its "Generation took" on the
test set, peak RSS = GNU time's maximum resident set size. Ours: the JSON of
bench/train.py and bench/decode.py, peak RSS from GNU time as well. With
``--decode-only`` only the decoding figures and their ratios (the training
figures on disk are those of an earlier run). Decoding may have been repeated
(joey_test_beam{1,5}.rN.log, ours_decode.rN.json): each toolkit's fastest
repetition is reported, with the sentences/s of every one.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

TEST_SENTENCES = 1000  # test_2016_flickr


def peak_rss_gib(time_output: Path) -> float:
    found = re.search(
        r"Maximum resident set size \(kbytes\): (\d+)", time_output.read_text()
    )
    if not found:
        sys.exit(f"error: {time_output}: no GNU time report")
    return int(found.group(1)) / 2**20


def joey_tokens_per_s(log: Path) -> float:
    rates = [
        float(rate)
        for step, rate in re.findall(
            r"Step:\s+(\d+),.*Tokens per Sec:\s+(\d+)", log.read_text()
        )
        if int(step) > 20
    ]
    if not rates:
        sys.exit(f"error: {log}: no 'Tokens per Sec' lines after step 20")
    return statistics.median(rates)


def joey_decode(log: Path, hyp: Path) -> dict[str, float]:
    text = log.read_text()
    test_part = text[text.index("on test set") :]
    seconds = float(re.search(r"Generation took ([\d.]+)\[sec\]", test_part).group(1))
    words = [len(line.split()) for line in hyp.read_text().splitlines()]
    return {
        "sentences_per_s": round(TEST_SENTENCES / seconds, 1),
        "mean_hyp_words": round(statistics.mean(words), 2),
        "bleu": float(re.search(r"bleu:\s+([\d.]+)", test_part).group(1)),
    }


SEARCHES = (("greedy", 1, "greedy"), ("beam 5", 5, "beam 5, alpha 1.0"))


def decodes(work: Path) -> dict[str, dict]:
    """Per search, each toolkit's fastest repetition (with the sentences/s of
    every repetition) and the ratio of the two."""
    runs = sorted(work.glob("ours_decode.r*.json"))
    ours = [json.loads(p.read_text()) for p in runs]
    out = {}
    for name, beam, key in SEARCHES:
        hyp = work / f"joey_hyp_beam{beam}.test"
        logs = sorted(work.glob(f"joey_test_beam{beam}.r*.log"))
        if not ours or not logs:
            sys.exit(f"error: {work}: no decoding logs; run bench/joeynmt.sh")
        joey = [joey_decode(log, hyp) for log in logs]
        both = {"joeynmt": joey, "seq2seq": [run[key] for run in ours]}
        out[name] = {}
        for toolkit, runs in both.items():
            best = max(runs, key=lambda r: r["sentences_per_s"])
            out[name][toolkit] = best | {"each": [r["sentences_per_s"] for r in runs]}
        ratio = (
            out[name]["seq2seq"]["sentences_per_s"]
            / (out[name]["joeynmt"]["sentences_per_s"])
        )
        out[name]["ratio"] = round(ratio, 2)
    return out


def main() -> None:
    work, steps = Path(sys.argv[1]), int(sys.argv[2])
    if sys.argv[3:] == ["--decode-only"]:
        report = {"steps": steps, "decode_only": True} | decodes(work)
        print(json.dumps(report, indent=2))
        return
    train_log = next((work / "models" / "bench").glob("train.log"))
    joey = {
        "target_tokens_per_s": joey_tokens_per_s(train_log),
        "peak_rss_gib": round(peak_rss_gib(work / "joey_train.err"), 3),
    }
    train = json.loads((work / "ours_train.json").read_text())
    decode = decodes(work)
    ours = {
        "target_tokens_per_s": train["target_tokens_per_s"],
        "peak_rss_gib": round(peak_rss_gib(work / "ours_train.err"), 3),
        "mflop_per_target_token": train["mflop_per_target_token"],
        "achieved_gflop_s": train["achieved_gflop_s"],
        "matmul_peak_gflop_s": train["matmul_peak_gflop_s"],
        "fraction_of_peak": train["fraction_of_peak"],
    }
    for name, _, _ in SEARCHES:
        joey[name], ours[name] = decode[name]["joeynmt"], decode[name]["seq2seq"]
    flops = train["mflop_per_target_token"] * 1e6
    joey["achieved_gflop_s"] = round(flops * joey["target_tokens_per_s"] / 1e9, 1)
    before = work / "peak_before.txt"  # the peak measured before JoeyNMT ran
    if before.exists():
        joey["matmul_peak_gflop_s"] = float(before.read_text())
        fraction = joey["achieved_gflop_s"] / joey["matmul_peak_gflop_s"]
        joey["fraction_of_peak"] = round(fraction, 3)
    ratios = {
        "training target tokens/s": ours["target_tokens_per_s"]
        / joey["target_tokens_per_s"],
        "greedy sentences/s": ours["greedy"]["sentences_per_s"]
        / joey["greedy"]["sentences_per_s"],
        "beam-5 sentences/s": ours["beam 5"]["sentences_per_s"]
        / joey["beam 5"]["sentences_per_s"],
        "peak RSS (ours / JoeyNMT)": ours["peak_rss_gib"] / joey["peak_rss_gib"],
    }
    report = {"steps": steps, "joeynmt": joey, "seq2seq": ours}
    report["ratios"] = {k: round(v, 2) for k, v in ratios.items()}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
