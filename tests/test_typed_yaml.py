"""The config machinery: ranges and their wording, numbers, merging, --set,
and `base:` chains."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from seq2seq.errors import UserError
from seq2seq.typed_yaml import (
    Range,
    apply_override,
    merge,
    number,
    out_of_range,
    read_yaml,
)


@pytest.mark.parametrize(
    ("rng", "inside", "outside", "said"),
    [
        (Range(lo=1), [1, 10**9], [0, -1], ">= 1"),
        (Range(lo=0, lo_open=True), [1e-9], [0], "> 0"),
        (Range(lo=0, hi=1), [0, 0.5, 1], [-0.1, 1.1], "in [0, 1]"),
        (Range(lo=0, hi=1, lo_open=True, hi_open=True), [0.5], [0, 1], "in (0, 1)"),
        (Range(hi=10), [-5, 10], [11], "<= 10"),
        (Range(hi=10, hi_open=True), [9.9], [10], "< 10"),
        (Range(), [-1e30, 1e30], [], "any number"),
    ],
)
def test_a_range_holds_what_it_says(
    rng: Range, inside: list[float], outside: list[float], said: str
) -> None:
    assert str(rng) == said
    assert all(x in rng for x in inside)
    assert not any(x in rng for x in outside)
    for x in outside:
        assert out_of_range(x, rng) == f"must be {said}"


def test_a_float_must_be_finite_whatever_its_range() -> None:
    for bad in (math.inf, -math.inf, math.nan):
        assert out_of_range(bad, None) == "must be a finite number"
    assert out_of_range(3, None) == "" and out_of_range("text", Range(lo=1)) == ""


def test_numbers_read_as_written() -> None:
    assert [number(x) for x in (1, 4294967295, 0.9, 1e-05, 3e38, 2.0)] == [
        "1",
        "4294967295",
        "0.9",
        "1e-05",
        "3e+38",
        "2",
    ]


def test_merge_is_deep_and_the_top_wins() -> None:
    base = {"model": {"attention": "none", "encoder": {"layers": 1}}, "seed": 1}
    top = {"model": {"encoder": {"layers": 2}}, "seed": 3}
    assert merge(base, top) == {
        "model": {"attention": "none", "encoder": {"layers": 2}},
        "seed": 3,
    }
    assert base["model"]["encoder"]["layers"] == 1  # the inputs are left as they were


def test_set_parses_yaml_and_names_what_is_wrong() -> None:
    raw: dict = {"train": {"lr": 1.0}}
    apply_override(raw, "train.lr=0.0003")
    apply_override(raw, "model.encoder.layers=2")
    assert raw == {"train": {"lr": 3e-4}, "model": {"encoder": {"layers": 2}}}
    with pytest.raises(UserError, match="expected KEY=VALUE"):
        apply_override(raw, "train.lr")
    with pytest.raises(UserError, match="'lr' is not a section"):
        apply_override(raw, "train.lr.x=1")
    with pytest.raises(UserError, match="not valid YAML"):
        apply_override(raw, "name=[unclosed")


def test_a_section_of_another_family_replaces_its_bases() -> None:
    """A Transformer's file over an RNN's base keeps the base's other
    sections, not its RNN keys; the same family (named or by default) merges."""
    base = {"model": {"attention": "none", "encoder": {"layers": 1}}, "seed": 1}
    other = merge(base, {"model": {"family": "transformer", "heads": 4}})
    assert other == {"model": {"family": "transformer", "heads": 4}, "seed": 1}
    same = merge(base, {"model": {"family": "rnn", "attention": "dot"}})
    assert same["model"] == {
        "attention": "dot",
        "encoder": {"layers": 1},
        "family": "rnn",
    }
    named = {"model": {"family": "transformer", "heads": 4, "layers": 2}}
    assert merge(named, {"model": {"family": "transformer", "heads": 8}})["model"] == {
        "family": "transformer",
        "heads": 8,
        "layers": 2,
    }


def test_a_base_chain_is_read_in_order_and_a_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("seed: 1\nname: a\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\nname: b\n")
    assert read_yaml(tmp_path / "b.yaml") == {"seed": 1, "name": "b"}
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    with pytest.raises(UserError, match="loops back"):
        read_yaml(tmp_path / "b.yaml")
    (tmp_path / "bad.yaml").write_text("name: [x\n")
    with pytest.raises(UserError, match=r"bad\.yaml:\d+: not valid YAML"):
        read_yaml(tmp_path / "bad.yaml")
    with pytest.raises(UserError, match="config file not found"):
        read_yaml(tmp_path / "none.yaml")
