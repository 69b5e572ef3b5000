"""The README and docs/: every relative link and image points at a file that
exists (and at a heading that exists, for links with #anchors); the README
stays a front door."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest
from conftest import REPO

from seq2seq import cli

spec = importlib.util.spec_from_file_location(
    "cli_options", REPO / "scripts" / "cli_options.py"
)
cli_options = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cli_options)

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`[^`\n]*`")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped (letters,
    digits, spaces, hyphens and underscores kept), spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    kept = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor, with GitHub's -1, -2 ... for repeated ones."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for line in text.splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            out.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    return out


def links(page: Path) -> list[str]:
    """Link and image targets outside code blocks and inline code."""
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return LINK.findall(text)


def broken(page: Path) -> list[str]:
    problems = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            problems.append(f"{target}: no heading #{anchor} in {file.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_link_and_image_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A `code` heading: yes\n## Twice\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n[ok](other.md#a-code-heading-yes) [ok](other.md#twice-1) [ok](#top)\n"
        "![gone](images/gone.png) [gone](nope.md) [bad](other.md#nothing)\n"
        "`[not a link](nowhere.md)`\n```\n[in code](nowhere.md)\n```\n"
        "[web](https://example.org/x)\n"
    )
    assert broken(page) == [
        "images/gone.png: no such file",
        "nope.md: no such file",
        "other.md#nothing: no heading #nothing in other.md",
    ]


def test_the_readme_is_a_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    images = [t for t in links(REPO / "README.md") if t.endswith(".png")]
    assert len(images) >= 2  # the demo's plot and a heatmap at least
    linked = {Path(t.partition("#")[0]).name for t in links(REPO / "README.md")}
    missing = {p.name for p in PAGES[1:]} - linked
    assert not missing, f"docs pages the README does not link: {missing}"


def mentions(text: str, name: str) -> bool:
    """``name`` as a whole option (``--out`` is not found in ``--output``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_cli_md_lists_every_option_of_every_command() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    reference = text[text.index("## Every option") :]
    missing = []
    for path, parser in cli_options.commands(cli.parser()):
        start = reference.find(f"### `{path}`")
        if start < 0:
            missing.append(path)
            continue
        end = reference.find("\n### ", start + 1)
        section = reference[start : end if end > 0 else None]
        for action in parser._actions:
            names = action.option_strings or [action.dest.upper()]
            if not isinstance(action, argparse._HelpAction):
                missing += [f"{path} {n}" for n in names if not mentions(section, n)]
    assert missing == [], "regenerate it: python scripts/cli_options.py"
