"""``seq2seq translate RUN_DIR``: translate text with a trained run.

Lines come from ``--input FILE``, from standard input, or, when standard input
is a terminal, from a prompt (one sentence at a time, as a person types).
Output keeps the input's order and line count: an empty line gives an empty
output line; a line longer than :data:`MAX_SOURCE_PIECES` subwords is
translated from its first :data:`MAX_SOURCE_PIECES` with a warning naming it.

Word alignments (``--alignments``) come from the attention the model used
while writing its translation. Rule: every target subword links the word it
belongs to with the source word holding the source subword it attends to most
(``▁`` starts a word, so subwords merge back into whitespace words); a target
subword whose strongest weight is on the source end-of-sentence token links
nothing. Links are printed in Pharaoh format, ``i-j`` with i the source word
and j the target word, both counted from 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import torch

from seq2seq.data.batching import collate
from seq2seq.data.parallel import read_lines
from seq2seq.data.tokenizer import Tokenizer, word_index
from seq2seq.errors import UserError
from seq2seq.families import run_label
from seq2seq.files import check_output, naming, save_figure
from seq2seq.model.interface import Model
from seq2seq.model.search import GREEDY, Decoding, Hypothesis, search
from seq2seq.run import CHECKPOINTS
from seq2seq.training.checkpoint import open_run
from seq2seq.training.decoding import check_search_fits
from seq2seq.training.device import pick_device
from seq2seq.training.figures import heatmap
from seq2seq.training.metrics import alignment_from_attention

MAX_SOURCE_PIECES = 250  # longer inputs are cut here (with a warning)


@dataclass
class Translation:
    line: int  # 1-based input line number
    source: str
    pieces: list[str]  # source subwords the model read (without EOS)
    nbest: list[Hypothesis]  # best first; empty for an empty line


@dataclass(frozen=True)
class Output:
    """What to print for each translation."""

    nbest: int = 1
    alignments: bool = False
    json: bool = False
    plot_dir: Path | None = None


PLAIN = Output()


def batches(lines: Iterable[str], size: int) -> Iterator[list[tuple[int, str]]]:
    """(line number, text) in groups of ``size``, in input order."""
    group: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        group.append((number, line.rstrip("\r\n")))
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


@torch.no_grad()
def translate_batch(
    model: Model,
    tok: Tokenizer,
    group: list[tuple[int, str]],
    decoding: Decoding,
    nbest: int,
    ratio: float,
    device: torch.device,
) -> list[Translation]:
    """Translate one group of lines; empty lines are passed through."""
    ids = tok.encode_src([text for _, text in group])
    for (number, _), sentence in zip(group, ids, strict=True):
        if len(sentence) > MAX_SOURCE_PIECES:
            print(
                f"warning: line {number}: {len(sentence)} subwords; translating "
                f"the first {MAX_SOURCE_PIECES}",
                file=sys.stderr,
            )
            del sentence[MAX_SOURCE_PIECES:]
    real = [i for i, sentence in enumerate(ids) if sentence]
    found: dict[int, list[Hypothesis]] = {}
    if real:
        batch = collate(ids, None, real)
        src, src_len = batch.src.to(device), batch.src_len
        results = search(model, src, src_len, decoding, ratio, nbest)
        found = dict(zip(real, results, strict=True))
    return [
        Translation(number, text, tok.src_pieces(ids[i]), found.get(i, []))
        for i, (number, text) in enumerate(group)
    ]


def pharaoh(hyp: Hypothesis, src_pieces: list[str], tok: Tokenizer) -> str:
    """Word alignment of one hypothesis in Pharaoh format (see module doc)."""
    if hyp.weights is None:
        return ""
    links = alignment_from_attention(
        hyp.weights, word_index(src_pieces), word_index(tok.tgt_pieces(hyp.tokens))
    )
    # A bare word-boundary piece decodes to no word: keep links in range of the
    # words the reader sees (an early model can write just that piece).
    words = len(tok.decode_tgt(hyp.tokens).split())
    return " ".join(f"{i}-{j}" for i, j in sorted(links) if j < words)


def render(t: Translation, tok: Tokenizer, out: Output) -> list[str]:
    """The output lines for one translation (one empty line for an empty input,
    except in JSON, which says so)."""
    if out.json:
        entries = [entry(h, t, tok, out.alignments) for h in t.nbest]
        record = {"line": t.line, "source": t.source, "source_tokens": t.pieces}
        record |= entries[0] if entries else entry(None, t, tok, out.alignments)
        if out.nbest > 1:
            record["nbest"] = entries
        return [json.dumps(record, ensure_ascii=False)]
    if not t.nbest:
        return [""]
    lines = []
    for h in t.nbest:
        text = tok.decode_tgt(h.tokens)
        if out.nbest > 1:
            # Moses's n-best format: line ||| hypothesis ||| features ||| total;
            # the search's one feature is its score, which is the total too.
            text = f"{t.line - 1} ||| {text} ||| score= {h.score:.4f} ||| {h.score:.4f}"
        if out.alignments:
            text += f" ||| {pharaoh(h, t.pieces, tok)}"
        lines.append(text)
    return lines


def entry(
    h: Hypothesis | None, t: Translation, tok: Tokenizer, alignments: bool
) -> dict[str, Any]:
    """One hypothesis as JSON fields (empty ones for an empty input line)."""
    return {
        "hypothesis": "" if h is None else tok.decode_tgt(h.tokens),
        "tokens": [] if h is None else tok.tgt_pieces(h.tokens),
        "score": None if h is None else h.score,
        "alignment": pharaoh(h, t.pieces, tok) if alignments and h else None,
        # (tokens + EOS) x (source subwords + EOS): the search's own weights
        "weights": h.weights.tolist()
        if alignments and h and h.weights is not None
        else None,
    }


def plot(t: Translation, tok: Tokenizer, folder: Path, mode: str) -> None:
    """One heatmap per sentence: source subwords x generated subwords, titled
    with the attention mode and the input line."""
    import matplotlib.pyplot as plt

    if not t.nbest or t.nbest[0].weights is None:
        return
    hyp = t.nbest[0]
    fig = heatmap(
        t.nbest[0].weights,
        [*t.pieces, "</s>"],
        [*tok.tgt_pieces(hyp.tokens), "</s>"],
        f"{mode} attention, input line {t.line}",
    )
    save_figure(fig, folder / f"line{t.line:05d}.png")
    plt.close(fig)


def check_request(model: Model, out: Output) -> None:
    if (out.alignments or out.plot_dir) and not model.has_alignment:
        raise UserError(
            f"model '{run_label(model.family, model.mode)}' has no attention "
            "to align or plot; drop --alignments/--plot"
        )
    if out.nbest < 1:
        raise UserError(f"--nbest {out.nbest}: must be >= 1")


def translate(
    run_dir: Path,
    lines: Iterable[str],
    sink: TextIO,
    decoding: Decoding = GREEDY,
    out: Output = PLAIN,
    batch_size: int = 32,
    checkpoint: str = "best",
    device_name: str = "auto",
) -> int:
    """Translate ``lines`` into ``sink``; returns the number of lines. The
    checkpoint's step goes to standard error first: a run still training
    may have saved another since (the step says which one translated)."""
    if out.nbest > decoding.beam:
        raise UserError(f"--nbest {out.nbest} needs --beam {out.nbest} or more")
    if batch_size < 1:
        raise UserError(f"--batch-size {batch_size}: must be >= 1")
    device = pick_device(device_name)
    opened = open_run(run_dir, checkpoint, device)
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    if opened.step is not None:
        print(f"{run_dir}: {checkpoint} at step {opened.step}", file=sys.stderr)
    check_request(model, out)
    check_search_fits(model, batch_size, decoding.beam, device)
    if out.plot_dir:
        out.plot_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    for group in batches(lines, batch_size):
        for t in translate_batch(
            model, tok, group, decoding, out.nbest, cfg.eval.max_len_ratio, device
        ):
            sink.write("".join(line + "\n" for line in render(t, tok, out)))
            if out.plot_dir:
                plot(t, tok, out.plot_dir, run_label(model.family, model.mode))
            count += 1
        sink.flush()
    return count


def prompt_lines(stream: TextIO) -> Iterator[str]:
    """Lines typed at a terminal, each after a prompt on standard error."""
    while True:
        print("> ", end="", file=sys.stderr, flush=True)
        line = stream.readline()
        if not line:
            return
        yield line


def stdin_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines of a byte stream decoded as UTF-8, naming the line that is not."""
    for number, raw in enumerate(stream, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"standard input, line {number}: not valid UTF-8") from None


def check_paths(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written, or would destroy an
    input, before any decoding."""
    output, plot_dir = args.output, args.plot
    inputs = [("the input file", args.input)] if args.input is not None else []
    if args.checkpoint not in CHECKPOINTS:  # a checkpoint named by its path
        inputs.append(("the checkpoint read", Path(args.checkpoint)))
    if output is not None:
        check_output(output, "--output", inputs)
    if plot_dir is not None:  # a folder it writes line00001.png ... into
        check_output(plot_dir, "--plot", inputs, folder=True)
    # (a missing or unwritable folder fails when main opens the temporary file)
    if output is not None and output.is_dir():
        raise UserError(
            f"--output {output}: is a directory; name a file, e.g. {output / 'out.txt'}"
        )
    if plot_dir is not None and plot_dir.exists() and not plot_dir.is_dir():
        raise UserError(f"--plot {plot_dir}: is a file; name a folder for heatmaps")


def main(args: argparse.Namespace, decoding: Decoding) -> None:
    """The ``translate`` command: wire files, standard streams and the prompt."""
    check_paths(args)
    if args.input is not None:
        lines: Iterable[str] = read_lines(args.input)
    elif sys.stdin.isatty():
        lines, args.batch_size = prompt_lines(sys.stdin), 1  # answer each line
    else:
        lines = stdin_lines(sys.stdin.buffer)
    out = Output(args.nbest, args.alignments, args.json, args.plot)
    options = (args.batch_size, args.checkpoint, args.device)

    def run(sink: TextIO) -> int:
        return translate(args.run_dir, lines, sink, decoding, out, *options)

    if args.output is None:
        run(sys.stdout)
        return
    if args.output.exists() and not args.output.is_file():  # /dev/null, a FIFO
        with naming(args.output), open(args.output, "w", encoding="utf-8") as sink:
            count = run(sink)
        print(f"wrote {count} lines to {args.output}", file=sys.stderr)
        return
    # Into a temporary file renamed at the end: an interrupted or failed
    # translation leaves an existing output file as it was.
    tmp = args.output.with_name(f".{args.output.name}.tmp{os.getpid()}")
    try:
        try:
            sink = open(tmp, "w", encoding="utf-8")
        except OSError as err:
            raise UserError(
                f"--output {args.output}: cannot write there ({err.strerror}); "
                "pick a writable folder"
            ) from None
        with naming(args.output), sink:
            count = run(sink)
        os.replace(tmp, args.output)
    finally:
        tmp.unlink(missing_ok=True)
    print(f"wrote {count} lines to {args.output}", file=sys.stderr)
