"""Print docs/cli.md's "Every option" section from the command's parser.

    python scripts/cli_options.py   # then paste over the section in docs/cli.md

tests/test_docs.py checks that the section names every option of every command.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from seq2seq.cli import parser

HEAD = """## Every option

Generated from the parser by `python scripts/cli_options.py` (`seq2seq
COMMAND --help` prints the same);
`--debug`, before the command, shows a traceback instead of the one-line
error.
"""


def commands(
    p: argparse.ArgumentParser, path: str = "seq2seq"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command path, its parser) for every leaf command."""
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, p
        return
    for name, sub in subs[0].choices.items():
        yield from commands(sub, f"{path} {name}")


def row(a: argparse.Action) -> str:
    if a.option_strings:
        name = ", ".join(a.option_strings)
        if a.choices:
            name += " {" + ",".join(map(str, a.choices)) + "}"
        elif a.nargs != 0:
            name += " " + (a.metavar or a.dest.upper())
        shown = a.default not in (None, False, [])
        default = f"`{a.default}`" if shown else ""
    else:
        name = a.dest.upper() + (" ..." if a.nargs == "+" else "")
        default = ""
    return f"| `{name}` | {a.help or ''} | {default} |"


def main() -> None:
    print(HEAD)
    for path, p in commands(parser()):
        print(f"### `{path}`\n")
        print("| option | what it does | default |\n|---|---|---|")
        for action in p._actions:
            if not isinstance(action, argparse._HelpAction):
                print(row(action))
        print()


if __name__ == "__main__":
    main()
