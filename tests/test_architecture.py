"""The floor plan is a checked contract (docs/architecture.md).

import-linter reads its contracts from pyproject.toml: the layers
cli | lesson -> lab -> training -> model | data -> shared modules (cli and
lesson independent of each other, and model and data), and no import cycle
anywhere. ``make check``
runs the same contracts with ``lint-imports``.
"""

from __future__ import annotations

import ast
import tomllib

from conftest import REPO
from importlinter.cli import lint_imports

PYPROJECT = REPO / "pyproject.toml"


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def test_the_import_contracts_hold() -> None:
    assert lint_imports(str(PYPROJECT), no_cache=True, no_logo=True) == 0


def test_every_module_has_a_place_in_the_layers() -> None:
    """A new top-level module or subpackage must be named in the contract,
    or the layers would not constrain it."""
    (layers,) = [c["layers"] for c in contracts() if c["type"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    package = REPO / "seq2seq"
    found = {f"seq2seq.{p.stem}" for p in package.glob("*.py")}
    found |= {f"seq2seq.{p.parent.name}" for p in package.glob("*/__init__.py")}
    assert found - {"seq2seq.__init__", "seq2seq.__main__"} == named


def test_the_model_and_data_layers_are_independent() -> None:
    (layers,) = [c["layers"] for c in contracts() if c["type"] == "layers"]
    assert "seq2seq.model | seq2seq.data" in layers
    top = ["seq2seq.cli | seq2seq.lesson", "seq2seq.lab", "seq2seq.training"]
    assert layers[:3] == top


def test_nothing_in_the_package_changes_the_working_folder() -> None:
    """A library call that moves the process elsewhere breaks every relative
    path its caller holds; the lesson reads paths from its checkout instead
    (seq2seq.lesson.checkout)."""
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "seq2seq").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "chdir(" in line
    ]
    assert found == []


# The modules that read the config's model sections, whose fields share the
# parts' names (cfg.model.encoder.hidden_size), not a model's parts.
CONFIG_READERS = ("config.py", "path.py")


def test_nothing_above_the_model_floor_reaches_into_a_model() -> None:
    """A model is used through its interface (model/interface.py): outside
    seq2seq/model/ no code names a model's ``.encoder`` or ``.decoder``, so a
    second family needs no change above the floor. The import contract in
    pyproject.toml keeps the RNN family's modules out of reach as well."""
    found = []
    for path in sorted((REPO / "seq2seq").rglob("*.py")):
        inside = "model" in path.relative_to(REPO).parts or path.name in CONFIG_READERS
        if inside:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("encoder", "decoder"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
    assert found == []


def test_the_reach_check_finds_a_reach() -> None:
    tree = ast.parse("vocab = model.decoder.output.out_features")
    reaches = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr in ("encoder", "decoder")
    ]
    assert len(reaches) == 1


def test_no_script_imports_another_or_edits_sys_path() -> None:
    """Scripts share code through the package (build_loop, callbacks), not
    through each other."""
    scripts = sorted((REPO / "scripts").rglob("*.py"))
    names = {p.stem for p in scripts}
    found = []
    for path in [*scripts, *(REPO / "scripts").rglob("*.sh")]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            words = line.split()
            imported = words[1].split(".")[0] if len(words) > 1 else ""
            if "sys.path" in line or (
                words[:1] in (["import"], ["from"]) and imported in names
            ):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert found == []


# Modules whose tests live in another module's file, and why.
TESTED_ELSEWHERE = {
    "feeding": "test_recurrence.py",  # the fast paths against the step loop
    "encoding": "test_recurrence.py",
    "decoding": "test_recurrence.py",
    "steps": "test_attention.py",  # each mode's rule against its step
    "ablate": "test_ablation.py",  # evaluate's flags, beside the rules they choose
    "registered": "test_families.py",  # both families registered
    "explore_page": "test_explore_browser.py",  # the page, in a real browser
    "masks": "test_lesson_attention.py",  # the causal mask leaks no future
    "specials": "",  # four constants
}


def test_tests_mirror_modules() -> None:
    """Each module has its test file, test_<module>.py (a subpackage's modules
    may share test_<subpackage>.py; the lesson's attention is
    test_lesson_attention.py beside the model's test_attention.py), or is
    named above with the file that tests it."""
    tests = REPO / "tests"
    missing = []
    for path in sorted((REPO / "seq2seq").rglob("*.py")):
        name, package = path.stem, path.parent.name
        if name in ("__init__", "__main__"):
            continue
        own = [f"test_{name}.py", f"test_{package}_{name}.py", f"test_{package}.py"]
        if package == "seq2seq" or package in ("model", "data", "lab", "training"):
            own = own[:2]  # a layer's modules each have their own
        if name in TESTED_ELSEWHERE:
            own = [TESTED_ELSEWHERE[name]] if TESTED_ELSEWHERE[name] else []
            if not own:
                continue
        if not any((tests / f).is_file() for f in own):
            missing.append(str(path.relative_to(REPO)))
    assert missing == []
