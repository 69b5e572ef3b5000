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


def autocast(
    device: torch.device, precision: str = "auto"
) -> torch.autocast | nullcontext:
    """Mixed precision for ``precision`` (``train.precision``): ``bf16`` runs the
    matmuls and RNN cells in bfloat16 (the loss and softmaxes stay fp32, the
    weights and optimizer fp32), ``fp32`` runs everything in float32, ``auto``
    is bf16 on CUDA and fp32 on the CPU. On CPUs with AMX or AVX-512 BF16
    (``lscpu | grep bf16``) bf16 matmuls run several times faster."""
    if precision == "auto":
        precision = "bf16" if device.type == "cuda" else "fp32"
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()
