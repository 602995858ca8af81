"""Default value: a number column flooded with a default a writer fills in when it has no value
(0 or -1, :data:`assay.measure.shape.DEFAULTS`). A fifth of the rows at 0 keeps the column's
range, and moves only its lowest quantiles; it moves the share of zeros.

Each default's share of the column's values is judged against the band of the window's shares,
built as the null rate's is (:func:`~assay.judge.drift.bands.null_rate_band`: pooled share,
sampling error, the window's own variation, past incidents left out), except that a share that
was 0 in every load of the window is near 0, not known to be 0 (rule of three). It is a hard
alert beyond the hard band (5 sigma) when it is also at least :data:`FLOOD` above the expected
share: a flood fills a good part of the column. On the first 120 loads of the bench's four
datasets (``docs/detection.md``), the soft band (3 sigma) alone was crossed by calm days (a fifth
of the hours with a wind speed of 0, 5 times in 99 days), and the hard band alone by the fog of
2013-01-30 (5 of 72 visibilities at 0); with both bounds, no clean load alerts and a fifth of the
rows at 0 or -1 is caught on every load of the four datasets' measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.judge.drift.bands import MIN_HISTORY, Band, null_rate_band
from assay.judge.drift.case import Case, Finding
from assay.judge.drift.shape_band import MIN_VALUES
from assay.measure.profile import ColumnProfile
from assay.measure.shape import DEFAULTS

FLOOD = 0.10  # the least rise of a default's share, in points of the column's values, that alerts


class DefaultValue:
    kind = "default_value"
    statement = (
        "a number's share of 0 and of -1 stays within its band: hard beyond 5 sigma "
        "when also at least 10 points above the usual share"
    )
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        """One finding a column: the default whose share is farthest above its band."""
        assert column is not None
        present = column.rows - column.nulls
        if not column.kind.numeric or present < MIN_VALUES:
            return []
        judged = [s for value, metric in DEFAULTS if (s := _share(case, column, value, metric)) is not None]
        if not judged:
            return []
        share = max(judged, key=lambda s: (s.band is not None, s.excess))
        if share.band is None:
            message = f"learning: {share.loads} of {MIN_HISTORY} loads"
            return [Finding(column.name, self.kind, share.share, None, None, message)]
        band = share.band
        said = f"{share.value:g}"
        bound = share.bound
        message = (
            f"{share.count} of {present} values are {said} ({share.share:.2%}); expected "
            f"{band.expected:.2%}, an alert beyond {bound:.2%} "
            f"({band.history().replace('missing values', f'a {said}')})"
        )
        detail = {
            "value": share.value,
            "soft": list(band.soft),
            "hard": list(band.hard),
            "shares": {f"{s.value:g}": s.share for s in judged},
            "loads": band.loads,
        }
        severity = "hard" if share.share > bound else None
        expected = (band.soft[0], bound)
        return [Finding(column.name, self.kind, share.share, expected, severity, message, detail=detail)]


@dataclass(frozen=True)
class _Share:
    """One default's share of a column's values today (``count`` of them), and its band."""

    value: float
    count: int
    share: float
    band: Band | None
    loads: int  # of the window that measured it

    @property
    def bound(self) -> float:
        """The share beyond which it alerts: past the hard band and :data:`FLOOD` above the
        expected share."""
        assert self.band is not None
        return max(self.band.hard[1], self.band.expected + FLOOD)

    @property
    def excess(self) -> float:
        """How far above its bound the share lies, in points (negative: within it)."""
        return -1.0 if self.band is None else self.share - self.bound


def _share(case: Case, column: ColumnProfile, value: float, metric: str) -> _Share | None:
    today = case.measured.get(("Column", column.name, metric))
    if today is None:
        return None
    present = column.rows - column.nulls
    rows = case.series("Dataset", "*", "RowCount")
    nulls = case.series("Column", column.name, "NullCount")
    counts = case.series("Column", column.name, metric)
    # the loads that measured it (a load profiled before the metric existed did not)
    window = [
        (int(r - (n or 0)), int(c))
        for r, n, c in zip(rows, nulls, counts, strict=True)
        if r is not None and c is not None and r - (n or 0) > 0
    ]
    band = null_rate_band(
        [n for n, _ in window],
        [c for _, c in window],
        present,
        sensitivity=case.settings.sensitivity,
        known_zero=False,
    )
    return _Share(value, int(today), today / present, band, len(window))
