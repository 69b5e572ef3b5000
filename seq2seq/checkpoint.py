"""Checkpoints: tensors and plain data only, written atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from seq2seq.config import Config, to_dict
from seq2seq.errors import UserError
from seq2seq.model import Seq2Seq


def save_checkpoint(
    path: Path, model: Seq2Seq, cfg: Config, ws: Any, state: dict[str, Any]
) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over
    ``path``: a crash mid-save leaves the previous checkpoint intact."""
    payload = {
        "model": model.state_dict(),
        "config": to_dict(cfg),
        "tokenizer": ws.tokenizer.fingerprint(),
        "vocab": [ws.tokenizer.src_vocab_size, ws.tokenizer.tgt_vocab_size],
        "state": state,
    }
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        torch.save(payload, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Load with ``weights_only=True``: pickled objects are refused."""
    if not path.is_file():
        raise UserError(f"{path}: no checkpoint here; train the run first")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # any failure here means "not a checkpoint"
        text = str(err).strip()
        why = text.splitlines()[0] if text else type(err).__name__
        raise UserError(
            f"{path}: not a loadable seq2seq checkpoint ({why}); pass a best.pt or "
            "last.pt written by seq2seq train"
        ) from None
    if not isinstance(payload, dict) or "model" not in payload:
        raise UserError(f"{path}: not a seq2seq checkpoint (no model weights)")
    return payload
