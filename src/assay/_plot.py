"""The history plot: the series, the band each load was judged against, and the alerted loads."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.monitor import Point


def plot_history(points: list[Point], path: Path, title: str) -> None:
    """Write a PNG: the metric's line, the judged band shaded, soft alerts in orange, hard in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if path.suffix.lower() != ".png":
        raise ConfigError(f"{path}: the plot is written as a .png file")
    dated = [p for p in points if p.load_date is not None or p.load_time is not None]
    figure, axes = plt.subplots(figsize=(10, 4), dpi=120)
    axes.plot(_days(dated), _values(p.value for p in dated), color="#1f4e79", linewidth=1.6, marker="o",
              markersize=3, label="observed")  # fmt: skip
    banded = [p for p in dated if p.low is not None and p.high is not None]
    if banded:
        axes.fill_between(
            _days(banded),
            _values(p.low for p in banded),
            _values(p.high for p in banded),
            color="#9ecae1",
            alpha=0.45,
            step="mid",
            label="band the load was judged against",
        )
    for severity, colour, marker in (("soft", "#f39c12", "o"), ("hard", "#c0392b", "X")):
        marked = [p for p in dated if p.severity == severity]
        if marked:
            axes.scatter(_days(marked), _values(p.value for p in marked), color=colour, marker=marker, s=90,
                         zorder=5, label=f"{severity} alert")  # fmt: skip
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize=8)
    figure.autofmt_xdate()
    figure.tight_layout()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None
    finally:
        plt.close(figure)


def _days(points: list[Point]) -> Any:
    # A profiled load sits on its date; an evaluation (no load date) at its time.
    days: list[date] = []
    for p in points:
        when = p.load_date or p.load_time
        if when is not None:
            days.append(when)
    return days


def _values(values: Any) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]
