"""Every shell snippet of the README and the data READMEs, as a reader would
type it: the ones that run offline in seconds run (`--help`, imports,
`prepare synth_ende`), each in a fresh folder; the others (trainings,
downloads, servers) are checked as far as that can be done without running
them: the make target exists, the `seq2seq` command line parses, the script
is there. A moved module or a renamed option fails here, not in a reader's
terminal. A snippet of a kind this runner does not know fails too."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq import cli

PAGES = [REPO / "README.md", *sorted((REPO / "data").glob("*/README.md"))]
SHELL = re.compile(r"^```(?:bash|sh)\n(.*?)^```", re.M | re.S)
ENV = re.compile(r"^\w+=\S*$")  # VAR=value before a command
PYTHONS = ("python", "python3", ".venv/bin/python")
OUTSIDE = ("ssh", "source", "tensorboard", ".venv/bin/tensorboard")  # not ours


def commands(page: Path) -> list[list[str]]:
    """The page's shell commands as words: continuations joined, comments and
    leading VAR=value assignments dropped."""
    out = []
    for block in SHELL.findall(page.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and ENV.match(words[0]):
                words = words[1:]
            if words:
                out.append(words)
    return out


SNIPPETS = [(page, words) for page in PAGES for words in commands(page)]


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([\w-]+):", text, re.M))


def run(words: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=300)


def offline_in_seconds(args: list[str]) -> bool:
    """The `seq2seq` commands this runner executes: help, the shipped corpus."""
    return "--help" in args or args[:2] == ["prepare", "synth_ende"]


def check(words: list[str], tmp: Path) -> None:
    """Run the snippet or check what can be checked of it; fail if its kind
    is unknown."""
    head, rest = words[0], words[1:]
    if head == "make":
        assert rest and rest[0] in make_targets(), f"no make target {rest[:1]}"
    elif head in OUTSIDE:
        pass  # another program's command line
    elif head in ("seq2seq", ".venv/bin/seq2seq"):
        seq2seq = [sys.executable, "-m", "seq2seq"]
        if offline_in_seconds(rest):
            done = run([*seq2seq, *rest], tmp)
            assert done.returncode == 0, done.stderr[-2000:]
        else:
            cli.parser().parse_args(rest)  # exits 2 on an unknown option
    elif head in PYTHONS and rest[:1] == ["-c"]:
        done = run([sys.executable, *rest], tmp)
        assert done.returncode == 0, done.stderr[-2000:]
    elif head in (*PYTHONS, "bash"):
        script = REPO / rest[0]
        assert script.is_file(), f"no {rest[0]}"
        if head != "bash":
            done = run([sys.executable, str(script), "--help"], REPO)
            assert done.returncode == 0, done.stderr[-2000:]
    else:
        pytest.fail(f"a snippet this runner does not know: {shlex.join(words)}")


@pytest.mark.parametrize(
    ("page", "words"),
    SNIPPETS,
    ids=[f"{p.parent.name}/{p.name}:{shlex.join(w)[:50]}" for p, w in SNIPPETS],
)
def test_the_snippet_works(page: Path, words: list[str], tmp_path: Path) -> None:
    check(words, tmp_path)


def test_the_pages_have_snippets() -> None:
    for page in PAGES:
        assert commands(page), f"{page}: no shell snippet found"


def test_a_moved_module_or_an_unknown_option_fails(tmp_path: Path) -> None:
    moved = ["python", "-c", "from seq2seq.synth import write_corpus"]
    with pytest.raises(AssertionError, match="No module named 'seq2seq.synth'"):
        check(moved, tmp_path)
    with pytest.raises(SystemExit):
        check(["seq2seq", "train", "--no-such-option"], tmp_path)
    with pytest.raises(AssertionError, match="no make target"):
        check(["make", "no-such-target"], tmp_path)
    with pytest.raises(pytest.fail.Exception):
        check(["curl", "https://example.org"], tmp_path)
