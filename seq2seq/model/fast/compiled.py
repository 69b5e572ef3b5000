"""The recurrences' step loops compiled (csrc/: loops.cpp, the GRU and
LSTM; feeding.cpp, the input-feeding step; gates.h, what they share): built
once per machine, loaded when a model is built, or the reason they are not.

``make install`` builds them (``python -m seq2seq.model.compiled``) with
``torch.utils.cpp_extension`` and the machine's C++ compiler, for AVX2 + FMA
(every x86-64 CPU since 2013-2015, the lab's Intel Xeons and AMD EPYCs
included), into ``seq2seq/model/fast/csrc/build/`` beside the source (ignored by
git), under a key of the source, the compiler flags and the torch and Python
versions: a change to any of them is a new build, never a stale one. Where
there is no build (no compiler, another CPU architecture, a new torch)
:func:`load` says why in one line, and the model runs recurrence.py's Python
loops, the reference these are tested against.
"""

from __future__ import annotations

import hashlib
import importlib.util
import platform
import sys
import time
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from seq2seq.model.fast.recurrence import PYTHON

NAME = "seq2seq_loops"
CSRC = Path(__file__).parent / "csrc"
SOURCES = [CSRC / "loops.cpp", CSRC / "feeding.cpp"]
# AVX2 + FMA, and ATen's vector types for that capability (their exp and
# tanh come from the SLEEF library inside libtorch).
FLAGS = ["-O3", "-mavx2", "-mfma", "-DCPU_CAPABILITY=AVX2", "-DCPU_CAPABILITY_AVX2"]


def build_dir() -> Path:
    """Where this source, built with these flags for this torch, lives."""
    key = hashlib.sha256()
    for source in [*SOURCES, CSRC / "gates.h"]:
        key.update(source.read_bytes())
    for part in (*FLAGS, torch.__version__, sys.version, platform.machine()):
        key.update(part.encode())
    return CSRC / "build" / key.hexdigest()[:16]


def unsupported() -> str | None:
    """Why this machine cannot run the compiled loops, or None."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"built for x86-64 with AVX2, this machine is {platform.machine()}"
    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in ("AVX2", "AVX512"):
        return f"built for AVX2, this CPU offers {capability}"
    return None


@cache
def load() -> tuple[ModuleType | None, str]:
    """The compiled loops and "compiled", or None and why not (one line)."""
    why = unsupported()
    if why is not None:
        return None, f"the compiled loops cannot run here ({why})"
    library = next(build_dir().glob(f"{NAME}*.so"), None)
    if library is None:
        return None, (
            "the compiled loops are not built for this torch "
            "(make install builds them: python -m seq2seq.model.compiled)"
        )
    spec = importlib.util.spec_from_file_location(NAME, library)
    assert spec is not None and spec.loader is not None
    try:  # an extension module is loaded by module_from_spec already
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as err:  # a build cut short, or damaged
        return None, f"the compiled loops do not load ({err}); rerun make install"
    return module, "compiled"


class CompiledLoops:
    """The compiled loops as a recurrence.Loops. They are built for CPU
    tensors in fp32 and fp64; any other (a GPU, bf16 autocast) goes to the
    Python loops, decided here for every caller."""

    DTYPES = (torch.float32, torch.float64)

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def _for(self, x: torch.Tensor) -> Any:
        fits = x.device.type == "cpu" and x.dtype in self.DTYPES
        return self.module if fits else PYTHON

    def gru_forward(self, gi: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(gi).gru_forward(gi, *rest)

    def gru_backward(self, grad: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(grad).gru_backward(grad, *rest)

    def lstm_forward(self, gi: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(gi).lstm_forward(gi, *rest)

    def lstm_backward(self, grad: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(grad).lstm_backward(grad, *rest)

    def feeding_forward(self, gi_e: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(gi_e).feeding_forward(gi_e, *rest)

    def feeding_backward(self, grad: torch.Tensor, *rest: torch.Tensor) -> Any:
        return self._for(grad).feeding_backward(grad, *rest)


def build(verbose: bool = False) -> Path:
    """Compile csrc/ into :func:`build_dir` (under a minute on 2 cores)."""
    from torch.utils.cpp_extension import load as compile_and_load

    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    compile_and_load(
        NAME,
        [str(source) for source in SOURCES],
        extra_cflags=FLAGS,
        build_directory=str(folder),
        verbose=verbose,
    )
    load.cache_clear()
    return folder


def main() -> int:
    """Build for ``make install``; without a compiler, say so and go on (the
    Python loops work everywhere)."""
    why = unsupported()
    if why is not None:
        print(f"seq2seq: not building the compiled loops: {why}")
        return 0
    start = time.perf_counter()
    try:
        folder = build()
    except (RuntimeError, OSError, SystemExit) as err:
        line = str(err).strip().splitlines()[-1:] or ["unknown error"]
        print(
            f"seq2seq: could not build the compiled loops ({line[0]}); the "
            "Python loops will be used"
        )
        return 0
    print(
        f"seq2seq: compiled loops built in {time.perf_counter() - start:.0f} s "
        f"into {folder}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
