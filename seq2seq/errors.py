"""User-facing errors.

Anything the user can fix (a bad corpus file, config key, CLI argument,
checkpoint) raises :class:`UserError`. The CLI prints its one-line message and
exits with status 2, without a traceback (``--debug`` shows it); the scripts
in ``scripts/`` do the same through :func:`run_script`.
"""

import sys
from collections.abc import Callable


class UserError(Exception):
    """An error caused by the user's input, with a message that says what to do."""


def os_error(err: OSError) -> str:
    """One line for a file the system refused (permissions, a full disk, a
    folder that is gone): the path, the reason, what to do."""
    where = err.filename if err.filename is not None else "a file"
    why = err.strerror or str(err)
    return f"{where}: {why}; check the path and its permissions"


def run_script(main: Callable[[], object]) -> None:
    """Run a script's ``main``: a :class:`UserError` (or a file the system
    refused) ends it as in the CLI, with one line on stderr and exit status 2,
    without a traceback."""
    try:
        main()
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except OSError as err:
        print(f"error: {os_error(err)}", file=sys.stderr)
        sys.exit(2)
