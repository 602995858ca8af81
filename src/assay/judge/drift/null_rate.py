"""Null rate: a column's missing values (nulls plus blank text, or nulls only with
``null_rate: {blanks: false}``) against the band of the window's rates, plain or conditioned on
an activity of the same load (:func:`~assay.judge.drift.bands.null_rate_band`)."""

from __future__ import annotations

from assay.errors import ConfigError
from assay.judge.drift.bands import MIN_HISTORY, null_rate_band
from assay.judge.drift.case import Case, Finding
from assay.measure.profile import ColumnProfile


class NullRate:
    kind = "null_rate"
    statement = "a column's missing rate stays within its band: soft beyond 3 sigma, hard beyond 5"
    per_column = True

    def judge(self, case: Case, column: ColumnProfile | None = None) -> list[Finding]:
        assert column is not None
        rows = case.series("Dataset", "*", "RowCount")
        nulls = case.series("Column", column.name, "NullCount")
        blanks = case.series("Column", column.name, "BlankCount")
        with_blanks = case.settings.blanks
        present = [
            i for i, (r, n) in enumerate(zip(rows, nulls, strict=True)) if r is not None and n is not None
        ]
        pairs = [
            (int(rows[i] or 0), int(nulls[i] or 0) + (int(blanks[i] or 0) if with_blanks else 0))
            for i in present
        ]
        activity_name = case.settings.conditioned.get(column.name)
        activity = today = None
        if activity_name:
            # over the same loads as the counts: a column added later has a shorter history
            series, today = _activity(case, activity_name)
            activity = [series[i] for i in present]
            if today is None or any(a is None for a in activity):
                activity = today = None
        blank_today = int(case.measured.get(("Column", column.name, "BlankCount")) or 0) if with_blanks else 0
        band = null_rate_band(
            [r for r, _ in pairs],
            [n for _, n in pairs],
            column.rows,
            None if activity is None else [float(a) for a in activity if a is not None],
            today,
            sensitivity=case.settings.sensitivity,
        )
        observed = (column.nulls + blank_today) / column.rows if column.rows else 0.0
        if band is None:
            message = f"learning: {len(pairs)} of {MIN_HISTORY} loads"
            return [Finding(column.name, self.kind, observed, None, None, message)]
        what = _missing(column.nulls, blank_today, with_blanks and (blank_today > 0 or any(blanks)))
        if band.model == "zero":
            none = "no missing value" if with_blanks else "no null"
            message = f"{what} ({observed:.2%}) in a column that had {none} in {band.loads} loads"
        elif band.model == "rare":
            message = f"{what} ({observed:.2%}); expected almost none: {band.history()}"
        else:
            message = (
                f"missing rate {observed:.2%} ({what} in {column.rows} rows); expected {band.expected:.2%}, "
                f"{band.soft[0]:.2%} to {band.soft[1]:.2%} ({band.model} band; {band.history()})"
            )
        detail = {
            "model": band.model,
            "hard": list(band.hard),
            "nulls": column.nulls,
            "blanks": blank_today,
            "loads": band.loads,
            "missing_loads": band.missing_loads,
            "left_out": band.left_out,
        }
        return [
            Finding(
                column.name, self.kind, observed, band.soft, band.severity(observed), message, detail=detail
            )
        ]


def _activity(case: Case, name: str) -> tuple[list[float | None], float | None]:
    """The activity series over the window (one entry per load) and today's activity."""
    if name == "row_count":
        return case.series("Dataset", "*", "RowCount"), float(case.today.profile.rows)
    parts = name.split(".")
    if len(parts) < 3 or parts[0] not in ("Dataset", "Column"):
        raise ConfigError(
            f"null_rate.conditioned: activity '{name}' must be row_count "
            "or a metric of the load such as Column.qty.Maximum"
        )
    entity, instance, metric = parts[0], ".".join(parts[1:-1]), parts[-1]
    return case.series(entity, instance, metric), case.measured.get((entity, instance, metric))


def _missing(nulls: int, blanks: int, apart: bool) -> str:
    """ "19 nulls", or with blanks "12 missing (0 nulls, 12 blanks)"."""
    null = f"{nulls} null{'' if nulls == 1 else 's'}"
    if not apart:
        return null
    return f"{nulls + blanks} missing ({null}, {blanks} blank{'' if blanks == 1 else 's'})"
