"""Terminal rendering for the CLI (Rich tables); the package never prints."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay.judge.result import EvaluationResult
from assay.judge.verdicts import fmt

_STYLE = {"Passed": "green", "Failed": "red", "Error": "yellow"}


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
        for error in analyzer.errors:
            console.print(f"  [yellow]{escape(error)}[/yellow]", highlight=False)
