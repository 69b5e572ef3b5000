"""A corpus made ready for a model (seq2seq/data/workspace.py): ids, lengths
with EOS/BOS, subwords mapped to their words, and a run's own vocabularies
that stand on their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, tiny_overrides

from seq2seq import run
from seq2seq.config import load_config
from seq2seq.data.synth import write_corpus
from seq2seq.data.workspace import Workspace, load_workspace, run_tokenizer
from seq2seq.errors import UserError


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("workspace")
    write_corpus(root / "corpus", seed=5, sizes={"train": 200, "val": 20, "test": 10})
    items = tiny_overrides(root / "corpus", root / "runs", "ws")
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml", items)
    return load_workspace(cfg)


def test_every_split_is_encoded_line_for_line(workspace: Workspace) -> None:
    assert workspace.test is not None
    for data in (workspace.train, workspace.val, workspace.test):
        assert len(data.src_ids) == len(data.split.src) == len(data.tgt_ids)
        assert data.lengths() == [
            (len(s) + 1, len(t) + 1)
            for s, t in zip(data.src_ids, data.tgt_ids, strict=True)
        ]
    tok, val = workspace.tokenizer, workspace.val
    assert [tok.decode_tgt(ids) for ids in val.tgt_ids] == val.split.tgt


def test_each_subword_belongs_to_its_word(workspace: Workspace) -> None:
    val = workspace.val
    src, tgt = val.word_indices(workspace.tokenizer)
    for i, words in enumerate(src):
        assert len(words) == len(val.src_ids[i])
        assert words[0] == 0 and words == sorted(words)  # in order, from word 0
        assert words[-1] == val.src_words()[i] - 1  # the last piece, last word
    assert all(len(w) == len(ids) for w, ids in zip(tgt, val.tgt_ids, strict=True))


def test_a_runs_vocabularies_stand_on_their_own(
    workspace: Workspace, tmp_path: Path
) -> None:
    with pytest.raises(UserError, match="src.model: missing; .* not a complete run"):
        run_tokenizer(tmp_path)
    workspace.tokenizer_to(tmp_path)
    own = run_tokenizer(tmp_path)
    assert own.fingerprint() == workspace.tokenizer.fingerprint()
    assert run.vocab_files(tmp_path)[0].is_file()
