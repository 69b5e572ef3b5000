"""Decoding throughput of a trained run, as JSON.

    python scripts/bench/decode.py RUN_DIR [--split test] [--batch 64]
        [--beam 1 --beam 5] [--alpha 1.0] [--threads 2] [--device cpu]

Times ``search.decode_corpus`` alone (batching, encoder, search; not model
loading or scoring, like JoeyNMT's "Generation took") on the split's sources,
``--batch`` sentences at a time, once per beam size, and reports sentences/s
with the BLEU of the output (so a fast but broken search shows).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from seq2seq.data.corpus import load_split
from seq2seq.data.workspace import encode
from seq2seq.errors import run_script
from seq2seq.model.search import Decoding
from seq2seq.training.checkpoint import open_run
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.device import pick_device
from seq2seq.training.metrics import bleu


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--split", default="test")
    p.add_argument("--checkpoint", default="last")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--beam", type=int, action="append")
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"])
    p.add_argument(
        "--glibc-default-malloc",
        action="store_true",
        help="leave glibc's allocator settings (keep_freed_memory off)",
    )
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    device = pick_device(args.device, keep_freed=not args.glibc_default_malloc)
    opened = open_run(args.run_dir, args.checkpoint, device)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    data = encode(load_split(cfg.data, args.split), tok)
    out = {"run": str(args.run_dir), "split": args.split, "batch": args.batch}
    out |= {"threads": torch.get_num_threads(), "sentences": len(data.src_ids)}
    for beam in args.beam or [1, 5]:
        decoding = Decoding(beam, args.alpha)
        ratio = cfg.eval.max_len_ratio
        decode_corpus(model, data.src_ids[: args.batch], args.batch, ratio, device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        tick = time.perf_counter()
        hyps = decode_corpus(model, data.src_ids, args.batch, ratio, device, decoding)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - tick
        texts = [tok.decode_tgt(h.tokens) for h in hyps]
        words = sum(len(t.split()) for t in texts) / max(len(texts), 1)
        out[decoding.describe()] = {
            "seconds": round(seconds, 2),
            "sentences_per_s": round(len(hyps) / seconds, 1),
            "mean_hyp_words": round(words, 2),  # decode time grows with it
            "bleu": round(bleu(texts, data.split.tgt)[0], 2),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main)
