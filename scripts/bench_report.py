"""Read what scripts/bench_joeynmt.sh wrote and print both sides and the ratios.

    python scripts/bench_report.py BENCH_DIR STEPS [--decode-only]

JoeyNMT: target tokens/s = median of its "Tokens per Sec" log lines after step
20 (steps 21..STEPS, validation excluded), decode = its "Generation took" on the
test set, peak RSS = GNU time's maximum resident set size. Ours: the JSON of
bench_train.py and bench_decode.py, peak RSS from GNU time as well. With
``--decode-only`` only the decoding figures and their ratios (the training
figures on disk are those of an earlier run).
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


def decode_report(work: Path, steps: int) -> dict:
    """Both decoders on the test set, and the ratios (``--decode-only``)."""
    decode = json.loads((work / "ours_decode.json").read_text())
    report: dict = {"steps": steps, "decode_only": True}
    for beam, name, key in (
        (1, "greedy", "greedy"),
        (5, "beam 5", "beam 5, alpha 1.0"),
    ):
        joey = joey_decode(
            work / f"joey_test_beam{beam}.log", work / f"joey_hyp_beam{beam}.test"
        )
        ratio = decode[key]["sentences_per_s"] / joey["sentences_per_s"]
        report[name] = {
            "joeynmt": joey,
            "seq2seq": decode[key],
            "ratio": round(ratio, 2),
        }
    return report


def main() -> None:
    work, steps = Path(sys.argv[1]), int(sys.argv[2])
    if sys.argv[3:] == ["--decode-only"]:
        print(json.dumps(decode_report(work, steps), indent=2))
        return
    train_log = next((work / "models" / "bench").glob("train.log"))
    joey = {
        "target_tokens_per_s": joey_tokens_per_s(train_log),
        "peak_rss_gib": round(peak_rss_gib(work / "joey_train.err"), 3),
        "greedy": joey_decode(
            work / "joey_test_beam1.log", work / "joey_hyp_beam1.test"
        ),
        "beam 5": joey_decode(
            work / "joey_test_beam5.log", work / "joey_hyp_beam5.test"
        ),
    }
    train = json.loads((work / "ours_train.json").read_text())
    decode = json.loads((work / "ours_decode.json").read_text())
    ours = {
        "target_tokens_per_s": train["target_tokens_per_s"],
        "peak_rss_gib": round(peak_rss_gib(work / "ours_train.err"), 3),
        "greedy": decode["greedy"],
        "beam 5": decode["beam 5, alpha 1.0"],
        "mflop_per_target_token": train["mflop_per_target_token"],
        "achieved_gflop_s": train["achieved_gflop_s"],
        "matmul_peak_gflop_s": train["matmul_peak_gflop_s"],
        "fraction_of_peak": train["fraction_of_peak"],
    }
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
