"""More than one process: ``torchrun --nproc_per_node N -m seq2seq train ...``.

Every rank builds the same bucketed batch list (same seed) and takes every
N-th sentence of each batch, so the ranks never overlap and together they see
exactly the batch a single process would. DistributedDataParallel averages the
gradients; scaling each rank's loss by N / (the whole batch's target tokens)
makes that average the per-token mean over the whole batch. Only rank 0 logs,
validates and writes checkpoints; the others wait for its decisions.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

import torch
import torch.distributed as dist

from seq2seq.errors import UserError


@dataclass(frozen=True)
class Ranks:
    """This process's place among the training processes (1 when alone)."""

    rank: int = 0
    world: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def shard(self, index: list[int]) -> list[int]:
        """This rank's sentences of a batch: every ``world``-th one."""
        return index[self.rank :: self.world]

    def any(self, flag: bool) -> bool:
        """True on every rank when it is True on any (stop decisions)."""
        if self.world == 1:
            return flag
        t = torch.tensor([int(flag)], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's ``obj``, in rank order (on every rank)."""
        if self.world == 1:
            return [obj]
        out: list[Any] = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    def wait(self) -> None:
        if self.world > 1:
            dist.barrier()


def init_ranks(device: torch.device) -> Ranks:
    """Join the process group torchrun describes in the environment (gloo on
    the CPU, nccl on CUDA), or run alone when there is none."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Ranks(device=device)
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        if local >= torch.cuda.device_count():
            raise UserError(
                f"LOCAL_RANK {local}: only {torch.cuda.device_count()} CUDA devices; "
                "lower --nproc_per_node"
            )
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Ranks(rank, world, device)


@contextmanager
def process_group(device: torch.device) -> Iterator[Ranks]:
    """The ranks for the block, and the process group left at its end. After
    a normal end every rank passes a barrier first: a gloo rank whose peer has
    already closed its sockets can abort at exit ("terminate called without
    an active exception": about one 2-process run in 12 without it). After an
    error the group is left at once, without waiting for the others."""
    ranks = init_ranks(device)
    try:
        yield ranks
        ranks.wait()
        if ranks.world > 1:
            LEFT_A_GROUP.append(ranks.rank)  # see end_process
    finally:
        close_ranks(ranks)


# The ranks this process left a group as, after a normal end (end_process).
LEFT_A_GROUP: list[int] = []


def end_process(status: int) -> NoReturn:
    """End the process with ``status``. One that has left a process group
    after its work (everything it writes closed, the barrier passed) ends
    without the interpreter's teardown (os._exit): destroying gloo's threads
    there can still abort ("terminate called without an active exception")
    or crash, with the barrier about one 2-process run in 15 on a loaded
    machine, and nothing is left to do that the teardown would do."""
    if LEFT_A_GROUP:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


def close_ranks(ranks: Ranks) -> None:
    if ranks.world > 1 and dist.is_initialized():
        dist.destroy_process_group()
