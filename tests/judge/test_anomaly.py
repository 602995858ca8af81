"""The DetectAnomalies model (assay/judge/anomaly.py): documented choices, each tested."""

from __future__ import annotations

import pytest

from assay.judge import anomaly


def test_too_little_history_gives_no_band() -> None:
    assert anomaly.band([]) is None
    assert anomaly.band([10.0, 11.0]) is None
    assert anomaly.band([10.0, 11.0, 12.0]) is not None


def test_a_constant_history_tolerates_one_percent() -> None:
    band = anomaly.band([1000.0] * 10)
    assert band is not None
    assert band.contains(1009.0) and band.contains(991.0)
    assert not band.contains(1011.0) and not band.contains(989.0)


def test_a_steady_trend_is_expected_to_continue() -> None:
    growing = [float(1000 + 50 * i) for i in range(10)]  # oldest first
    band = anomaly.band(list(reversed(growing)))  # the model takes most recent first
    assert band is not None
    assert band.expected == pytest.approx(1500.0)
    assert band.contains(1500.0)
    assert not band.contains(1000.0)


def test_one_past_outlier_does_not_widen_the_band() -> None:
    history = [100.0, 101.0, 99.0, 100.0, 5000.0, 100.0, 101.0, 99.0]
    band = anomaly.band(history)
    assert band is not None
    assert band.high < 200.0


def test_only_the_window_counts() -> None:
    recent = [10.0] * anomaly.WINDOW
    band = anomaly.band(recent + [1e9] * 50)
    assert band is not None and band.high < 11.0


def test_non_finite_values_are_ignored() -> None:
    band = anomaly.band([float("nan"), 5.0, 5.0, float("inf"), 5.0])
    assert band is not None and band.points == 3
