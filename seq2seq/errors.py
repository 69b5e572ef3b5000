"""User-facing errors.

Anything the user can fix (a bad corpus file, config key, CLI argument,
checkpoint) raises :class:`UserError`. The CLI prints its one-line message and
exits with status 2, without a traceback (``--debug`` shows it); the scripts
in ``scripts/`` do the same through :func:`run_script`.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable


class UserError(Exception):
    """An error caused by the user's input, with a message that says what to do."""


class SettingError(UserError):
    """Bad input named by the setting it came from, in the words of whoever
    set it. Code below the CLI knows the setting (``beam``), not how it was
    given: ``template`` writes each setting as ``{beam}``, and the message
    reads ``beam`` to a caller of the library (``str``), ``--beam`` where the
    CLI or a script reports it (:meth:`as_option`, :func:`exit_status`).
    Values in the template go through :func:`literal`."""

    def __init__(self, template: str) -> None:
        self.template = template
        super().__init__(self.worded(str))

    def worded(self, spell: Callable[[str], str]) -> str:
        return self.template.format_map(_Spelled(spell))

    def __reduce__(self) -> tuple[type[SettingError], tuple[str]]:
        return SettingError, (self.template,)  # pickled and copied as made

    def as_option(self) -> str:
        """The message with each setting as its command-line option."""
        return self.worded(lambda name: "--" + name.replace("_", "-"))


class _Spelled(dict[str, str]):
    def __init__(self, spell: Callable[[str], str]) -> None:
        super().__init__()
        self.spell = spell

    def __missing__(self, name: str) -> str:
        return self.spell(name)


def worded(err: Exception) -> str:
    """``err``'s message as the lab's command line tells it: a setting by its
    option (the CLI, the scripts and the explorer's page it serves)."""
    return err.as_option() if isinstance(err, SettingError) else str(err)


def literal(value: object) -> str:
    """``value`` as text inside a :class:`SettingError` template (its braces
    kept as they are)."""
    return str(value).replace("{", "{{").replace("}", "}}")


HINTS = {
    errno.ENOSPC: "free some disk space and run again",
    errno.EACCES: "check its permissions",
    errno.EPERM: "check its permissions",
    errno.EROFS: "choose a writable place",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "check the path",
    errno.EISDIR: "name a file, not a folder",
}


def os_error(err: OSError) -> str:
    """One line for a file the system refused (permissions, a full disk, a
    folder that is gone): the path, the reason, what to do."""
    where = "a file" if err.filename is None else str(err.filename)
    if err.filename2 is not None:  # a rename: both ends
        where += f" -> {err.filename2}"
    default = "check the path and its permissions"
    hint = default if err.errno is None else HINTS.get(err.errno, default)
    return f"{where}: {err.strerror or err}; {hint}"


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (its type when it has none),
    for errors that must stay one line."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def out_of_memory(err: BaseException) -> bool:
    """An allocation the machine could not meet: Python's MemoryError, torch's
    CPU allocator ("can't allocate memory") or CUDA's OutOfMemoryError."""
    text = str(err)
    return isinstance(err, MemoryError) or (
        isinstance(err, RuntimeError)
        and ("can't allocate memory" in text or "out of memory" in text)
    )


def exit_status(err: Exception, debug: bool = False) -> int | None:
    """End a command on ``err`` the user can act on: print its one line (after
    the traceback with ``debug``; nothing for a reader that went away, as in
    ``seq2seq translate ... | head``) and return the exit status; None for
    anything else (a bug: let it raise)."""
    if isinstance(err, BrokenPipeError):
        # what is left goes to /dev/null, so that Python's exit does not complain
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    oom = out_of_memory(err)
    if not (oom or isinstance(err, UserError | OSError)):
        return None
    if debug:
        traceback.print_exc()
    if oom:
        line = (
            f"out of memory ({first_line(err)[:120]}); lower train.batch_tokens, "
            "the model's sizes, --beam or --batch-size"
        )
    else:
        line = os_error(err) if isinstance(err, OSError) else worded(err)
    print(f"error: {line}", file=sys.stderr)
    return 2


def run_script(main: Callable[[], object]) -> None:
    """Run a script's ``main``: a :class:`UserError` (or a file the system
    refused) ends it as in the CLI, with one line on stderr and exit status 2,
    without a traceback."""
    try:
        main()
    except Exception as err:
        status = exit_status(err)
        if status is None:
            raise
        sys.exit(status)
