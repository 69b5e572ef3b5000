"""The ``seq2seq`` command: prepare, train, evaluate, score, compare,
translate, experiment, probe, explore. Its options are in parser.py, what
each command does in commands.py."""

from __future__ import annotations

import sys

from seq2seq.cli.parser import RANGES, check_numbers, parser
from seq2seq.errors import exit_status

__all__ = ["RANGES", "main", "parser"]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        check_numbers(args)
        args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        status = exit_status(err, args.debug)
        if status is None:
            raise
        return status
    return 0
