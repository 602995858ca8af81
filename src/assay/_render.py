"""Terminal rendering for the CLI (Rich tables); the package never prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from assay.gate.gate import GateResult
    from assay.judge.result import EvaluationResult
    from assay.lake.iceberg import TableInfo
    from assay.monitor import Point, ProfileResult
    from assay.store.profiles import Decision

_STYLE = {"Passed": "green", "Failed": "red", "Error": "yellow"}


@contextmanager
def progress(console: Console, description: str, total: int | None = None) -> Iterator[Callable[[], None]]:
    """A progress bar (a spinner when ``total`` is None) on ``console``, cleared when done; the
    caller advances it by calling what it yields. Nothing is drawn when the console is not a
    terminal (a pipe, a CI log), so redirected output holds no bar.

    >>> import io
    >>> with progress(Console(file=io.StringIO()), "Counting", total=2) as advance:
    ...     advance(); advance()
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)


def fmt(value: float | None) -> str:
    """A metric value as the outcome messages write it (imported late: the judge loads the engine)."""
    from assay.judge.verdicts import fmt as judged

    return judged(value)


def outcome_table(result: EvaluationResult) -> Table:
    table = Table(show_lines=False, header_style="bold")
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule", overflow="fold")
    table.add_column("outcome")
    table.add_column("details", overflow="fold")
    for i, rule in enumerate(result.rules, start=1):
        details = rule.message or ", ".join(f"{k} = {fmt(v)}" for k, v in list(rule.metrics.items())[:2])
        style = _STYLE.get(rule.outcome, "")
        table.add_row(str(i), escape(rule.rule), f"[{style}]{rule.outcome}[/{style}]", escape(details))
    return table


def print_outcomes(console: Console, result: EvaluationResult) -> None:
    console.print(outcome_table(result))
    for i, rule in enumerate(result.rules, start=1):
        if rule.note:
            console.print(f"  note on #{i}: {escape(rule.note)}")
    counts = result.counts()
    score = "n/a" if result.score is None else f"{result.score:.2f}"
    console.print(
        f"[green]{counts['Passed']} passed[/green], [red]{counts['Failed']} failed[/red], "
        f"[yellow]{counts['Error']} error[/yellow]; score {score} "
        f"(rules in error count neither way); engine queries: {result.queries}"
    )
    for analyzer in result.analyzers:
        shown = ", ".join(f"{k} = {fmt(v)}" for k, v in analyzer.metrics.items())
        console.print(f"[bold]{escape(analyzer.analyzer)}[/bold]: {escape(shown)}", highlight=False)
        for data in analyzer.distributions:
            pairs = ", ".join(
                f"{edge}: {count}" for edge, count in zip(data["bin_edges"], data["counts"], strict=False)
            )
            console.print(f"  {escape(data['column'])}: {escape(pairs) or 'no values'}", highlight=False)
        for error in analyzer.errors:
            console.print(f"  [yellow]{escape(error)}[/yellow]", highlight=False)


def print_gate(console: Console, result: GateResult) -> None:
    """A gate run: the counts, the rules that caught rows, the months judged, where things are."""
    s = result.summary
    if s.duplicate_of:
        console.print(
            f"{escape(s.source_path)} was already gated for {s.contributor} into {s.table} "
            f"(run {s.duplicate_of}); nothing committed twice.",
            highlight=False,
        )
        return
    # The counts add up on screen as in the summary: total = committed + quarantined + held.
    console.print(
        f"[bold]{escape(s.contributor)}[/bold] → {escape(s.table)}: {s.total} rows = "
        f"[green]{s.passed} committed[/green] + [red]{s.quarantined} quarantined[/red] + "
        f"[cyan]{s.held} held[/cyan] ([yellow]{s.warned} warned[/yellow], {s.parse_errors} parse errors)",
        highlight=False,
    )
    caught = Table(header_style="bold", title="rules that caught rows")
    for name in ("rule", "severity", "category", "passed", "failed", "skipped"):
        caught.add_column(name)
    for rule_id, stats in s.rules.items():
        if stats.failed:
            style = "red" if stats.severity == "critical" else "yellow"
            caught.add_row(
                rule_id,
                f"[{style}]{stats.severity}[/{style}]",
                escape(stats.category),
                str(stats.passed),
                str(stats.failed),
                str(stats.skipped),
            )
    if caught.row_count:
        console.print(caught)
    for group in s.groups:
        failed = [r for r in group.dataset_rules if r.outcome != "passed"]
        state = "[red]refused[/red]" if group.rejected else "accepted"
        details = "; ".join(f"{r.rule_id} {r.outcome}: {escape(r.message or '')}" for r in failed)
        console.print(
            f"  {group.statement_date}: {group.rows} rows, {state}{' — ' + details if details else ''}"
        )
    if s.baseline_date:
        console.print(f"  baseline: the month of {s.baseline_date} already committed", highlight=False)
    if s.replaced_dates:
        console.print(f"  replaced committed month(s): {', '.join(s.replaced_dates)}", highlight=False)
    if result.quarantine_file:
        console.print(f"Quarantined rows: {escape(str(result.quarantine_file))}", highlight=False)
    if s.held:
        plural = "s" if len(s.decisions) > 1 else ""
        ids = ", ".join(str(d) for d in s.decisions)
        where = f": {escape(s.held_file)}" if s.held_file else ""
        console.print(f"[cyan]{s.held} rows held for decision{plural} {ids}[/cyan]{where}", highlight=False)
        console.print(
            "  `assay decisions accept ID` commits them, `assay decisions reject ID` quarantines them",
            highlight=False,
        )
    console.print(f"Run summary: {escape(str(result.summary_file))}", highlight=False)


def print_tables(console: Console, tables: list[TableInfo]) -> None:
    table = Table(header_style="bold")
    for name in ("table", "rows", "snapshots", "partitions", "columns"):
        table.add_column(name)
    for info in tables:
        table.add_row(
            escape(info.name),
            str(info.rows),
            str(info.snapshots),
            str(info.partitions),
            str(len(info.schema)),
        )
    console.print(table)
    if not tables:
        console.print("no tables yet: `assay gate` creates them on its first commit")


def print_profile(console: Console, result: ProfileResult) -> None:
    """A load's profile (one line a column) and its alerts."""
    table = Table(
        header_style="bold", title=f"{result.dataset} {result.load_date}: {result.profile.rows} rows"
    )
    for name in ("column", "type", "nulls", "blanks", "distinct", "min", "max", "top values"):
        table.add_column(name, overflow="fold")
    for c in result.profile.columns:
        top = ", ".join(f"{escape(v)} {share:.0%}" for v, _, share in c.top(3))
        distinct = "" if c.distinct is None else f"{c.distinct}{'' if c.distinct_exact else ' ≈'}"
        table.add_row(
            escape(c.name),
            escape(c.type),
            f"{c.nulls} ({c.null_rate:.1%})",
            str(c.blanks) if c.kind == "string" else "",  # text columns only
            distinct,
            "" if c.minimum is None else escape(str(c.minimum)),
            "" if c.maximum is None else escape(str(c.maximum)),
            top,
        )
    console.print(table)
    if result.replaced:
        console.print("This date was profiled before: its earlier profile is replaced.")
    if not result.alerts:
        console.print(f"[green]No alert[/green] against {result.history} earlier load(s).")
        return
    for alert in result.alerts:
        style = "red" if alert.severity == "hard" else "yellow"
        where = f"{alert.column}: " if alert.column else ""
        console.print(
            f"[{style}]{alert.severity} {alert.kind}[/{style}] {escape(where + alert.message)}",
            highlight=False,
        )
    if result.decisions:
        ids = ", ".join(str(d) for d in result.decisions)
        console.print(f"New values wait for a decision ({ids}): assay decisions list / accept ID / reject ID")


def decision_dict(d: Decision) -> dict[str, object]:
    return {
        "id": d.id,
        "dataset": d.dataset,
        "column": d.column,
        "value": d.value,
        "status": d.status,
        "rows": d.rows,
        "first_seen": d.first_date.isoformat() if d.first_date else None,
        "opened_at": d.opened_at.isoformat(),
        "decided_at": d.decided_at.isoformat() if d.decided_at else None,
        "decided_by": d.decided_by,
        "note": d.note,
    }


def print_decisions(console: Console, decisions: list[Decision]) -> None:
    if not decisions:
        console.print("No decision.")
        return
    table = Table(header_style="bold")
    for name in ("id", "dataset", "column", "value", "rows", "first seen", "status", "decided by", "when"):
        table.add_column(name, overflow="fold")
    for d in decisions:
        style = {"pending": "yellow", "accepted": "green", "rejected": "red"}[d.status]
        table.add_row(
            str(d.id),
            escape(d.dataset),
            escape(d.column),
            escape(d.value),
            str(d.rows),
            d.first_date.isoformat() if d.first_date else "",
            f"[{style}]{d.status}[/{style}]",
            escape(d.decided_by or ""),
            d.decided_at.strftime("%Y-%m-%d %H:%M") if d.decided_at else "",
        )
    console.print(table)


def print_history(console: Console, name: str, points: list[Point]) -> None:
    table = Table(header_style="bold", title=escape(name))
    for column in ("load", "value", "band", "alert", "why"):
        table.add_column(column, overflow="fold")
    for p in points:
        band = "" if p.low is None or p.high is None else f"{fmt(p.low)} … {fmt(p.high)}"
        style = {"hard": "red", "soft": "yellow"}.get(p.severity or "", "")
        alert = f"[{style}]{p.severity}[/{style}]" if p.severity else ""
        table.add_row(_when(p), fmt(p.value), band, alert, escape(p.message or "") if p.severity else "")
    console.print(table)


def _when(p: Point) -> str:
    """A profiled load by its date; an evaluation (no load date) by its time, to the second."""
    if p.load_date is not None:
        return p.load_date.isoformat()
    return p.load_time.strftime("%Y-%m-%d %H:%M:%S") if p.load_time else ""
