"""Parse and evaluate DQDL rulesets: the public Python API.

>>> import pyarrow as pa
>>> from assay.dqdl import evaluate, parse
>>> ruleset = parse('Rules = [ RowCount > 0, IsComplete "id" ]')
>>> result = evaluate(ruleset, pa.table({"id": [1, 2, None]}))
>>> [(r.rule, r.outcome) for r in result.rules]
[('RowCount > 0', 'Passed'), ('IsComplete "id"', 'Failed')]
>>> result.to_dict()["score"]
0.5
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from assay.engine.registry import engine_factory, engine_for
from assay.judge.result import AnalyzerOutcome, EvaluationResult, RuleOutcome
from assay.lake.readers import ReadOptions
from assay.lang.dqdl import DQDLSyntaxError, DQDLWarning, parse_text, rule_text, ruleset_text
from assay.lang.dqdl.ast import Ruleset

if TYPE_CHECKING:
    from assay.store import MetricStore

__all__ = [
    "AnalyzerOutcome",
    "DQDLSyntaxError",
    "DQDLWarning",
    "EvaluationResult",
    "RuleOutcome",
    "Ruleset",
    "evaluate",
    "parse",
    "rule_text",
    "ruleset_text",
]


def parse(text: str, *, filename: str = "<ruleset>") -> Ruleset:
    """Parse DQDL text into a :class:`Ruleset`, or raise :class:`DQDLSyntaxError`.

    Warnings (text the parser ignored for compatibility) are dropped here; use
    :func:`assay.lang.dqdl.parse_text` to see them.
    """
    return parse_text(text, filename=filename).ruleset


def evaluate(
    ruleset: Ruleset | str,
    data: Any,
    *,
    references: Mapping[str, Any] | None = None,
    dataset: str | None = None,
    partition: str | None = None,
    store: MetricStore | None = None,
    now: datetime | str | None = None,
    composite_mode: str = "column",
    filtered_rows: str = "passed",
    row_level: bool = False,
    threads: int | None = None,
    workspace: str | None = None,
    read: ReadOptions | None = None,
    engine: Any = None,
) -> EvaluationResult:
    """Evaluate ``ruleset`` (a parsed :class:`Ruleset` or DQDL text) on ``data``.

    ``data`` and each of ``references`` (alias → data) is a path to a CSV, Parquet or JSON-lines
    file, a pyarrow Table, a pandas or polars DataFrame, or on the spark engine a table of the
    session (``"spark:db.table"``) or a Spark DataFrame (which runs on its own session when no
    ``engine`` is given). With ``dataset`` and ``store``, the
    evaluation's metrics are recorded under that dataset (and ``partition``) before judging,
    and dynamic rules (``last(k)``) and DetectAnomalies read the earlier ones. ``now`` fixes the
    clock for date and freshness rules. ``composite_mode`` is ``column`` (Glue's default) or
    ``row``; ``filtered_rows`` says how rows excluded by a where clause appear in row-level
    results (``passed`` or ``skipped``); ``row_level=True`` fills ``result.row_level``.
    ``threads`` caps the engine's threads (default: one per core). ``read`` says how files are
    read (null strings, delimiter, declared types: :class:`assay.lake.readers.ReadOptions`). A
    recorded evaluation is a run (:mod:`assay.platform.runs.run`): ``result.run_id`` names it, and its
    summary is written to ``<workspace>/runs/<run_id>.json``.

    ``engine`` is where the rules run: ``"duckdb"`` (the default, or ``ASSAY_ENGINE``),
    ``"spark"`` (a session on ``ASSAY_SPARK_MASTER``, default ``local[2]``), or a ``SparkSession``
    of your own, which the run uses and leaves running (docs/engines.md).
    """
    from assay.platform.flows import evaluate as run_evaluation

    if isinstance(ruleset, str):
        ruleset = parse(ruleset)
    return run_evaluation(
        ruleset,
        data,
        references=references,
        dataset=dataset,
        partition=partition,
        store=store,
        now=now,
        composite_mode=composite_mode,
        filtered_rows=filtered_rows,
        row_level=row_level,
        workspace=workspace,
        engine_factory=engine_factory(engine_for(engine, data), threads=threads),
        read=read,
    )
