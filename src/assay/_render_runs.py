"""How a check run, scores and a certification badge read on a console: shared by the CLI and
the demo (which must not import the CLI)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay._terminal import out as _console
from assay.durations import duration

STYLE = {
    "passed": "green",
    "failed": "red",
    "config_error": "yellow",
    "system_error": "magenta",
    "skipped": "dim",
}


def measured(value: float | None, unit: str | None) -> str:
    """An observed value or a bound as a table shows it: a duration when its unit is seconds.

    >>> measured(5400.0, "seconds"), measured(1234567.0, None), measured(None, None)
    ('1 h 30 min', '1.235e+06', '')
    """
    if value is None:
        return ""
    return duration(value) if unit == "seconds" else f"{value:,.4g}"


def print_run(payload: dict[str, Any], console: Console | None = None) -> None:
    """A check run's outcomes as a table, then why each that did not pass did not."""
    out = console or _console
    title = f"{payload['dataset']} at {payload['at']}" + (
        " (dry run: nothing recorded)" if payload["dry_run"] else ""
    )
    table = Table(title=title, title_justify="left", show_lines=False)
    for name in ("expectation", "group", "outcome", "severity", "observed", "owner"):
        table.add_column(name, overflow="fold")
    for item in payload["outcomes"]:
        style = STYLE.get(item["outcome"], "")
        outcome = item["outcome"] + (f" ({item['reason']})" if item.get("reason") else "")
        if item["mode"] == "advisory":
            outcome += " [advisory]"
        group = ", ".join(f"{k}={v}" for k, v in (item.get("group") or {}).items())
        observed = measured(item.get("observed"), item.get("unit"))
        table.add_row(
            escape(item["expectation"]),
            escape(group),
            f"[{style}]{escape(outcome)}[/{style}]" if style else escape(outcome),
            item["severity"],
            observed,
            escape(item.get("owner") or ""),
        )
    out.print(table)
    for item in payload["outcomes"]:
        if item["outcome"] != "passed":
            group = ", ".join(f"{k}={v}" for k, v in (item.get("group") or {}).items())
            where = f" [{group}]" if group else ""
            out.print(
                f"  {escape(item['expectation'])}{escape(where)}: {escape(item.get('message') or '')}",
                highlight=False,
            )
        for cause in item.get("explained_by") or []:
            out.print(
                f"  {escape(item['expectation'])}: "
                f"{escape(cause['dimension'])}={escape(str(cause['value']))} explains {cause['share']:.0%} "
                f"of the change ({cause['baseline']:,.4g} -> {cause['observed']:,.4g})",
                highlight=False,
            )
        if item.get("samples"):
            out.print(
                f"  {escape(item['expectation'])}: {len(item['samples'])} sample row(s) flagged",
                highlight=False,
            )
    for alert in payload.get("drift") or []:  # the drift monitor's word on each slice's profile
        style = "red" if alert["severity"] == "hard" else "yellow"
        where = f"{alert['column']}: " if alert.get("column") else ""
        out.print(
            f"  drift ({escape(alert['profile'])}): [{style}]{alert['severity']} {alert['kind']}[/{style}] "
            f"{escape(where + alert['message'])}",
            highlight=False,
        )
    s = payload["summary"]
    rate = "n/a" if s["pass_rate"] is None else f"{s['pass_rate']:.2f}"
    evaluation = "n/a" if s["evaluation_rate"] is None else f"{s['evaluation_rate']:.2f}"
    out.print(
        f"[green]{s['passed']} passed[/green], [red]{s['failed']} failed[/red], "
        f"[yellow]{s['config_error']} config error[/yellow], "
        f"[magenta]{s['system_error']} system error[/magenta], "
        f"{s['skipped']} skipped; pass rate {rate}, evaluation rate {evaluation}; "
        f"queries: {payload['queries']['measure']} to measure, {payload['queries']['judge']} to judge",
        highlight=False,
    )


def print_scores(found: list[Any], clock: Any, console: Any = None) -> None:
    """Scores as a table (and, for one dataset, every point it lost)."""
    console = console or _console
    if not found:
        console.print("no datasets: run a check, a profile or a gate first", highlight=False)
        return
    table = Table(title=f"Scores at {clock:%Y-%m-%d %H:%M} UTC", title_justify="left")
    for column in ("dataset", "score", "health", "enrichment", "importance", "tier", "first cause"):
        table.add_column(column, overflow="fold")
    for s in found:
        table.add_row(
            escape(s.dataset),
            f"{s.score:.1f}",
            f"{s.health:.1f}",
            f"{s.enrichment:.1f}",
            f"{s.importance:.1f}",
            "" if s.tier is None else str(s.tier),
            escape(s.why[0]) if s.why else "",
        )
    console.print(table)
    if len(found) == 1:
        for line in found[0].why:
            console.print(f"  {escape(line)}", highlight=False)


def print_badge(result: dict[str, Any], console: Any = None) -> None:
    """A badge, since when, and each criterion with its evidence."""
    console = console or _console
    style = {"certified": "green", "at_risk": "yellow", "revoked": "red"}.get(result["badge"], "")
    since = f" since {result['since'][:10]}" if result.get("since") else ""
    badge = f"[{style}]{result['badge']}[/{style}]" if style else result["badge"]
    console.print(f"{escape(result['dataset'])}: {badge}{since}", highlight=False)
    for c in result["criteria"]:
        mark = "[green]met[/green]    " if c["met"] else "[red]not met[/red]"
        console.print(f"  {mark} {c['name']:<19} {escape(c['evidence'])}", highlight=False)


def print_gate_audit(console: Console, audits: list[dict[str, Any]]) -> None:
    """Each gate run's balance on a line (``assay gate audit``), then what does not add up."""
    for audit in audits:
        who = " ".join(str(part) for part in (audit["run_id"], audit["contributor"], audit["batch"]) if part)
        if audit["balance_known"]:
            outputs = (
                f"{audit['committed']} committed + {audit['quarantined']} quarantined + {audit['held']} held"
            )
            for since in ("withdrawn", "released"):
                if audit[since]:
                    outputs += f" + {len(audit[since])} {since}"
            rows = "no rows to account for" if audit["input_rows"] is None else f"{audit['input_rows']} rows"
            line = f"{rows} = {outputs}: {'balanced' if audit['balanced'] else 'NOT balanced'}"
            if audit["state"] != "balanced" and audit["state"] != "unbalanced":
                line += f" ({audit['state']})"
        else:
            line = audit["state"]
        console.print(f"{who}: {line}", highlight=False, markup=False)
        if audit["missing"]:
            lines = ", ".join(str(n) for n in audit["missing"])
            console.print(f"  missing (in no output): line(s) {lines}", highlight=False, markup=False)
        for stray in audit["duplicated"]:
            console.print(
                f"  duplicated: line {stray['line']} again in {stray['output']} "
                f"(its row {stray['position']})",
                highlight=False,
                markup=False,
            )
        for stray in audit["unknown"]:
            console.print(
                f"  unknown: row {stray['position']} of {stray['output']} is no row of the batch",
                highlight=False,
                markup=False,
            )
        if audit["note"]:
            console.print(f"  {audit['note']}", highlight=False, markup=False)
