"""DuckDB, embedded: the default engine."""

from __future__ import annotations

import re
import threading

import duckdb
import pyarrow as pa
from sqlglot import exp

from assay.engine.base import Column, DataKind, Engine, EngineError, Reject
from assay.errors import PlatformError

_KINDS: tuple[tuple[str, DataKind], ...] = (
    (
        r"(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)",
        DataKind.INTEGER,
    ),
    (r"(FLOAT|DOUBLE|REAL)", DataKind.FLOAT),
    (r"DECIMAL(\(.*\))?", DataKind.DECIMAL),
    (r"(VARCHAR|TEXT|STRING|UUID)", DataKind.STRING),
    (r"BOOLEAN", DataKind.BOOLEAN),
    (r"DATE", DataKind.DATE),
    (r"(TIMESTAMP.*|DATETIME)", DataKind.TIMESTAMP),
)


def kind_of(type_name: str) -> DataKind:
    """The family of a DuckDB type name.

    >>> kind_of("DECIMAL(4,2)"), kind_of("VARCHAR"), kind_of("TIMESTAMP WITH TIME ZONE")
    (<DataKind.DECIMAL: 'decimal'>, <DataKind.STRING: 'string'>, <DataKind.TIMESTAMP: 'timestamp'>)
    """
    for pattern, kind in _KINDS:
        if re.fullmatch(pattern, type_name):
            return kind
    return DataKind.OTHER


# Failures of the machine, not of the query: they stop the run as a system error (exit 3) instead
# of becoming a rule's Error outcome, which would blame the rule's author for the engine's fault.
_SYSTEM_FAILURES: tuple[type[duckdb.Error], ...] = (
    duckdb.OutOfMemoryException,
    duckdb.InternalException,
    duckdb.FatalException,
    duckdb.InterruptException,
)


def _failure(error: duckdb.Error, *, running: bool = False) -> Exception:
    """The engine's error as assay reports it: a :class:`PlatformError` when the machine failed
    (memory, an I/O error while a query ran, a crash inside DuckDB), else an :class:`EngineError`.

    >>> type(_failure(duckdb.OutOfMemoryException("Out of Memory Error: could not allocate"))).__name__
    'PlatformError'
    """
    if isinstance(error, _SYSTEM_FAILURES) or (running and isinstance(error, duckdb.IOException)):
        # DuckDB's own remedies ("SET threads=X", a link) name settings a user of assay cannot set
        reason = _one_line(error).split(" Possible solutions:")[0]
        return PlatformError(f"the DuckDB engine failed: {reason}")
    return EngineError(_one_line(error))


# How DuckDB's messages are made fit for a user (every EngineError goes through
# `_one_line`): each row is (pattern, replacement), applied in order. The user never wrote the
# query assay sent, so its echo and the internal names in it say nothing to them, and DuckDB's
# remedies (`SET ...`) are settings assay owns, not the user.
_CLEANUPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-9;]*[A-Za-z]"), ""),  # ANSI colours and underlines
    (re.compile(r"\n\s*LINE \d+:.*", re.DOTALL), ""),  # the echo of assay's query, with a caret
    (re.compile(r"\s*Candidate (?:bindings|functions|tables):.*", re.DOTALL), ""),
    (re.compile(r"\s*Did you mean[^?]*\?"), ""),
    (
        re.compile(r"Max expression depth limit of (\d+) exceeded\..*", re.DOTALL),
        r"the expression is nested more than \1 levels deep, deeper than the engine can evaluate",
    ),
    (re.compile(r"\s*(?:Use|Try|Consider)\b[^.]*\bSET\b[^.]*\.?"), ""),  # engine settings as a remedy
    (re.compile(r" when casting from source column \"?__\w+\"?"), ""),
    (re.compile(r'"?\b__\w+"?'), "an internal value"),  # assay's own columns and tables (__row, __freq0)
)


def _one_line(error: Exception, limit: int = 400) -> str:
    """The engine's message on one line, fit for a user: no query echo, internal names, engine
    settings or colour codes, cut before its list of candidate functions.

    >>> _one_line(Exception('Parser Error: Max expression depth limit of 1000 exceeded. Use "SET '
    ...     'max_expression_depth TO x" to increase the maximum expression depth.'))
    'Parser Error: the expression is nested more than 1000 levels deep, deeper than the engine can evaluate'
    >>> _one_line(Exception('Binder Error: Referenced column "x" not found!\\nCandidate bindings: "__row"'))
    'Binder Error: Referenced column "x" not found!'
    """
    text = str(error)
    for pattern, replacement in _CLEANUPS:
        text = pattern.sub(replacement, text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class DuckDBEngine(Engine):
    """An in-process DuckDB database.

    >>> import pyarrow as pa
    >>> from sqlglot import exp
    >>> engine = DuckDBEngine()
    >>> engine.register_arrow("t", pa.table({"a": [1, 2]}))
    >>> engine.query(exp.select(exp.func("max", exp.column("a"))).from_("t")).to_pylist()
    [{'max(a)': 2}]
    """

    dialect = "duckdb"

    def __init__(self, *, threads: int | None = None, memory_limit: str | None = None) -> None:
        super().__init__()
        # UTC so that timestamp literals and `now()` mean the same instant everywhere; no
        # replacement scans, so a name in a query can only ever reach a registered table.
        config: dict[str, str | bool | int | float | list[str]] = {"python_enable_replacements": False}
        if threads:
            config["threads"] = threads
        if memory_limit:
            config["memory_limit"] = memory_limit
        self.con = duckdb.connect(config=config)
        self.con.execute("SET TimeZone = 'UTC'")
        self._lock = threading.Lock()
        self._keep: list[object] = []
        self._rejects = 0

    def register_arrow(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        self._keep.append(data)
        self.con.register(name, data)

    def register_file(self, name: str, path: str | list[str], fmt: str) -> None:
        try:
            if fmt == "parquet":
                relation = self.con.read_parquet(path)
            elif fmt == "csv":
                relation = self._read_csv(path)
            elif fmt == "jsonl":
                relation = self.con.read_json(path, format="newline_delimited")
            else:
                raise EngineError(f"unknown file format {fmt!r}")
            relation.create_view(name, replace=True)
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None

    def _read_csv(self, path: str | list[str]) -> duckdb.DuckDBPyRelation:
        # Glue reads a blank cell of a string column as "" rather than NULL, so Completeness
        # counts it as complete (DQDL.md §10.3); numbers and dates stay NULL when blank.
        sniffed = self.con.read_csv(path, header=True)
        strings = [
            name
            for name, type_ in zip(sniffed.columns, sniffed.types, strict=True)
            if str(type_) == "VARCHAR"
        ]
        if not strings:
            return sniffed
        return self.con.read_csv(path, header=True, force_not_null=strings)

    def read_csv_text(self, path: str) -> tuple[pa.Table, list[Reject]]:
        self._rejects += 1
        table, scan = f"__rejects{self._rejects}", f"__reject_scans{self._rejects}"
        try:
            relation = self.con.read_csv(
                path,
                header=True,
                all_varchar=True,
                store_rejects=True,
                rejects_table=table,
                rejects_scan=scan,
            )
            rows = relation.to_arrow_table()
            found = self.con.table(table).select("line", "csv_line", "error_message").fetchall()
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None
        rejects = sorted(
            (Reject(int(line), str(text), _one_line(Exception(message))) for line, text, message in found),
            key=lambda r: r.line,
        )
        return rows, rejects

    def columns(self, name: str) -> list[Column]:
        try:
            relation = self.con.table(name)
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None
        return [
            Column(column, str(type_), kind_of(str(type_)))
            for column, type_ in zip(relation.columns, relation.types, strict=True)
        ]

    def describe(self, query: exp.Query) -> list[Column]:
        try:
            relation = self.con.sql(self.render(query))
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None
        return [
            Column(column, str(type_), kind_of(str(type_)))
            for column, type_ in zip(relation.columns, relation.types, strict=True)
        ]

    def _run(self, sql: str) -> pa.Table:
        with self._lock:
            try:
                return self.con.sql(sql).to_arrow_table()
            except duckdb.Error as error:
                raise _failure(error, running=True) from None

    def close(self) -> None:
        self.con.close()
