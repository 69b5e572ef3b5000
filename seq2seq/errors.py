"""User-facing errors.

Anything the user can fix (a bad corpus file, config key, CLI argument,
checkpoint) raises :class:`UserError`. The CLI prints its one-line message and
exits with status 2, without a traceback (``--debug`` shows it).
"""


class UserError(Exception):
    """An error caused by the user's input, with a message that says what to do."""
