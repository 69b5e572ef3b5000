"""Writing files so that a failure loses nothing and names the file.

A full disk, a folder gone read-only or a crash can stop any write. Every file
the lab writes goes through here: a whole file is written to a temporary file
beside the old one, synced, then renamed over it, so the old version stays
intact until the new one is complete and no temporary file outlives an error;
a history line is appended whole or not at all. A path the user names for an
output is checked first (:func:`check_output`): it may not be one of the
command's inputs, nor lie inside a run folder. The error always names the
file: an OSError raised mid-write (a full disk) carries no file name of its
own, and torch's checkpoint writer turns it into a RuntimeError, so a
checkpoint is serialised in memory first and written here like any file.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from seq2seq import run
from seq2seq.errors import SettingError, UserError, literal

UMASK = os.umask(0)
os.umask(UMASK)


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """An OSError inside the block that names no file names ``path``."""
    try:
        yield
    except OSError as err:
        if err.filename is None:
            raise OSError(err.errno, err.strerror or str(err), str(path)) from None
        raise


def atomic_write(path: Path, data: bytes | memoryview | str) -> None:
    """``path`` holds ``data`` (text as UTF-8), or is as it was before."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # A name of its own: two processes may write the same file at once (two
    # trainings filling the vocabulary cache), and each rename must find its
    # own temporary file; the last one in wins, whole.
    with naming(path):
        fd, name = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
        )
    tmp = Path(name)
    try:
        os.fchmod(fd, 0o666 & ~UMASK)  # as open() would make it, not mkstemp's 0600
        with naming(path), os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        with naming(path):
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)  # make the rename itself durable


def append_line(path: Path, line: str) -> None:
    """Append one line; on failure the file is cut back to what it held, so it
    never ends in half a line."""
    path = Path(path)
    with naming(path), open(path, "ab") as f:
        size = f.tell()
        try:
            f.write(line.rstrip("\n").encode("utf-8") + b"\n")
            f.flush()
        except BaseException:
            f.truncate(size)
            raise


def save_torch(payload: dict[str, Any], path: Path) -> None:
    """``torch.save`` through :func:`atomic_write`."""
    import torch

    buffer = io.BytesIO()
    with naming(path):
        torch.save(payload, buffer)
    atomic_write(path, buffer.getbuffer())


def save_figure(fig: Any, path: Path, **kwargs: Any) -> None:
    """A matplotlib figure as PNG (or whatever ``path``'s suffix says)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format=Path(path).suffix.lstrip(".") or "png", **kwargs)
    atomic_write(path, buffer.getvalue())


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # e.g. platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def quiet_event_writer_threads() -> None:
    """TensorBoard writes its event file from a thread; when a write fails
    (a full disk) the thread prints a traceback and the next call from the
    main thread raises the same error, which the lab then reports in one line
    naming the file. Only that thread's traceback is silenced."""
    if getattr(threading.excepthook, "_seq2seq", False):
        return
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if type(args.thread).__name__ == "_AsyncWriterThread":
            return  # re-raised in the main thread by the writer's next call
        previous(args)

    hook._seq2seq = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def check_output(
    out: Path,
    option: str,
    inputs: Iterable[tuple[str, Path]] = (),
    folder: bool = False,
) -> None:
    """Refuse, before anything is written, an output the user named that would
    destroy what the command reads or what training made: the same file or
    folder as one of ``inputs`` ((what it is, its path), links followed, a
    hard link too), a ``folder`` the command writes files into that holds an
    input, or a place inside a run folder (its checkpoints, vocabularies and
    history are written by the lab's own commands only). ``option`` names
    where ``out`` came from: the CLI's ``--plot``, or a setting as a
    :class:`SettingError` template (``{out}``) from below the CLI."""
    here = resolved(out, option)
    for what, path in inputs:
        there = resolved(path, option)
        same = here == there or (
            here.exists() and there.exists() and os.path.samefile(here, there)
        )
        if same or (folder and there.is_relative_to(here)):
            verb = "is" if same else "holds"
            raise SettingError(
                f"{option} {literal(out)}: refused, nothing written: it {verb} "
                f"{what} ({literal(path)}); name another path"
            )
    if (owner := run.enclosing_run(here)) is not None:
        raise SettingError(
            f"{option} {literal(out)}: refused, nothing written: it lies in the run "
            f"folder {literal(owner)}, which only the lab's commands write; name a "
            "path outside it"
        )


def resolved(path: Path, option: str) -> Path:
    """``path`` with every link followed; a loop of links is the user's error."""
    try:
        return Path(path).resolve()
    except RuntimeError:  # Python 3.11: "Symlink loop from ..."
        raise SettingError(
            f"{option} {literal(path)}: a loop of symbolic links; name another path"
        ) from None


CACHE_ENV = "SEQ2SEQ_CACHE_DIR"
_HELD: set[Path] = set()  # the lock files this process holds


def cache_dir() -> Path:
    """The project's own cache (vocabularies, locks): ``$SEQ2SEQ_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/seq2seq``, else ``~/.cache/seq2seq``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "seq2seq"


def lock_file(folder: Path, role: str = "") -> Path:
    """Where :func:`exclusive` keeps ``folder``'s lock (and :func:`reading`
    its readers', ``role`` "readers"): in the cache, named by the folder's
    real path, so that it exists before the folder does and outlives
    deleting and remaking it (``--overwrite``). A file's path names a lock
    of its own the same way."""
    key = hashlib.sha256(str(resolved(folder, "folder")).encode()).hexdigest()
    return cache_dir() / "locks" / f"{key[:24]}{'.' + role if role else ''}.lock"


def open_lock(path: Path, folder: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as err:
        raise UserError(
            f"{path}: cannot make the lock that keeps {folder} to one process "
            f"({err.strerror}); set {CACHE_ENV} to a writable folder"
        ) from None


@contextmanager
def exclusive(folder: Path, doing: str, take: bool = True) -> Iterator[None]:
    """Hold ``folder`` for this process while the block runs: a second process
    that asks for it is refused with one line naming the holder. The lock is
    the kernel's (flock), released when the process ends, however it ends
    (SIGKILL included), so a stale lock file never blocks anyone. ``take``
    False holds nothing (the other ranks of a distributed run); a folder this
    process holds already is held again at no cost (evaluate inside compare)."""
    path = lock_file(folder)
    if not take or path in _HELD:
        yield
        return
    fd = open_lock(path, folder)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                f"{folder}: {holder(fd)} is using it; wait for that process to "
                "end (or stop it), then run this again"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {doing}\n{Path(folder).absolute()}\n".encode())
        _HELD.add(path)
        try:
            yield
        finally:
            _HELD.discard(path)
    finally:
        os.close(fd)  # releases the lock


def reading(run_dir: Path) -> AbstractContextManager[None]:
    """Read ``run_dir`` (and write files of one's own into it) beside its
    training: evaluate and probe hold this shared lock, any number at once,
    and :func:`deleting` refuses to delete the folder meanwhile. The files
    a reader writes are held apart (:func:`exclusive` on each file's path):
    training replaces its checkpoints whole (atomic_write), so a reader
    loads the one before or the one after, never half of one."""
    refused = UserError(
        f"{run_dir}: being deleted and made anew (seq2seq train --overwrite); "
        "run this again once its training has begun"
    )
    return _readers(run_dir, fcntl.LOCK_SH, refused)


def deleting(run_dir: Path) -> AbstractContextManager[None]:
    """Hold off :func:`reading` while ``run_dir`` is deleted; refused while
    an evaluation or a probe reads it."""
    refused = SettingError(
        f"{{overwrite}} {literal(run_dir)}: refused, nothing deleted: a seq2seq "
        "evaluate or probe is reading it; wait for it to end, then run this again"
    )
    return _readers(run_dir, fcntl.LOCK_EX, refused)


@contextmanager
def _readers(run_dir: Path, how: int, refused: UserError) -> Iterator[None]:
    """The readers' lock of ``run_dir`` held ``how`` (shared or exclusive)
    for the block, or ``refused`` at once."""
    fd = open_lock(lock_file(run_dir, "readers"), run_dir)
    try:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            raise refused from None
        yield
    finally:
        os.close(fd)


def holder(fd: int) -> str:
    """'process 123 (seq2seq train)' from a lock file's contents."""
    text = os.pread(fd, 512, 0).decode("utf-8", "replace").split("\n")[0]
    pid, _, doing = text.partition(" ")
    return f"process {pid} ({doing})" if pid.isdigit() else "another process"


def busy(folder: Path) -> str:
    """Who holds ``folder`` (as :func:`holder` says it), '' when nobody."""
    path = lock_file(folder)
    if not path.is_file():
        return ""
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return holder(fd)
        return ""
    finally:
        os.close(fd)
