"""Device choice and mixed precision."""

from __future__ import annotations

from contextlib import nullcontext

import torch

from seq2seq.errors import UserError


def pick_device(name: str) -> torch.device:
    """``auto`` takes CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: no CUDA device is available; use --device cpu")
    if name not in ("cpu", "cuda"):
        raise UserError(f"--device {name}: choose auto, cpu or cuda")
    return torch.device(name)


def autocast(device: torch.device) -> torch.autocast | nullcontext:
    """bf16 autocast on CUDA (the RNN cells and matmuls run in bf16, the loss
    in fp32); plain fp32 on the CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()
