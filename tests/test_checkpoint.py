"""Checkpoints: atomic writes, tensors only, clear errors for anything else."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
import torch
import yaml
from conftest import REPO

from seq2seq.config import load_config
from seq2seq.errors import UserError
from seq2seq.run import config_file
from seq2seq.training.checkpoint import check_matches, load_checkpoint, load_run_config
from seq2seq.typed_yaml import to_dict


class Hostile:
    """Pickled objects must never be unpickled from a checkpoint."""

    def __reduce__(self):  # pragma: no cover - executed only if loading is unsafe
        return (print, ("unpickled!",))


def test_plain_checkpoint_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.pt"
    torch.save({"model": {"w": torch.ones(2)}, "state": {"step": 3}}, path)
    assert load_checkpoint(path)["state"]["step"] == 3


@pytest.mark.parametrize(
    "content",
    [
        b"not a checkpoint at all",
        b"",
        b"root:x:0:0:root:/root:/bin/bash\n",  # what --checkpoint /etc/passwd reads
        pickle.dumps({"model": Hostile()}, protocol=2),
    ],
    ids=["garbage", "empty", "text-file", "pickled-object"],
)
def test_non_checkpoints_are_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(UserError, match="bad.pt: not a loadable seq2seq checkpoint"):
        load_checkpoint(path)


def test_object_inside_torch_save_is_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "hostile.pt"
    torch.save({"model": {}, "extra": Hostile()}, path)
    with pytest.raises(UserError, match="not a loadable"):
        load_checkpoint(path)
    assert "unpickled!" not in capsys.readouterr().out


def test_missing_and_weightless(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no checkpoint here"):
        load_checkpoint(tmp_path / "none.pt")
    torch.save({"state": {}}, tmp_path / "empty.pt")
    with pytest.raises(UserError, match="no model weights"):
        load_checkpoint(tmp_path / "empty.pt")


def test_checkpoint_from_before_a_new_key_still_matches(tmp_path: Path) -> None:
    """A key added to the model section after a checkpoint was written takes
    its default when the two are compared; a real difference is still named."""
    cfg = load_config(REPO / "configs/synth_ende/additive.yaml")
    older = to_dict(cfg)
    del older["model"]["rnn_init"]  # as written before model.rnn_init existed
    payload = {"tokenizer": "abc", "config": older}
    check_matches(payload, cfg, "abc", tmp_path / "best.pt", "model")
    older["model"]["rnn_init"] = "xavier"
    with pytest.raises(UserError, match="model.rnn_init='xavier'"):
        check_matches(payload, cfg, "abc", tmp_path / "best.pt", "model")


def test_a_run_opens_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative corpus paths are found above the run folder when the working
    folder lacks them; they stay as written when the working folder has them,
    or when nothing has them."""
    shutil.copytree(REPO / "tests" / "fixtures" / "saved_run", tmp_path / "saved")
    run_dir = tmp_path / "saved" / "additive"
    written = yaml.safe_load(config_file(run_dir).read_text())["data"]["val"]["src"]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    found = load_run_config(run_dir).data
    assert found.val.src == str(tmp_path / "saved" / written)
    assert found.test is not None and Path(found.test.tgt).is_file()
    # runs/ a link to scratch space: the corpus is beside the link, not there
    (tmp_path / "scratch").mkdir()
    shutil.move(tmp_path / "saved" / "additive", tmp_path / "scratch")
    (tmp_path / "saved" / "runs").symlink_to(tmp_path / "scratch")
    linked = load_run_config(tmp_path / "saved" / "runs" / "additive").data
    assert linked.val.src == str(tmp_path / "saved" / written)
    shutil.move(tmp_path / "scratch" / "additive", tmp_path / "saved")
    monkeypatch.chdir(tmp_path / "saved")
    assert load_run_config(Path("additive")).data.val.src == written
    shutil.rmtree(tmp_path / "saved" / Path(written).parts[0])
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert load_run_config(run_dir).data.val.src == written
