"""Wall-clock time to a test BLEU, and the best test BLEU within a time budget.

    python scripts/bench/time_to_bleu.py [--config configs/multi30k/additive.yaml]
        [--minutes 60] [--target 28.3] [--beam 5] [--every 200] [--set KEY=VALUE]

Trains the config with the normal training loop, and at every validation
(``--every`` steps) also decodes the test set with beam search and scores it
(sacreBLEU, detokenized, cased). The time spent on those test decodes is
taken off the clock, so the minutes are those of a plain training run
(validation included). Prints one JSON line per test evaluation and a summary:
the first minute at which test BLEU reached ``--target`` and the best BLEU
within ``--minutes``. 28.3 is the best attention result of the
bentrevett/pytorch-seq2seq tutorials on Multi30k de->en.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from seq2seq.config import load_config
from seq2seq.errors import run_script
from seq2seq.model.search import Decoding
from seq2seq.results import Validation
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.device import pick_device
from seq2seq.training.distributed import Ranks
from seq2seq.training.loop import Callback, Loop
from seq2seq.training.metrics import bleu
from seq2seq.training.train import build_loop


class TestBleu(Callback):
    """After every validation, a beam-search decode of the test set, scored,
    and taken off the clock (and the budget)."""

    def __init__(self, decoding: Decoding) -> None:
        self.decoding = decoding
        self.curve: list[dict[str, float]] = []

    def after_validation(self, loop: Loop, result: Validation | None) -> bool:
        with loop.off_the_clock():
            test, cfg = loop.ws.test, loop.cfg
            hyps = decode_corpus(
                loop.model,
                test.src_ids,
                cfg.eval.batch_sentences,
                cfg.eval.max_len_ratio,
                loop.device,
                self.decoding,
            )
            texts = [loop.ws.tokenizer.decode_tgt(h.tokens) for h in hyps]
            score = bleu(texts, test.split.tgt)[0]
        minutes = round(loop.minutes(), 2)
        point = {"step": loop.step, "minutes": minutes, "test_bleu": score}
        self.curve.append(point)
        print(json.dumps(point), flush=True)
        return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="configs/multi30k/additive.yaml")
    p.add_argument("--minutes", type=float, default=60.0)
    p.add_argument("--target", type=float, default=28.3)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--every", type=int, default=200, help="steps between evaluations")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    budget = [f"train.max_minutes={args.minutes}", f"train.val_every={args.every}"]
    cfg = load_config(args.config, [*args.overrides, *budget])
    if cfg.data.test is None:
        raise SystemExit(f"error: {args.config} has no data.test")
    timer = TestBleu(Decoding(args.beam))
    with tempfile.TemporaryDirectory() as run_dir:
        ranks = Ranks(device=device)
        build_loop(cfg, ranks, Path(run_dir), callbacks=[timer]).run()
    reached = [c["minutes"] for c in timer.curve if c["test_bleu"] >= args.target]
    best = max(timer.curve, key=lambda c: c["test_bleu"])
    summary = {
        "config": args.config,
        "target": args.target,
        "minutes_to_target": reached[0] if reached else None,
        "best_test_bleu": best["test_bleu"],
        "best_at_minutes": best["minutes"],
        "budget_minutes": args.minutes,
        "beam": args.beam,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    run_script(main)
