"""Device choice, the CPU allocator, and mixed precision."""

from __future__ import annotations

import ctypes
import ctypes.util
from contextlib import nullcontext

import torch

from seq2seq.errors import SettingError, literal


def pick_device(name: str, keep_freed: bool = True) -> torch.device:
    """``auto`` takes CUDA when present, else the CPU. Every command that
    computes picks its device here, so this is also where the CPU allocator is
    set up (:func:`keep_freed_memory`; ``keep_freed=False`` leaves glibc's
    defaults, for the benchmark that measures the difference)."""
    if name not in ("auto", "cpu", "cuda"):
        raise SettingError(f"{{device}} {literal(name)}: choose auto, cpu or cuda")
    if name == "cuda" and not torch.cuda.is_available():
        raise SettingError(
            "{device} cuda: no CUDA device is available; use {device} cpu"
        )
    if keep_freed:
        keep_freed_memory()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory(
    mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20
) -> bool:
    """Let glibc reuse freed memory for the large tensors that every step makes
    afresh; returns whether it applied (False on other C libraries).

    By default glibc gives each block over a (self-adjusting) threshold its own
    fresh pages, and the kernel zero-fills every 4 KiB page on first touch. A
    step makes several such tensors, the largest being beam search's (B*k, V)
    logits: 10 MB, 2,500 page faults, each time. Serving blocks up to
    ``mmap_threshold`` from the heap, and keeping up to ``trim_threshold`` of
    freed memory there, makes beam search about 10 % faster on the benchmark
    spec (docs/speed.md), with the same peak memory. Process-wide, so it is
    set once, before the work starts; calling it again changes nothing."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # no libc, or not glibc
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(M_TRIM_THRESHOLD, trim_threshold)
    )


def autocast(
    device: torch.device, precision: str = "auto"
) -> torch.autocast | nullcontext[None]:
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


def available_bytes(device: torch.device) -> int | None:
    """Memory a new allocation can still get: the kernel's MemAvailable on
    the CPU (Linux), the free memory of the GPU on CUDA; None where unknown."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_fits(need: int, device: torch.device, what: str, fix: str) -> None:
    """Refuse work whose estimated memory ``need`` (bytes) exceeds what the
    device has free, before it starts: an allocation that fails half-way
    through ends in the allocator's traceback, or, near the machine's size,
    in minutes of swapping and the kernel's OOM killer. ``what`` and ``fix``
    are :class:`SettingError` templates."""
    have = available_bytes(device)
    if have is not None and need > have:
        raise SettingError(
            f"{what} needs about {need / 2**30:.1f} GiB, and {device.type} has "
            f"{have / 2**30:.1f} GiB available; {fix}"
        )
