"""One scorer for validation and evaluate (seq2seq/training/scoring.py).

On the saved run of tests/fixtures/saved_run: a real model with attention and
a test set with gold word links.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import astuple
from pathlib import Path

import pytest
import torch

from seq2seq.config import SplitFiles
from seq2seq.data.batching import bucket_batches
from seq2seq.data.corpus import eval_split
from seq2seq.data.workspace import encode
from seq2seq.training.checkpoint import open_run
from seq2seq.training.metrics import bleu
from seq2seq.training.scoring import forced, forced_weights, text_scores

FIXTURE = Path(__file__).parent / "fixtures" / "saved_run"
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory):
    """The saved run's model and tokenizer, and its test set encoded."""
    root = tmp_path_factory.mktemp("scoring") / "saved"
    shutil.copytree(FIXTURE, root)
    opened = open_run(root / "additive")
    cfg, tok, model = opened.cfg, opened.tok, opened.model
    files = cfg.data.test  # paths relative to the fixture folder
    test = eval_split(SplitFiles(*(str(root / p) for p in astuple(files))), "test")
    return tok, model, encode(test, tok)


def test_forced_gives_the_saved_losses_and_an_aer(saved) -> None:
    tok, model, data = saved
    result = forced(model, data, tok, [[i] for i in range(len(data.src_ids))], CPU)
    expected = json.loads((FIXTURE / "expected.json").read_text())["test_loss_sums"]
    assert result.loss == pytest.approx(sum(expected), rel=1e-4)
    assert result.tokens == sum(len(t) + 1 for t in data.tgt_ids)
    assert result.aer is not None and 0.0 <= result.aer <= 1.0
    assert set(result.attention) == {"entropy", "peak", "eos_mass", "monotone"}


def test_forced_does_not_depend_on_the_batches(saved) -> None:
    """Validation and evaluate batch differently; the scores must not care.
    Loss and diagnostics agree to float rounding (measured: 2e-8 relative).
    This barely trained model puts its peak weight on the source EOS, whose
    links AER leaves out, so its AER is 1.0 whatever the batches; AER on a
    trained model is tested in test_train.py."""
    tok, model, data = saved
    n = len(data.src_ids)
    one_each = forced(model, data, tok, [[i] for i in range(n)], CPU)
    sorted_7 = forced(model, data, tok, bucket_batches(data.lengths(), 10**9, 7), CPU)
    assert sorted_7.loss == pytest.approx(one_each.loss, rel=1e-5)
    assert sorted_7.tokens == one_each.tokens
    for key, value in one_each.attention.items():
        assert sorted_7.attention[key] == pytest.approx(value, abs=1e-4)
    assert sorted_7.aer == one_each.aer


def test_forced_weights_are_each_sentences_distribution(saved) -> None:
    tok, model, data = saved
    index = [0, 3, 5]
    for i, w in zip(index, forced_weights(model, data, index, CPU), strict=True):
        assert w.shape == (len(data.tgt_ids[i]) + 1, len(data.src_ids[i]) + 1)
        torch.testing.assert_close(w.sum(-1), torch.ones(w.size(0)))


def test_text_scores_bucket_by_source_length() -> None:
    refs = ["a b c", "d e f g", "h i", "j k l m n o"]
    hyps = ["a b c", "d e x g", "h i", "j k l m z o"]
    src_words = [2, 3, 12, 13]
    scores = text_scores(hyps, refs, src_words, [[i] for i in range(4)], [10])
    assert scores.n == 4 and scores.bleu == bleu(hyps, refs)[0]
    short, long = scores.buckets
    assert (short.lo, short.hi, short.n) == (1, 10, 2)
    assert short.bleu == bleu(hyps[:2], refs[:2])[0]
    assert long.bleu == bleu(hyps[2:], refs[2:])[0]
    assert [b.k for b in scores.by_sentences] == [1]
