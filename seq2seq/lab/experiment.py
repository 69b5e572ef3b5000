"""``seq2seq experiment FILE.yaml``: train a list of configs alike, then compare.

An experiment file names the configs, the seeds, the overrides every run gets
(the shared budget, e.g. ``train.max_steps=2000``) and where the runs go::

    name: bottleneck_synth_ende
    configs: [configs/synth_ende/none.yaml, configs/synth_ende/additive.yaml]
    seeds: [1]
    overrides: [train.max_steps=2000]
    jobs: 2          # trainings at a time, one CPU thread each
    splits: [test, test_joined]   # evaluated and compared, first one first

Run ``<runs_dir>/<name>/<config stem>-s<seed>`` is skipped when its training
finished and every split's ``eval_<split>.json`` scores its ``best.pt`` as it is
now, only evaluated when its training finished, and continued with ``train
--resume`` when its ``last.pt`` is from an interrupted training (an evaluation
made meanwhile is redone after it), so a killed experiment resumes where it
stopped. Ctrl-C, SIGTERM or SIGHUP stops the running trainings too
(``last.pt`` is written atomically, so each continues from its last
checkpoint). The comparison of the first split goes to
``<runs_dir>/<name>/compare/``, that of any further split to
``compare_<split>/``. ``--only NAME`` (a config stem such as ``hard``, or a
run folder such as ``hard-s42``; repeatable) runs those runs alone, and
compares only once every run is done.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path

from seq2seq import run
from seq2seq.config import Config, check_run_name, load_config
from seq2seq.data.joined import base_split
from seq2seq.errors import UserError
from seq2seq.files import busy, exclusive
from seq2seq.lab.compare import TABLE, compare
from seq2seq.lab.evaluate import saved_evaluation
from seq2seq.results import CompareRow, TrainingState
from seq2seq.training.checkpoint import config_differences, load_checkpoint, lookup
from seq2seq.typed_yaml import build, read_yaml, to_dict

MAX_JOBS = 1024  # trainings at a time: far beyond any machine's cores
MAX_SEEDS = 1000  # runs per config


@dataclass(frozen=True)
class Experiment:
    name: str
    configs: tuple[str, ...]
    seeds: tuple[int, ...] = (1,)
    overrides: tuple[str, ...] = ()  # --set items every run gets
    runs_dir: str = "runs/experiments"
    splits: tuple[str, ...] = ("test",)
    jobs: int = 2

    def __post_init__(self) -> None:
        check_run_name(self.name, "name")
        if not self.configs:
            raise UserError("config key 'configs': name at least one config")
        if not self.splits:
            raise UserError("config key 'splits': name at least one split")
        for split in self.splits:
            if base_split(split)[0] not in ("val", "test"):
                raise UserError(
                    f"config key 'splits': {split!r} is not a split; use val, "
                    "test, val_joined or test_joined"
                )
        if not 1 <= len(self.seeds) <= MAX_SEEDS:
            raise UserError(f"config key 'seeds': name 1 to {MAX_SEEDS} seeds")
        if twice := sorted({s for s in self.seeds if self.seeds.count(s) > 1}):
            raise UserError(f"config key 'seeds': seed {twice[0]} is named twice")
        if not 1 <= self.jobs <= MAX_JOBS:
            raise UserError(f"config key 'jobs': must be in [1, {MAX_JOBS}]")

    @property
    def root(self) -> Path:
        return Path(self.runs_dir) / self.name


@dataclass
class Job:
    config: Path
    seed: int
    run_dir: Path
    args: list[str] = field(default_factory=list)

    def evaluated(self, split: str) -> bool:
        """Whether ``eval_<split>.json`` scores the run's best.pt as it is now
        (an evaluation made while it trained does not count)."""
        return saved_evaluation(self.run_dir, split) is not None

    def done(self, splits: Sequence[str]) -> bool:
        """Trained to the end (or its checkpoints deleted), every split scored."""
        return self.training() != "interrupted" and all(map(self.evaluated, splits))

    def training(self) -> str:
        """``finished``, ``interrupted`` (a last.pt to resume) or ``new``. A
        last.pt that cannot be read stops the experiment: training anew would
        delete the run folder, and what is in it may be worth keeping."""
        path = run.checkpoint_file(self.run_dir, "last")
        if not path.is_file():
            return "new"
        try:
            payload = load_checkpoint(path, mmap=True)  # no tensors read
            state = TrainingState.from_dict(payload["state"])
        except (UserError, KeyError, TypeError):
            raise UserError(
                f"{path}: cannot be read as a checkpoint, and training anew would "
                "delete its folder; move the folder away (or restore the file) "
                "and run again"
            ) from None
        return "finished" if state.finished else "interrupted"

    def resolved(self) -> Config:
        """This job's config as ``train`` will read it (file, overrides, seed)."""
        return load_config(
            self.config, [a for k, a in pairwise(self.args) if k == "--set"]
        )

    def check(self, splits: Sequence[str]) -> None:
        """Its config is valid and has the files every split scores."""
        cfg = self.resolved()
        if cfg.data.test is None and (missing := [s for s in splits if "test" in s]):
            raise UserError(
                f"{self.config}: the experiment scores {missing[0]}, but this "
                "config has no data.test; add it or drop the split"
            )

    def stale(self) -> str | None:
        """The first setting in which the run folder's config.yaml differs
        from what this job would train (the experiment file or a config was
        edited since), as a one-line reason; None when it matches or is new.
        Both are read through the schema, so keys added since take defaults."""
        saved = run.config_file(self.run_dir)
        if not saved.is_file():
            return None
        want = to_dict(self.resolved())
        have = to_dict(load_config(saved))
        diff = config_differences(have, want)
        if not diff:
            return None
        key = diff[0]
        return f"{key} is {lookup(have, key)!r} there, {lookup(want, key)!r} now"


def load_experiment(path: str | Path, root: Path | None = None) -> Experiment:
    """An experiment file, validated. Its relative paths (configs, runs_dir)
    are read from ``root`` when given (the lesson's checkout, seen from a
    notebook's folder), else from the working folder, as the CLI reads them."""
    path = Path(path)
    raw = read_yaml(path)  # its errors already name the file
    try:
        exp = build(Experiment, raw, "")
    except UserError as err:
        raise UserError(f"{path}: {err}") from None
    if root is not None:  # an absolute path stays as it is
        configs = tuple(str(root / c) for c in exp.configs)
        exp = replace(exp, configs=configs, runs_dir=str(root / exp.runs_dir))
    for config in exp.configs:
        if not Path(config).is_file():
            raise UserError(f"{path}: config {config} not found")
    return exp


def plan(exp: Experiment) -> list[Job]:
    jobs: list[Job] = []
    for config in map(Path, exp.configs):
        for seed in exp.seeds:
            run_dir = exp.root / f"{config.stem}-s{seed}"
            args = [
                "--config",
                str(config),
                "--overwrite",
                "--set",
                f"runs_dir={exp.root}",
                "--set",
                f"name={run_dir.name}",
                "--set",
                f"train.seed={seed}",
            ]
            for item in exp.overrides:
                args += ["--set", item]
            if any(job.run_dir == run_dir for job in jobs):
                raise UserError(
                    f"configs: two configs named {config.name} would share the run "
                    f"folder {run_dir}; rename one of them"
                )
            jobs.append(Job(config, seed, run_dir, args))
    return jobs


def select(jobs: list[Job], only: Sequence[str]) -> list[Job]:
    """The jobs named in ``only`` by config stem or run folder (all if empty)."""
    if not only:
        return jobs
    names = {n for job in jobs for n in (job.config.stem, job.run_dir.name)}
    if unknown := [name for name in only if name not in names]:
        choices = ", ".join(sorted(names))
        raise UserError(
            f"--only {unknown[0]}: not a run of this experiment ({choices})"
        )
    return [j for j in jobs if {j.config.stem, j.run_dir.name} & set(only)]


def commands(job: Job, splits: Sequence[str], progress: str = "auto") -> str:
    """Shell command that trains the job (unless finished, or its checkpoints
    deleted and a split scored), resuming an interrupted training, then
    evaluates every split not scored on the final best.pt.
    ``progress`` is train's ``--progress`` (``log`` when runs share a terminal)."""
    seq2seq = [sys.executable, "-m", "seq2seq"]
    shown = ["--progress", progress]
    state = job.training()
    if state == "new" and any(map(job.evaluated, splits)):
        state = "finished"  # last.pt deleted: the saved results stand
    steps = {
        "finished": [],
        "interrupted": [[*seq2seq, "train", "--resume", str(job.run_dir), *shown]],
        "new": [[*seq2seq, "train", *job.args, *shown]],
    }[state]
    steps += [
        [*seq2seq, "evaluate", str(job.run_dir), "--split", split]
        for split in splits
        if steps or not job.evaluated(split)  # training writes a new best.pt
    ]
    return " && ".join(map(shlex.join, steps))


# Each job runs in its own session (process group), so these reach only this
# process, which passes them on to the jobs; Ctrl-C (SIGINT) is KeyboardInterrupt.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def run_jobs(jobs: list[Job], splits: Sequence[str], parallel: int) -> None:
    """Train and evaluate each job in a subprocess, ``parallel`` at a time: a
    new job starts as soon as any running one ends. After a failure no new job
    starts; those running are let finish, then the failure is reported. Stopped
    itself (Ctrl-C, SIGTERM, SIGHUP), it stops the running jobs, then raises
    KeyboardInterrupt."""
    env = os.environ | ({"OMP_NUM_THREADS": "1"} if parallel > 1 else {})
    progress = "log" if parallel > 1 else "auto"
    # Every job's command before any starts: a run that cannot be read stops
    # the experiment here, not with other jobs already running.
    pending = [(job, commands(job, splits, progress)) for job in jobs]
    running: list[tuple[Job, subprocess.Popen]] = []
    failed: list[Job] = []
    try:
        with _handling(STOP_SIGNALS, _raise_interrupt):
            while running or (pending and not failed):
                while pending and not failed and len(running) < parallel:
                    job, cmd = pending.pop(0)
                    # Own process group: a stop reaches the shell and its python.
                    proc = subprocess.Popen(
                        cmd, shell=True, env=env, start_new_session=True
                    )
                    running.append((job, proc))
                ended = [(j, p) for j, p in running if p.poll() is not None]
                if not ended:
                    time.sleep(0.5)
                for job, proc in ended:
                    running.remove((job, proc))
                    if proc.returncode != 0:
                        failed.append(job)
    except BaseException:  # Ctrl-C, a signal, or a job that could not start
        _stop([proc for _, proc in running])
        raise
    if failed:
        names = ", ".join(str(job.run_dir) for job in failed)
        raise UserError(f"{names}: training or evaluation failed (see above)")


@contextmanager
def _handling(
    signals: Sequence[int], handler: Callable[..., object] | int
) -> Iterator[None]:
    """``handler`` for ``signals`` inside the block, the previous ones after."""
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            if old is not None:  # None: set outside Python, cannot restore
                signal.signal(sig, old)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # stop the experiment as Ctrl-C does


def _stop(procs: list[subprocess.Popen], grace_s: float = 30.0) -> None:
    """SIGTERM each job's process group, SIGKILL what is left after ``grace_s``.
    A repeated Ctrl-C is ignored meanwhile so that no job is left running.
    (``last.pt`` survives either: checkpoints are written atomically.)"""
    with _handling([signal.SIGINT, *STOP_SIGNALS], signal.SIG_IGN):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for proc in procs:
                with suppress(ProcessLookupError):  # the whole group has ended
                    os.killpg(proc.pid, sig)
            deadline = time.monotonic() + grace_s
            while any(map(_group_alive, procs)) and time.monotonic() < deadline:
                time.sleep(0.1)
        for proc in procs:
            proc.wait()
    if procs:
        print(
            f"stopped {len(procs)} running job(s); run the same command again to "
            "continue them, each from its last checkpoint",
            file=sys.stderr,
        )


def _group_alive(proc: subprocess.Popen) -> bool:
    proc.poll()  # reap the shell if it has ended
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return False
    return True


def experiment(
    path: Path, jobs: int | None = None, only: Sequence[str] = ()
) -> dict[str, list[CompareRow]]:
    """Run what is missing, then compare; the comparison of each split (none
    while a run left out by ``only`` is not done). ``jobs`` overrides the
    file's; with more than one job at a time every training gets one CPU thread
    (two 2-thread trainings on 2 cores would oversubscribe them several times
    over)."""
    exp = load_experiment(path)
    if jobs is not None:
        if not 1 <= jobs <= MAX_JOBS:
            raise UserError(f"--jobs {jobs}: must be in [1, {MAX_JOBS}]")
        exp = replace(exp, jobs=jobs)
    members = plan(exp)
    for job in members:  # every member, before any trains
        try:
            job.check(exp.splits)
        except UserError as err:
            raise UserError(f"{path}: {err}") from None
    chosen = select(members, only)
    for job in chosen:
        if reason := job.stale():
            raise UserError(
                f"{job.run_dir}: made with other settings ({reason}); move or "
                "delete that folder to retrain it, then run the experiment again"
            )
    exp.root.mkdir(parents=True, exist_ok=True)
    with exclusive(exp.root, f"seq2seq experiment {path}"):
        todo = [j for j in chosen if not j.done(exp.splits)]
        done = len(chosen) - len(todo)
        print(f"{exp.name}: {len(chosen)} runs, {done} already finished")
        run_jobs(free(todo), exp.splits, exp.jobs)  # raises if one fails
        if missing := [j.run_dir.name for j in members if not j.done(exp.splits)]:
            print(f"not compared: {', '.join(missing)} not done yet")
            return {}
        return compare_splits(exp, members)


def experiment_in(folder: Path, path: Path) -> None:
    """``seq2seq experiment PATH`` in a child process started in ``folder``,
    its output passed on line by line: what a terminal there would print,
    with the same run folders, configs and tables (the lesson runs the
    checkout's experiments from a notebook's folder this way). Stopped, it
    stops the child as Ctrl-C would, once (the child stops its jobs): the
    child has its own session, so a Ctrl-C or a kernel interrupt reaches it
    only through this. PYTHONSAFEPATH keeps ``folder`` off the children's
    import path, so they run the package this process runs (an installed
    wheel, say), not the source that lies in ``folder``."""
    path = Path(path).resolve()  # the child starts elsewhere
    command = [sys.executable, "-m", "seq2seq", "experiment", str(path)]
    child = subprocess.Popen(
        command,
        cwd=folder,
        env=os.environ | {"PYTHONSAFEPATH": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert child.stdout is not None
    try:
        _relay(child.stdout)
    except BaseException:
        child.send_signal(signal.SIGINT)  # once; it then stops its jobs
        # its last lines say what it stopped; a second Ctrl-C must not cut them
        ignoring = (
            [signal.SIGINT]
            if threading.current_thread() is threading.main_thread()
            else []
        )
        with _handling(ignoring, signal.SIG_IGN):
            _relay(child.stdout)
            child.wait()
        raise
    if child.wait() != 0:
        raise UserError(f"{path}: seq2seq experiment failed in {folder} (see above)")


def _relay(lines: Iterable[str]) -> None:
    for line in lines:
        print(line, end="", flush=True)


def free(jobs: list[Job]) -> list[Job]:
    """The jobs no other process holds; each one held is skipped, saying so
    (a `train --resume` of it in another terminal, say)."""
    out = []
    for job in jobs:
        if who := busy(job.run_dir):
            print(
                f"{job.run_dir}: {who} is training it; skipped (run the "
                "experiment again when that process has ended)"
            )
        else:
            out.append(job)
    return out


def compare_splits(exp: Experiment, jobs: list[Job]) -> dict[str, list[CompareRow]]:
    """Every job compared on every split of the experiment."""
    results = {}
    for i, split in enumerate(exp.splits):
        out = exp.root / ("compare" if i == 0 else f"compare_{split}")
        results[split] = compare([j.run_dir for j in jobs], split, out, "cpu")
        print(f"\n{split}:\n{(out / TABLE).read_text()}wrote {out}/")
    return results
