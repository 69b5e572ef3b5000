"""Validation during training: loss/ppl, greedy BLEU/chrF and BLEU by length,
attention diagnostics and AER (all scored by scoring.py), and the heatmaps of
a few watched validation sentences."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import torch

from seq2seq import run
from seq2seq.config import Config
from seq2seq.data.batching import bucket_batches
from seq2seq.data.workspace import Workspace
from seq2seq.families import run_label
from seq2seq.files import append_line, atomic_write
from seq2seq.model.interface import Maps, Model, by_side
from seq2seq.results import Validation
from seq2seq.training.board import Board, Watched, pick_watched, samples_markdown
from seq2seq.training.decoding import decode_corpus
from seq2seq.training.figures import FORCED_ROWS
from seq2seq.training.metrics import sentence_bleu
from seq2seq.training.scoring import forced, forced_maps, text_scores


class Validator:
    def __init__(
        self,
        cfg: Config,
        ws: Workspace,
        board: Board,
        device: torch.device,
        run_dir: Path,
    ) -> None:
        self.cfg, self.ws, self.board, self.device = cfg, ws, board, device
        val = ws.val
        n = cfg.train.val_max_sentences or len(val.split)
        self.subset = list(range(min(n, len(val.split))))
        tok = ws.tokenizer
        self.watched = [
            Watched(
                i,
                val.split.src[i],
                val.split.tgt[i],
                tok.src_pieces(val.src_ids[i]) + ["</s>"],
            )
            for i in pick_watched(val.src_words(), cfg.train.num_probes)
        ]
        self.start = time.monotonic()
        self.history = run.history_file(run_dir)

    def rewind(self, step: int, elapsed: float) -> None:
        """Continue a resumed run: keep the history up to the checkpoint's
        step (later lines came from the lost part) and its clock."""
        self.start = time.monotonic() - elapsed
        if not self.history.is_file():
            return
        keep = [h for h in read_history(self.history) if h.step <= step]
        text = "".join(json.dumps(h.to_dict()) + "\n" for h in keep)
        atomic_write(self.history, text)

    def loss(self, model: Model) -> tuple[float, dict[str, float]]:
        """Per-token validation cross-entropy under teacher forcing, and the
        attention diagnostics of that forced decoding (empty without
        attention; with ``aer`` where the set has gold word links)."""
        # Training's batch limits, so validation never holds more logits at once
        # than a training step does (one batch of a whole validation set would).
        t, val = self.cfg.train, self.ws.val
        batches = bucket_batches(val.lengths(), t.batch_tokens, t.batch_sentences)
        result = forced(
            model, val, self.ws.tokenizer, batches, self.device, t.precision
        )
        attention = dict(result.attention)
        if result.aer is not None:
            attention["aer"] = result.aer
        return result.token_loss, attention

    def run(
        self,
        model: Model,
        step: int,
        epoch: int | None = None,
        lr: float | None = None,
    ) -> Validation:
        """Validate, and add it to history.jsonl with ``epoch`` and ``lr``."""
        val, tok = self.ws.val, self.ws.tokenizer
        loss, attention = self.loss(model)
        src_ids = [val.src_ids[i] for i in self.subset]
        hyps = decode_corpus(
            model,
            src_ids,
            self.cfg.eval.batch_sentences,
            self.cfg.eval.max_len_ratio,
            self.device,
        )
        texts = [tok.decode_tgt(h.tokens) for h in hyps]
        refs = [val.split.tgt[i] for i in self.subset]
        words, groups = val.src_words(), val.split.groups
        scores = text_scores(
            texts,
            refs,
            [words[i] for i in self.subset],
            [groups[i] for i in self.subset],
            self.cfg.eval.buckets,
        )
        ppl = math.exp(min(loss, 50.0))
        values = {"loss": loss, "ppl": ppl, "bleu": scores.bleu, "chrf": scores.chrf}
        self.board.scalars({f"val/{k}": v for k, v in values.items()}, step)
        by_length = {  # TensorBoard: how BLEU by length forms (empty buckets left out)
            f"{b.lo}-{b.hi}": b.bleu for b in scores.buckets if b.bleu is not None
        }
        self.board.scalars(
            {f"val_bleu_by_length/{k}": v for k, v in by_length.items()}, step
        )
        self.board.scalars({f"attention/{k}": v for k, v in attention.items()}, step)
        self.draw_watched(model, step)
        elapsed = time.monotonic() - self.start
        result = Validation(
            step, loss, ppl, scores.bleu, scores.chrf, epoch, lr, elapsed, attention
        )
        append_line(self.history, json.dumps(result.to_dict()))
        print(
            f"{self.cfg.name}: step {step}: val loss {loss:.3f} "
            f"ppl {ppl:.2f} BLEU {scores.bleu:.2f} chrF {scores.chrf:.2f}"
        )
        return result

    def draw_watched(self, model: Model, step: int) -> None:
        """Sample translations of the watched sentences and, for attention modes,
        heatmaps of their hypothesis and of their forced-decoded reference."""
        val, tok = self.ws.val, self.ws.tokenizer
        ids = [val.src_ids[p.index] for p in self.watched]
        hyps = decode_corpus(
            model,
            ids,
            len(ids) or 1,
            self.cfg.eval.max_len_ratio,
            self.device,
            keep_weights=True,  # drawn as heatmaps
        )
        texts = [tok.decode_tgt(h.tokens) for h in hyps]
        rows = [
            (p.source, p.reference, t) for p, t in zip(self.watched, texts, strict=True)
        ]
        self.board.text("samples", samples_markdown(rows), step)
        if not model.has_alignment:
            self.board.text(
                "alignment",
                f"Model `{run_label(model.family, model.mode)}` has no "
                "attention over the source positions, so there is no alignment "
                "to show.",
                step,
            )
            return
        if not self.watched:
            return
        maps = self.forced_maps(model)  # one pass over the watched references
        for k, (w, hyp, text) in enumerate(zip(self.watched, hyps, texts, strict=True)):
            assert hyp.weights is not None  # the mode has alignment (above)
            score = sentence_bleu(text, w.reference)
            words = len(w.source.split())
            title = f"step {step} · sentence BLEU {score:.1f} · {words} source words"
            pieces = tok.tgt_pieces(hyp.tokens) + ["</s>"]
            src = w.src_pieces
            self.board.alignment(
                f"alignment/probe{k}", hyp.weights, src, pieces, title, step
            )
            ref = tok.tgt_pieces(val.tgt_ids[w.index]) + ["</s>"]
            title = f"step {step} · reference, forced decoding · {words} source words"
            shown = model.shown(maps[k])  # the display map (1, T_ref + 1, S + 1)
            assert shown is not None  # the mode has alignment (above)
            self.board.alignment(
                f"forced/probe{k}", shown[0], src, ref, title, step, FORCED_ROWS
            )
        if maps[0].several:
            self.draw_layers(maps, step)

    def draw_layers(self, per_sentence: list[Maps], step: int) -> None:
        """A model with more than one map (kinds, layers or heads: a
        Transformer's) gets each drawn, its reference fed in: every kind per
        layer with its heads averaged, and per head of the last layer
        (Board.maps); an RNN's one map is the forced heatmap above."""
        val, tok = self.ws.val, self.ws.tokenizer
        for k, (w, maps) in enumerate(zip(self.watched, per_sentence, strict=True)):
            ref = tok.tgt_pieces(val.tgt_ids[w.index])
            labels = {
                kind: by_side(kind, w.src_pieces, [*ref, "</s>"], ["<s>", *ref])
                for kind in maps.kinds
            }
            self.board.maps(f"probe{k}", maps, labels, step)

    def forced_maps(self, model: Model) -> list[Maps]:
        """Every attention map of each watched sentence, its reference fed in,
        cut to its real positions (scoring.forced_maps)."""
        val, index = self.ws.val, [p.index for p in self.watched]
        precision = self.cfg.train.precision
        return forced_maps(
            model, val.src_ids, val.tgt_ids, index, self.device, precision
        )

    def finish(self, model: Model, best: Validation | None, step: int) -> None:
        """HPARAMS entry: the run's settings against its final scores."""
        cfg = self.cfg
        params = cfg.model.hparams() | {
            "corpus": str(Path(cfg.data.train.src).parent),
            "lr": cfg.train.lr,
        }
        metrics = {
            "hparam/val_bleu": best.bleu if best else 0.0,
            "hparam/val_chrf": best.chrf if best else 0.0,
            "hparam/val_ppl": best.ppl if best else 0.0,
            "hparam/params": float(model.num_parameters()),
            "hparam/steps": float(step),
        }
        self.board.hparams(params, metrics)


def read_history(path: Path) -> list[Validation]:
    """The validation records of a run's history.jsonl, in order (none without
    the file). A line that is not a validation record (one cut short by a
    kill) is left out with a warning."""
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(Validation.from_dict(json.loads(line)))
            continue
        except (json.JSONDecodeError, KeyError, TypeError):
            pass
        if line.strip():
            print(
                f"warning: {path}:{number}: not a validation record, left out",
                file=sys.stderr,
            )
    return out
