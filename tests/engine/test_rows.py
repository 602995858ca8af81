"""``Engine.rows``: DuckDB fetches a query's rows without Arrow, and they are the values Arrow's
``to_pylist`` gives (the profile reads its one row this way, so that ``assay profile`` of a
Parquet file does not import pyarrow)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
from sqlglot import exp

from assay.engine import DuckDBEngine

# One column of every type a profile or a metric reads, NULLs included.
TYPES = """
SELECT * FROM (VALUES
  (1::TINYINT, 2::SMALLINT, 3::INTEGER, 4::BIGINT, 12345678901234567890::HUGEINT, 5::UBIGINT,
   1.5::FLOAT, 2.5::DOUBLE, 'nan'::DOUBLE, 1.25::DECIMAL(10, 2), 123456789012345678.9::DECIMAL(38, 1),
   'text', '', true, DATE '2024-02-29', TIME '10:00:01', TIMESTAMP '2024-01-01 10:00:00.123456',
   TIMESTAMPTZ '2024-01-01 10:00:00+02', 'a'::BLOB, '6a1f0f33-1a7c-4a6e-9e1e-3f2b8a7c9d10'::UUID,
   [1, 2], [{'v': 'a', 'n': 1}], {'x': 1, 'y': 'b'}, TIMESTAMP_NS '2024-01-01 10:00:00.123456789'),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
) AS t(i1, i2, i4, i8, huge, ubig, f4, f8, nan, dec, wide, s, blank, b, d, tm, ts, tstz, blob,
       id, list, structs, struct, tsns)
"""


def test_rows_are_arrows_values_for_every_type_a_profile_reads() -> None:
    engine = DuckDBEngine()
    try:
        engine.con.sql(TYPES).create_view("t")
        query = exp.select(exp.Star()).from_("t")
        fetched, arrow = engine.rows(query), engine.query(query).to_pylist()
        assert engine.queries == 2
    finally:
        engine.close()
    assert len(fetched) == len(arrow) == 2
    for mine, theirs in zip(fetched, arrow, strict=True):
        assert list(mine) == list(theirs)
        for name, value in mine.items():
            other = theirs[name]
            if name == "nan":
                assert value is None or (value != value and other != other)
            elif name == "tsns" and value is not None:  # a datetime, to the microsecond
                assert value == other.to_pydatetime(warn=False)  # Arrow's is a pandas Timestamp
            elif name == "id" and value is not None:
                assert str(value) == str(other) or value.bytes == other
            else:
                assert value == other, name
                assert type(value) is type(other) or {type(value), type(other)} == {int, Decimal}, name
    assert fetched[0]["huge"] == 12345678901234567890 and fetched[0]["d"] == date(2024, 2, 29)


def test_rows_report_an_engine_failure_as_arrow_queries_do() -> None:
    engine = DuckDBEngine()
    try:
        query = exp.select(exp.func("error", exp.Literal.string("boom")))
        failures = []
        for run in (engine.rows, engine.query):
            try:
                run(query)
            except Exception as error:
                failures.append((type(error), str(error)))
        assert len(failures) == 2 and failures[0] == failures[1]
    finally:
        engine.close()


def _imported_by(args: list[str], packages: tuple[str, ...]) -> tuple[list[str], str]:
    """The modules of ``packages`` that ``assay ARGS`` imported (it may exit 0 or 1), and what
    it printed; run in a fresh interpreter."""
    script = (
        "import json, sys\n"
        "from assay.cli import main\n"
        f"sys.argv = ['assay', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert done.code in (None, 0, 1), done.code\n"
        f"found = sorted(m for m in sys.modules if m.split('.')[0] in {packages!r})\n"
        "print(json.dumps(found), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


def test_profiling_a_parquet_file_does_not_import_arrow(tmp_path: Path) -> None:
    data = tmp_path / "load.parquet"
    con = duckdb.connect()
    con.sql("SELECT range AS id, 'v' || (range % 3) AS venue FROM range(100)").write_parquet(str(data))
    con.close()
    args = ["profile", str(data), "--dataset", "d", "--load-date", "2026-01-01", "--workspace", str(tmp_path)]
    imported, printed = _imported_by(args, ("pyarrow", "numpy", "pandas"))
    assert imported == [] and "venue" in printed


def test_profiling_a_csv_does_not_import_pandas(tmp_path: Path) -> None:
    # pyarrow imports pandas to turn any Python value into Arrow (0.2 s): the reader's look at a
    # CSV's text columns for dates beside date-times keeps to the engine's Arrow data
    data = tmp_path / "load.csv"
    data.write_text("id,venue,at\n1,XLON,2024-01-01\n2,XPAR,2024-01-02 10:00\n3,,NA\n")
    args = ["profile", str(data), "--dataset", "d", "--load-date", "2026-01-01", "--workspace", str(tmp_path)]
    imported, printed = _imported_by(args, ("pandas",))
    assert imported == [] and "timestamp" in printed


def test_a_check_run_does_not_import_pandas(tmp_path: Path) -> None:
    # pyarrow imports pandas to turn a zoned timestamp (the trades' freshness) into Python: the
    # check run reads its measurement as the engine's rows instead (0.2 to 0.5 s a run)
    from assay.demo import trades

    document = trades.generate(tmp_path, 3)
    args = ["check", "run", str(document), "--at", "2026-11-03", "--workspace", str(tmp_path), "--dry-run"]
    imported, printed = _imported_by([*args, "--json", "-"], ("pandas",))
    assert imported == []
    assert "freshness" in printed  # the run measured the trades' freshness
