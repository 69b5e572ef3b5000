"""LRSchedule: warmup, cosine, plateau, noam, the floor, and its resume state."""

from __future__ import annotations

import math

import pytest

from seq2seq.config import TrainConfig
from seq2seq.errors import UserError
from seq2seq.training.schedule import LRSchedule


def schedule(**kw: object) -> LRSchedule:
    return LRSchedule(TrainConfig(**kw))  # type: ignore[arg-type]


def test_constant_warms_up_linearly_then_holds() -> None:
    s = schedule(lr=1e-3, warmup_steps=10, min_lr=1e-6)
    assert s.lr(5) == pytest.approx(5e-4)
    assert s.lr(10) == s.lr(1000) == pytest.approx(1e-3)


def test_warmup_starts_at_the_floor_not_at_zero() -> None:
    s = schedule(lr=1e-3, warmup_steps=10, min_lr=1e-5)
    assert s.lr(0) == pytest.approx(1e-5)


def test_cosine_goes_from_lr_to_min_lr_between_warmup_and_max_steps() -> None:
    s = schedule(
        lr=2e-3, schedule="cosine", warmup_steps=100, max_steps=1100, min_lr=1e-5
    )
    assert s.lr(100) == pytest.approx(2e-3)
    # halfway through the decay: the mean of lr and min_lr
    assert s.lr(600) == pytest.approx((2e-3 + 1e-5) / 2)
    assert s.lr(1100) == pytest.approx(1e-5)
    assert s.lr(5000) == pytest.approx(1e-5)  # stays at the floor past max_steps
    rates = [s.lr(t) for t in range(100, 1101, 50)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))


def test_cosine_without_an_end_is_refused_by_the_config() -> None:
    with pytest.raises(UserError, match="cosine needs train.max_steps"):
        schedule(lr=1e-3, schedule="cosine", max_steps=0)


def test_noam_peaks_at_lr_after_the_warmup_then_falls_as_one_over_sqrt_step() -> None:
    """Vaswani et al. 2017, eq. (3), with the factor that puts its peak at lr:
    d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) / its value at warmup."""
    s = schedule(lr=5e-4, schedule="noam", warmup_steps=400, min_lr=0)
    for step in (1, 100, 400, 401, 1600, 10_000):
        paper = 512**-0.5 * min(step**-0.5, step * 400**-1.5)
        assert s.lr(step) == pytest.approx(5e-4 * paper / (512**-0.5 * 400**-0.5))
    assert s.lr(400) == pytest.approx(5e-4)
    assert s.lr(1600) == pytest.approx(2.5e-4)  # 4x the warmup: half the peak


def test_noam_without_a_warmup_is_refused_by_the_config() -> None:
    with pytest.raises(UserError, match="noam needs train.warmup_steps"):
        schedule(lr=1e-3, schedule="noam", warmup_steps=0)


def test_plateau_decays_after_patience_validations_without_a_best() -> None:
    s = schedule(lr=1e-3, schedule="plateau", plateau_patience=2, plateau_factor=0.5)
    s.observe(False)
    assert s.lr(50) == pytest.approx(1e-3)
    s.observe(False)  # the second in a row: halve, count again from 0
    assert s.lr(50) == pytest.approx(5e-4)
    s.observe(False)
    s.observe(True)  # a new best resets the count
    s.observe(False)
    assert s.lr(50) == pytest.approx(5e-4)
    s.observe(False)
    assert s.lr(50) == pytest.approx(2.5e-4)


def test_plateau_never_goes_below_the_floor() -> None:
    s = schedule(
        lr=1e-3, schedule="plateau", plateau_patience=1, plateau_factor=0.1, min_lr=1e-5
    )
    for _ in range(5):
        s.observe(False)
    assert s.lr(1) == pytest.approx(1e-5)


def test_other_schedules_ignore_validations() -> None:
    s = schedule(lr=1e-3, plateau_patience=1)
    for _ in range(3):
        s.observe(False)
    assert s.lr(1) == pytest.approx(1e-3)


def test_resume_continues_the_plateau_decay() -> None:
    s = schedule(lr=1e-3, schedule="plateau", plateau_patience=3, plateau_factor=0.5)
    for improved in (False, False, False, False):
        s.observe(improved)
    again = schedule(lr=1e-3, schedule="plateau", plateau_patience=3)
    again.load_state_dict(s.state_dict())
    again.observe(False)
    again.observe(False)  # with the one carried over: the third in a row
    assert again.lr(1) == pytest.approx(1e-3 * 0.25)
    assert math.isclose(again.scale, 0.25)
