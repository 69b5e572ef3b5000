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

from seq2seq import cli, families, modes
from seq2seq.config import Config

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


config_reference = importlib.util.module_from_spec(
    s := importlib.util.spec_from_file_location(
        "config_reference", REPO / "scripts" / "config_reference.py"
    )
)
s.loader.exec_module(config_reference)


def test_the_config_reference_is_current() -> None:
    page = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    assert page == config_reference.page(), (
        "regenerate it: python scripts/config_reference.py"
    )
    for name, _, _, meaning in config_reference.rows(Config):
        assert meaning, f"{name} has no help text in seq2seq/config.py"


def test_config_md_names_every_field_of_every_section_of_every_family() -> None:
    """Walked from the dataclasses themselves, not from the script's rows: a
    section that is one of several (the model section, one dataclass per
    registered family) has every family's keys on the page."""
    import dataclasses
    import types
    import typing

    page = (REPO / "docs" / "config.md").read_text(encoding="utf-8")

    def keys(cls: type, prefix: str) -> list[str]:
        out = []
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            union = typing.get_origin(tp) in (typing.Union, types.UnionType)
            members = typing.get_args(tp) if union else (tp,)
            if sections := f.metadata.get("sections"):
                members = tuple(sections().values())
            nested = [m for m in members if dataclasses.is_dataclass(m)]
            if prefix == "data." and nested:
                out += [f"data.{{train,val,test}}.{k}" for k in ("src", "tgt", "align")]
            elif nested:
                out += [k for m in nested for k in keys(m, f"{prefix}{f.name}.")]
            else:
                out.append(prefix + f.name)
        return out

    missing = [k for k in keys(Config, "") if f"`{k}`" not in page]
    assert missing == [], "regenerate it: python scripts/config_reference.py"
    for family in families.registry():
        assert f"`model.family: {family}`" in page


COMMIT = re.compile(r"(?<![\w./,-])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d\d:\d\d UTC\b")
ISSUE = re.compile(r"\bissue #?\d+", re.IGNORECASE)


def test_every_registered_mode_is_in_the_readmes_table() -> None:
    """The README's table of modes (with their papers) is written by hand;
    docs/config.md's list is generated from the registry."""
    readme = (REPO / "README.md").read_text()
    table = readme.split("## The modes")[1].split("\n## ")[0]
    for name in modes.names():
        assert f"`{name}`" in table, f"README's table of modes lacks {name}"


def test_the_readmes_reading_path_is_the_whole_model_in_order() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Read the code")[1].split("\n## ")[0]
    names = re.findall(r"^\| \[(\w+\.py)\]\(seq2seq/model/\w+\.py\)", section, re.M)
    order = ["attention.py", "encoder.py", "decoder.py", "model.py", "search.py"]
    assert [n for n in names if n in order] == order
    modules = {p.name for p in (REPO / "seq2seq/model").glob("*.py")}
    assert modules - {"__init__.py"} == set(names)
    assert "| [fast/](seq2seq/model/fast/) |" in section  # after the reference


def test_the_readme_holds_no_history() -> None:
    """Commits, dates and machine names belong to docs/results.md's metadata
    lines; history is git log."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert COMMIT.findall(text) == []
    assert DATE.findall(text) == []
    for machine in ("EPYC", "Xeon", "Zen 3", "Zen 4", "VM"):
        assert not mentions(text, machine), machine


def test_the_docs_never_name_an_issue() -> None:
    pages = [*PAGES, *(REPO / "data").glob("*/README.md")]
    found = [f"{p.name}: {m}" for p in pages for m in ISSUE.findall(p.read_text())]
    assert found == []


def test_the_history_checks_find_what_they_look_for() -> None:
    assert COMMIT.findall("at 0889707, and e1152ae") == ["0889707", "e1152ae"]
    assert COMMIT.findall("1,391,444 params, 2048², deadbeef, 10,330,388") == []
    assert DATE.findall("on 2026-12-02 at 21:59 UTC") == ["2026-12-02", "21:59 UTC"]
    assert ISSUE.findall("as issue 18 asks, and Issue #3") == ["issue 18", "Issue #3"]


NOT_FIGURES = {"3.11"}  # the Python version
FIGURE = re.compile(r"(?<![\w.,])\d{1,3}\.\d+(?![\w.])")


def test_every_figure_in_the_readme_is_one_the_docs_give() -> None:
    """A figure stated twice must agree: each decimal figure in the README's
    results (outside the demo's printed output and commands) appears in the
    docs/ page that records it with its command."""
    readme = FENCE.sub("", (REPO / "README.md").read_text(encoding="utf-8"))
    docs = " ".join(p.read_text(encoding="utf-8") for p in PAGES[1:])
    docs += (REPO / "data" / "synth_ende" / "README.md").read_text(encoding="utf-8")
    stated = set(FIGURE.findall(CODE.sub("", readme))) - NOT_FIGURES
    missing = sorted(f for f in stated if not re.search(rf"(?<![\d.]){f}(?!\d)", docs))
    assert missing == [], f"README figures no docs page gives: {missing}"


CONFIG_FIGURE = re.compile(r"\b([a-z_]+)[ =:]+(\d[\d.e-]*)\b")


def leaves(raw: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in raw.items():
        if isinstance(v, dict):
            out.update(leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def comment_mismatches(path: Path) -> list[str]:
    """Comments that name a key with a number ("lr 2e-3", "max_steps: 2270")
    the config (with its base files, and an experiment's ``overrides``) does
    not set."""
    from seq2seq.typed_yaml import read_yaml

    raw = read_yaml(path)
    values = list(leaves(raw).items())
    values += [tuple(o.split("=", 1)) for o in raw.get("overrides", [])]
    by_name: dict[str, set[float]] = {}
    for k, v in values:
        try:
            by_name.setdefault(k.rsplit(".", 1)[-1], set()).add(float(v))
        except (TypeError, ValueError):
            pass
    wrong = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for name, number in CONFIG_FIGURE.findall(line.partition("#")[2]):
            if name in by_name and float(number.rstrip(".-")) not in by_name[name]:
                wrong.append(f"'{name} {number}' but it sets {sorted(by_name[name])}")
    return wrong


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "configs").rglob("*.yaml")),
    ids=lambda p: str(p.relative_to(REPO / "configs")),
)
def test_a_config_comment_agrees_with_the_values(path: Path) -> None:
    assert comment_mismatches(path) == []


def test_the_comment_check_finds_a_contradiction(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("train:\n  lr: 0.002  # lr 2e-3\n")
    top = tmp_path / "top.yaml"
    top.write_text(
        "# lr 1e-3, max_steps: 500, hidden_size 3\nbase: base.yaml\n"
        "train: {max_steps: 400}\noverrides: [model.x.hidden_size=3]\n"
    )
    assert comment_mismatches(top) == [
        "'lr 1e-3' but it sets [0.002]",
        "'max_steps 500' but it sets [400.0]",
    ]


def test_the_own_corpus_config_is_valid() -> None:
    """docs/own-corpus.md's complete config loads and validates as printed."""
    import yaml

    from seq2seq.config import config_from_dict

    text = (REPO / "docs" / "own-corpus.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.DOTALL).group(1)
    cfg = config_from_dict(yaml.safe_load(block))
    assert cfg.name == "mine/additive" and cfg.model.attention == "additive"


# A documented command: `seq2seq ...`, `make ...`, `python scripts/...` or
# `bash scripts/...`, in a code block or in inline code.
COMMAND = re.compile(
    r"^(?:\$ )?((?:seq2seq|make|python|bash) [^#`\n]*?)\s*(?:#.*)?$", re.MULTILINE
)


def commands(page: Path) -> list[str]:
    """Every command line a page shows: each line of a fenced block, and each
    inline code span, that starts with one of the project's entry points."""
    text = page.read_text(encoding="utf-8")
    found = []
    for block in FENCE.finditer(text):
        found += COMMAND.findall(block.group(0))
    inline = [c.strip("`") for c in CODE.findall(FENCE.sub("", text))]
    found += [c for c in inline if COMMAND.fullmatch(c)]
    return [c.rstrip("\\ ").strip() for c in found]


def command_problem(command: str, targets: set[str]) -> str | None:
    """Why a documented command would not run as written, or None: a
    seq2seq command the parser refuses, a config file that is not there or
    does not load, a make target the Makefile lacks, a script that is not
    there."""
    import shlex

    from seq2seq.config import load_config

    try:
        words = shlex.split(command)
    except ValueError:
        return None  # a fragment with an open quote: prose, not a command
    if words[0] == "make":
        missing = [w for w in words[1:] if "=" not in w and w not in targets]
        return f"no make target {missing}" if missing else None
    if words[0] in ("python", "bash"):
        script = next((w for w in words[1:] if w.endswith((".py", ".sh"))), None)
        if script and "/" in script and not (REPO / script).is_file():
            return f"no such script {script}"
        return None
    if any(ch in command for ch in "{}*$<>|[…") or "..." in command:
        return None  # a pattern (runs/*, {a,b}, $R, [--beam K], ...), not one
    if len(words) == 2 and not words[1].startswith("-"):  # `seq2seq train`
        known = cli.parser()._subparsers._group_actions[0].choices  # noqa: SLF001
        return None if words[1] in known else f"no command {words[1]!r}"
    if re.fullmatch(r"[A-Z]+", words[1]):  # `seq2seq COMMAND --help`
        return None
    # an upper-case placeholder (RUN, K, F) stands for a value: 1 parses as
    # a path, a count and a number alike
    words = ["1" if re.fullmatch(r"[A-Z][A-Z0-9_]*", w) else w for w in words]
    try:
        args = cli.parser().parse_args(words[1:])
    except SystemExit as done:
        return None if done.code == 0 else "the command line is refused"
    config = getattr(args, "config", None)
    if config is not None and str(config).startswith("configs/"):
        try:
            load_config(REPO / config, getattr(args, "set", None) or [])
        except Exception as err:  # noqa: BLE001 (any failure is the finding)
            return f"{config}: {err}"
    return None


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", text, re.MULTILINE))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_documented_command_runs_as_written(page: Path, capsys) -> None:
    """Each command a page shows parses with the real command line (its
    subcommand and every flag exist, every value has the right type), and a
    config it names is in configs/ and loads; each make target and script
    exists."""
    targets = make_targets()
    problems = [
        f"{c}: {why}"
        for c in commands(page)
        if (why := command_problem(c, targets)) is not None
    ]
    said = capsys.readouterr().err  # argparse's messages
    assert problems == [], (problems, said[-2000:])


def test_the_command_checker_finds_what_is_broken() -> None:
    targets = make_targets()
    assert command_problem("seq2seq evaluate runs/x --beam 5", targets) is None
    assert command_problem("seq2seq evaluate runs/x --bean 5", targets)
    assert command_problem("seq2seq evalute runs/x", targets)
    missing = command_problem("seq2seq train --config configs/nope.yaml", targets)
    assert missing and missing.startswith("configs/nope.yaml: ")
    assert command_problem("make demoo", targets) == "no make target ['demoo']"
    assert command_problem("bash scripts/bench/nope.sh 320", targets)


# A run's or compare's file named in backticks: `eval_test_beam5.json`,
# `step_<N>.pt`, `hyp_*.txt`, `history.jsonl`, `bleu_by_length.png`.
RUN_FILE = re.compile(
    r"`((?:eval|hyp|probe|step)_[^`/\s]+\.(?:json|txt|png|pt)"
    r"|(?:best|last|averaged)\.pt|history\.jsonl|config\.yaml"
    r"|compare\.(?:md|csv|json)|significance\.md|bleu_by_length\.png)`"
)


def written_names() -> set[str]:
    """The names the code gives a run's and compare's files, over the splits,
    decodings and ablations a page may name."""
    from seq2seq import run
    from seq2seq.lab.compare import OUTPUTS, SIGNIFICANCE
    from seq2seq.lab.evaluate import output_name
    from seq2seq.model.ablation import HOWS, Ablation
    from seq2seq.model.search import Decoding

    here = Path("r")
    names = {run.config_file(here).name, run.history_file(here).name}
    names |= {run.checkpoint_file(here, c).name for c in run.CHECKPOINTS}
    names |= {run.step_file(here, 454).name, *OUTPUTS, SIGNIFICANCE}
    ablations: list[Ablation | None] = [None]
    for how in HOWS:
        for kind in families.ATTENTION_KINDS:
            for layers in (None, (2,)):
                for heads in (None, (4,), (1, 3)):
                    ablations.append(Ablation(how, kind, layers, heads))
    for split in (*run.SPLITS, "test_2017_flickr", "test_2017_mscoco", "val"):
        names |= {run.probe_file(here, split, s).name for s in (".json", ".png")}
        for beam in (1, 5):
            for ablation in ablations:
                name = output_name(split, Decoding(beam=beam), ablation)
                names |= {
                    run.evaluation_file(here, name).name,
                    run.hypotheses_file(here, name).name,
                }
    return names


def as_pattern(documented: str) -> re.Pattern[str]:
    """`eval_<split>_beam<K>.json` or `hyp_*.txt` as the names it stands for."""
    parts = re.split(r"(<[^>]+>|\*)", documented)
    return re.compile(
        "".join(r"[\w.+-]+" if p[:1] in "<*" and p else re.escape(p) for p in parts)
    )


def documented_run_files(page: Path) -> list[str]:
    return RUN_FILE.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_run_file_is_a_name_the_code_writes(page: Path) -> None:
    """A page that names a run's file (`eval_test_beam5.json`,
    `step_<N>.pt`) names one the code writes: run.py's and compare's names
    over the splits, beams and ablations, placeholders standing for any."""
    names = written_names()
    wrong = [
        doc
        for doc in documented_run_files(page)
        if not any(as_pattern(doc).fullmatch(n) for n in names)
    ]
    assert not wrong, f"{page.name} names files nothing writes: {wrong}"


def test_the_run_file_check_finds_a_misnamed_file(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "`eval_test_beam5.json`, `eval_<split>.json`, `step_<N>.pt`,"
        " `eval_test_beam-5.json`, `best_model.pt`, `hyp_test.txt`"
    )
    names = written_names()
    found = documented_run_files(page)
    assert "best_model.pt" not in found  # not a run file's shape: not checked
    assert [d for d in found if not any(as_pattern(d).fullmatch(n) for n in names)] == [
        "eval_test_beam-5.json"
    ]
