"""``seq2seq evaluate RUN_DIR --split test``: decode, score, write eval_<split>.json.

Scores are sacreBLEU and chrF on detokenized text (signatures printed), corpus
BLEU per source-length bucket, and, where the corpus has gold word alignments,
the alignment error rate (AER) of the attention: the reference is force-decoded,
each target subword is linked to the source subword it attends to most, and
subwords are merged back into words before comparing with the gold links.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from seq2seq import run
from seq2seq.data.batching import bucket_batches
from seq2seq.data.corpus import file_split, load_split
from seq2seq.data.tokenizer import Tokenizer
from seq2seq.data.workspace import Encoded, encode
from seq2seq.errors import UserError
from seq2seq.files import atomic_write, exclusive, reading
from seq2seq.lab.ablate import parse
from seq2seq.model.ablation import Ablation
from seq2seq.model.interface import Model
from seq2seq.model.search import GREEDY, Decoding
from seq2seq.results import Evaluation
from seq2seq.training.checkpoint import (
    OpenedRun,
    checkpoint_path,
    open_run,
    saved_step,
)
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.device import pick_device
from seq2seq.training.scoring import forced, text_scores


def evaluate(
    run_dir: Path,
    split: str = "test",
    checkpoint: str = "best",
    device_name: str = "auto",
    decoding: Decoding = GREEDY,
    ablation: Ablation | str | None = None,
    opened: OpenedRun | None = None,
    files: tuple[str, ...] = (),
) -> Evaluation:
    """Decode ``split`` (or, with ``files``, a source file and its reference
    files, (src, ref, ref2, ...), named ``split``: corpus.file_split), score
    it, write ``eval_<name>.json`` and ``hyp_<name>.txt`` (name: split,
    decoding tag, ablation). With ``ablation`` (ablate.py; a
    str is ``--ablate HOW``: the whole cross-attention) the trained
    attention weights are replaced while decoding, and the result records
    the BLEU drop against the same evaluation without it.

    A run in training can be evaluated: the checkpoint is read whole (the
    training replaces it whole), the result names its step, and the files
    written are held for the whole evaluation (files.exclusive on
    ``eval_<name>.json``), so two evaluations of one name cannot interleave,
    while training and other evaluations go on (files.reading). A caller
    that has the run ``opened`` already (the probe) has that checkpoint
    scored, on its device, whatever the training has saved since."""
    if isinstance(ablation, str):
        ablation = parse(ablation)
    name = output_name(split, decoding, ablation)
    with (
        reading(run_dir),
        exclusive(run.evaluation_file(run_dir, name), "seq2seq evaluate"),
    ):
        if opened is None:
            opened = open_run(run_dir, checkpoint, pick_device(device_name))
        return _evaluate(opened, split, decoding, ablation, files)


def output_name(split: str, decoding: Decoding, ablation: Ablation | None) -> str:
    """What names an evaluation's files: split, decoding tag, ablation."""
    return split + decoding.tag + (f"_ablate-{ablation.tag}" if ablation else "")


def _evaluate(
    opened: OpenedRun,
    split: str,
    decoding: Decoding,
    ablation: Ablation | None,
    files: tuple[str, ...],
) -> Evaluation:
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    run_dir, checkpoint = opened.path, opened.checkpoint
    device = next(model.parameters()).device
    baseline = None
    if ablation is not None:  # the same weights, before they are ablated
        baseline = cached_evaluate(
            run_dir, split, decoding=decoding, opened=opened, files=files
        )
        model.ablate(ablation)
    pairs = (
        file_split(files[0], files[1:], split) if files else load_split(cfg.data, split)
    )
    data = encode(pairs, tok)
    hyps = decode_corpus(
        model,
        data.src_ids,
        cfg.eval.batch_sentences,
        cfg.eval.max_len_ratio,
        device,
        decoding,
    )
    texts = [tok.decode_tgt(h.tokens) for h in hyps]
    gold = data.split.align is not None and model.has_alignment and not ablation
    scores = text_scores(
        texts,
        data.split.tgt,
        data.src_words(),
        pairs.groups,
        cfg.eval.buckets,
        pairs.more_refs,
    )
    batch = cfg.eval.batch_sentences
    result = Evaluation(
        run=str(run_dir),
        split=split,
        mode=model.mode,
        family=model.family,
        params=model.num_parameters(),
        checkpoint=checkpoint,
        decoding=decoding.describe(),
        ablation=ablation.tag if ablation else None,
        step=opened.step,
        scores=scores,
        aer=forced_aer(model, data, tok, device, batch) if gold else None,
        bleu_drop=None if baseline is None else baseline.bleu - scores.bleu,
        files=files,
    )
    name = output_name(split, decoding, ablation)
    atomic_write(opened.hypotheses_file(name), "".join(t + "\n" for t in texts))
    atomic_write(opened.evaluation_file(name), result.to_json())
    return result


def forced_aer(
    model: Model, data: Encoded, tok: Tokenizer, device: torch.device, batch: int
) -> float | None:
    """AER of the argmax attention under forced decoding of the references
    (scoring.forced), ``batch`` sentences at a time in length order."""
    batches = bucket_batches(data.lengths(), 10**9, batch)
    return forced(model, data, tok, batches, device).aer


def cached_evaluate(
    run_dir: Path,
    split: str,
    device_name: str = "auto",
    decoding: Decoding = GREEDY,
    checkpoint: str = "best",
    opened: OpenedRun | None = None,
    files: tuple[str, ...] = (),
) -> Evaluation:
    """The run's ``eval_<split><tag>.json`` if it is of this checkpoint as it
    is now (or of the step ``opened`` holds) and of these ``files``, else a
    fresh evaluation."""
    if opened is not None:
        checkpoint = opened.checkpoint
    step = None if opened is None else opened.step
    saved = saved_evaluation(run_dir, split, decoding, checkpoint, step)
    if saved is not None and saved.files == files:
        return saved
    return evaluate(
        run_dir, split, checkpoint, device_name, decoding, opened=opened, files=files
    )


def saved_evaluation(
    run_dir: Path,
    split: str,
    decoding: Decoding = GREEDY,
    checkpoint: str = "best",
    step: int | None = None,
) -> Evaluation | None:
    """The run's ``eval_<split><tag>.json`` if it is of this checkpoint as it
    is now (of ``step``, where the caller has loaded that step); None when
    there is none, or it is stale."""
    path = run.evaluation_file(run_dir, split + decoding.tag)
    if not path.is_file():
        return None
    result = Evaluation.read(path)
    hyps = run.hypotheses_file(run_dir, split + decoding.tag)
    if step is not None:
        same = result.checkpoint == checkpoint and result.step == step
        return result if same and hyps.is_file() else None
    return result if _current(result, Path(run_dir), hyps, checkpoint) else None


def _current(result: Evaluation, run_dir: Path, hyps: Path, checkpoint: str) -> bool:
    """Whether a saved evaluation is of ``checkpoint`` as it is now: the same
    name and, where the file is still there, the same step (a resumed
    training may have written a new best.pt since) and its hypotheses beside
    it (the paired bootstrap and the probe read them). Without the checkpoint
    the evaluation stands: results outlive deleted (or damaged) checkpoints."""
    if result.checkpoint != checkpoint:
        return False
    step = saved_step(checkpoint_path(run_dir, checkpoint))
    if step is None:
        return True
    return hyps.is_file() and result.step in (None, step)


def format_result(result: Evaluation) -> str:
    """A short human-readable report of one evaluation."""
    s = result.scores
    ablated = f", {result.ablation} attention" if result.ablation else ""
    aer = f"  AER {result.aer:.3f}" if result.aer is not None else ""
    at = "" if result.step is None else f", {result.checkpoint} at step {result.step}"
    lines = [
        f"{result.run} [{result.label()}, {result.params:,} params{at}] "
        f"{result.split} ({result.decoding}{ablated}): "
        f"BLEU {s.bleu:.2f}  chrF {s.chrf:.2f}{aer}",
        f"  {s.signature}",
        "  BLEU by source length: "
        + "  ".join(
            f"{b.lo}-{b.hi}: {b.bleu:.1f} (n={b.n})"
            for b in s.buckets
            if b.bleu is not None
        ),
    ]
    chrfs = [f"{b.lo}-{b.hi}: {b.chrf:.1f}" for b in s.filled() if b.chrf is not None]
    if chrfs:  # results written before chrF was scored by length have none
        lines.append("  chrF by source length: " + "  ".join(chrfs))
    if result.bleu_drop is not None:
        lines.append(
            f"  BLEU drop against the trained attention: {result.bleu_drop:.2f}"
        )
    by_k = s.by_sentences
    if len(by_k) > 1:  # a joined split
        lines.append(
            "  BLEU by sentences joined: "
            + "  ".join(f"{b.k}: {b.bleu:.1f} (n={b.n})" for b in by_k)
        )
        counts = [(b.k, b.hyp_sentences, b.ref_sentences) for b in by_k]
        if all(h is not None and r is not None for _, h, r in counts):
            lines.append(  # older results lack the counts
                "  sentences written / in the references: "
                + "  ".join(f"{k}: {h:.2f} / {r:.2f}" for k, h, r in counts)
            )
    return "\n".join(lines)


def scored_set(
    split: str | None, src: Path | None, refs: list[Path], name: str | None
) -> tuple[str, tuple[str, ...]]:
    """What evaluate scores: a split of the run's config (default test), or
    ``src`` and its references, as (name, (src, ref, ref2, ...)); a file set
    is named ``name`` or after ``src``, never as a split is."""
    if src is None:
        if refs or name:
            what = "--ref" if refs else "--name"
            raise UserError(f"evaluate: {what} goes with --src (the source file)")
        return split or "test", ()
    if split:
        raise UserError("evaluate: --split or --src, not both")
    if not refs:
        raise UserError(f"evaluate: --src {src} needs --ref (its reference file)")
    name = name or file_set_name(src)
    if name in run.SPLITS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        why = "a split's name" if name in run.SPLITS else "not a file name of its own"
        raise UserError(f"evaluate: {name!r} is {why}; name the set with --name")
    return name, tuple(str(f) for f in (src, *refs))


def file_set_name(src: Path) -> str:
    """test_2017_flickr.de(.gz) -> test_2017_flickr: a file's name without
    its compression and language suffixes."""
    name = src.name.removesuffix(".gz")
    return name.rsplit(".", 1)[0] if "." in name else name
