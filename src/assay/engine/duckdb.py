"""DuckDB, embedded: the default engine."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import duckdb
from sqlglot import exp

from assay.engine import dialect
from assay.engine.base import Column, DataKind, Engine, EngineError, Limits, Reject, engine_names
from assay.errors import PlatformError

if TYPE_CHECKING:
    import pyarrow as pa

    from assay.lake.readers import ReadOptions

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
    # the spill folder's cap is assay.yaml's engine: max_temp_directory_size, not a PRAGMA
    (re.compile(r"\s*By default, this setting utilizes.*PRAGMA max_temp_directory_size\S*", re.DOTALL), ""),
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


_JSON_COMPRESSION: dict[str, Literal["gzip", "zstd", "none"]] = {
    "gzip": "gzip",
    "zstd": "zstd",
    "none": "none",
}


def _as_text(names: Sequence[str]) -> exp.Struct:
    """``read_csv``'s ``columns``: each of ``names`` read as text."""
    return exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.Literal.string(n), expression=exp.Literal.string("VARCHAR"))
            for n in names
        ]
    )


def _csv_arguments(
    path: str,
    read: ReadOptions | None,
    compression: str,
    extra: dict[str, exp.Expr | str] | None = None,
    *,
    detect: bool = True,
) -> list[exp.Expr]:
    """The arguments of ``read_csv(path, ...)`` (or ``sniff_csv``) reading every cell as text, as
    ``read`` says; ``extra`` adds or overrides named arguments."""
    named: dict[str, exp.Expr | str | bool] = {"compression": compression}
    if detect:
        named["all_varchar"] = True
    if read is not None:
        named["header"] = read.header
        if read.delimiter is not None:
            named["delim"] = read.delimiter
        if read.quote is not None:
            named["quote"] = read.quote
        if read.encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            named["encoding"] = read.encoding
    else:
        named["header"] = True
    # Only the given null strings are NULL: a blank cell stays "" here, so that the reader (not
    # DuckDB) decides per column what a blank means. The reader needs a non-empty list; a NUL
    # character never is a whole CSV cell.
    nulls = [exp.Literal.string(v) for v in read.nulls] if read is not None and read.nulls else []
    named["nullstr"] = exp.Array(expressions=nulls or [exp.func("chr", exp.Literal.number(0))])
    named |= extra or {}
    arguments: list[exp.Expr] = [exp.Literal.string(path)]
    for key, value in named.items():
        if isinstance(value, bool):
            value = exp.Boolean(this=value)
        elif isinstance(value, str):
            value = exp.Literal.string(value)
        arguments.append(exp.EQ(this=exp.column(key), expression=value))
    return arguments


def _csv_source(
    path: str, read: ReadOptions | None, compression: str, extra: dict[str, exp.Expr | str] | None = None
) -> exp.Table:
    """``read_csv(path, ...)`` with every cell as text, as ``read`` says."""
    return exp.Table(
        this=exp.Anonymous(this="read_csv", expressions=_csv_arguments(path, read, compression, extra))
    )


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
    types_from_sample = True

    def __init__(self, *, threads: int | None = None, memory_limit: str | None = None) -> None:
        super().__init__()
        # UTC so that timestamp literals and `now()` mean the same instant everywhere; no
        # replacement scans, so a name in a query can only ever reach a registered table.
        # No extension is ever installed or loaded behind assay's back: a DuckDB source that is a
        # SQLite file made DuckDB fetch its sqlite extension over plain HTTP (issue 28).
        config: dict[str, str | bool | int | float | list[str]] = {
            "python_enable_replacements": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
        }
        if threads:
            config["threads"] = threads
        if memory_limit:
            config["memory_limit"] = memory_limit
        self.con = duckdb.connect(config=config)
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute("SET enable_progress_bar = false")  # a long CSV read must not draw on the terminal
        self._lock = threading.Lock()
        self._keep: list[object] = []
        self._materialized: dict[str, pa.Table] = {}  # register_query(materialize=True), by name
        self._rejects = 0

    def hex_number(self, digits: exp.Expr) -> exp.Expr:
        """``CAST('0x' || digits AS BIGINT)``: DuckDB reads a ``0x`` text as hex (4 times as fast
        as the portable default)."""
        return exp.cast(
            exp.DPipe(this=exp.Literal.string("0x"), expression=digits), exp.DataType.build("BIGINT")
        )

    def attach(self, path: Path | str, alias: str) -> None:
        """Attach a DuckDB database file, read-only, as catalog ``alias`` (a check document's
        ``duckdb`` source); the statement is built as a tree, never from the path's text."""
        attach = exp.Attach(
            this=exp.alias_(exp.Literal.string(str(path)), alias),
            expressions=[exp.AttachOption(this=exp.var("READ_ONLY"))],
        )
        try:
            self.con.execute(attach.sql(dialect=self.dialect))
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None

    def register_arrow(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        self._keep.append(data)
        self.con.register(name, data)

    def register_file(self, name: str, path: str | list[str], fmt: str, compression: str = "none") -> None:
        try:
            if fmt == "parquet":
                relation = self.con.read_parquet(path)
            elif fmt in ("json", "jsonl"):
                # ``json``: an array of objects is its rows, as is one object a line; never one row.
                packed: Literal["gzip", "zstd", "none", "auto_detect"] = _JSON_COMPRESSION.get(
                    compression, "auto_detect"
                )
                if fmt == "json":
                    relation = self.con.read_json(path, format="auto", compression=packed)
                else:
                    relation = self.con.read_json(path, format="newline_delimited", compression=packed)
            else:
                raise EngineError(f"unknown file format {fmt!r}")
            relation.create_view(name, replace=True)
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None

    def register_csv_text(
        self, name: str, path: str, read: ReadOptions, compression: str = "none", *, whole_file: bool = False
    ) -> list[Column]:
        # One detection (of a sample, or with ``whole_file`` of every row) gives the dialect and
        # the types; the view then reads the file with the dialect fixed, so that no query
        # detects again (a view over read_csv with detection on detected on every query: 0.3 s
        # each on a 100-column file, times a CTE per column in a profile).
        # A cell of spaces is blank, hence NULL in a number or date column (the view trims every
        # cell); detection compares whole cells, so the usual widths are named.
        spaces = [" " * n for n in range(1, 9)]
        nulls = [exp.Literal.string(v) for v in ("", *spaces, *read.null_tokens, *read.nulls)]
        typing: dict[str, exp.Expr | str] = {
            "sample_size": exp.Literal.number(-1 if whole_file else 20_480),
            "nullstr": exp.Array(expressions=nulls),
            "dateformat": "%Y-%m-%d",  # ISO only: 1/2/21 is 1 February or 2 January
            # no BOOLEAN: the engine reads Yes/No as booleans; they stay text
            "auto_type_candidates": exp.Array(
                expressions=[
                    exp.Literal.string(t)
                    for t in ("BIGINT", "DOUBLE", "DATE", "TIMESTAMP", "TIMESTAMPTZ", "VARCHAR")
                ]
            ),
        }
        if read.decimal_comma:
            typing["decimal_separator"] = ","
        found = self._sniff(path, read, compression, typing)
        if read.decimal_comma and read.delimiter is None and found[0] == ",":
            # Numbers written 2,5 are never split by commas: a file of numbers only (x;y then
            # 1,5;2,5) has more commas than semicolons a line, and the detection took the comma,
            # read the header as a bad line (skipped) and the first row as the header.
            found = self._sniff(path, read, compression, {**typing, "delim": ";"})
        delimiter, quote, escape, new_line, comment, skip, header, sniffed = found

        def text(value: str) -> str:
            return "" if value == "(empty)" else value

        fixed: dict[str, exp.Expr | str] = {
            "auto_detect": exp.false(),
            "delim": text(delimiter),
            "quote": text(quote),
            "escape": text(escape),
            "new_line": text(new_line),
            "comment": text(comment),
            "skip": exp.Literal.number(int(skip)),
            "header": exp.Boolean(this=bool(header)),
        }
        detected = [c["name"] for c in sniffed]
        wanted = self._header(path, read, compression, fixed, len(detected)) if header else None
        # The header's names as the file spells them (the detection trims their spaces and renames
        # "a" after " a " to "a_1": a rule on "a" read the other column), but a blank one, which
        # keeps the detection's name (column0 ...), and those the engine cannot hold apart.
        names = engine_names(
            [
                n if n is not None and n.strip() else d
                for n, d in zip(wanted or detected, detected, strict=True)
            ]
        )
        fixed["columns"] = _as_text([n for n, _ in names])
        arguments = _csv_arguments(path, read, compression, fixed, detect=False)
        source = exp.Table(this=exp.Anonymous(this="read_csv", expressions=arguments))
        self.register_query(name, exp.select(exp.Star()).from_(source))
        return [
            Column(n, c["type"], kind_of(c["type"]), was) for (n, was), c in zip(names, sniffed, strict=True)
        ]

    def _sniff(
        self, path: str, read: ReadOptions, compression: str, typing: dict[str, exp.Expr | str]
    ) -> Any:
        """The detected dialect and columns of a CSV file (``sniff_csv``)."""
        sniff = exp.Table(
            this=exp.Anonymous(
                this="sniff_csv", expressions=_csv_arguments(path, read, compression, typing, detect=False)
            )
        )
        columns = (
            "Delimiter",
            "Quote",
            "Escape",
            "NewLineDelimiter",
            "Comment",
            "SkipRows",
            "HasHeader",
            "Columns",
        )
        try:
            return self.con.sql(self.render(exp.select(*columns).from_(sniff))).fetchall()[0]
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None

    def _header(
        self, path: str, read: ReadOptions, compression: str, fixed: dict[str, exp.Expr | str], width: int
    ) -> list[str | None] | None:
        """The header line's cells, untrimmed, read with the detected dialect (None: unreadable,
        the detection's names stand)."""
        raw = {**fixed, "header": exp.false(), "columns": _as_text([f"c{i}" for i in range(width)])}
        source = exp.Table(
            this=exp.Anonymous(
                this="read_csv", expressions=_csv_arguments(path, read, compression, raw, detect=False)
            )
        )
        try:
            with self._lock:
                rows = self.con.sql(self.render(exp.select(exp.Star()).from_(source).limit(1))).fetchall()
        except duckdb.Error:
            return None
        return list(rows[0]) if rows else None

    def register_query(
        self, name: str, query: exp.Query, *, materialize: bool = False, unrepeated: bool = False
    ) -> None:
        try:
            if materialize:
                # Its rows as Arrow, registered: DuckDB builds an Arrow table of a million rows
                # of text in a third of the time it takes to build its own (compressed) table,
                # and reads either as fast. Like a batch's text, it is held in memory.
                with self._lock:
                    if unrepeated:
                        rows = self._without_common_subexpressions(self.render(query))
                    else:
                        rows = self.con.sql(self.render(query)).to_arrow_table()
                self._materialized[name.lower()] = rows
                self.con.register(name, rows)
            else:
                self.con.sql(self.render(query)).create_view(name, replace=True)
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None

    def _without_common_subexpressions(self, sql: str) -> pa.Table:
        """The rows of ``sql`` computed with the optimizer's elimination of common subexpressions
        off (the caller holds the lock): on a 1,500-column CSV's typed view it took 2.3 s of 3.4,
        and there was nothing in common to find."""
        (before,) = self.con.execute("SELECT current_setting('disabled_optimizers')").fetchone() or ("",)
        disabled = [o for o in str(before or "").split(",") if o.strip()]

        def disable(names: list[str]) -> str:
            value = exp.Literal.string(",".join(names))
            item = exp.SetItem(this=exp.EQ(this=exp.column("disabled_optimizers"), expression=value))
            return exp.Set(expressions=[item]).sql(dialect=self.dialect)

        self.con.execute(disable([*disabled, "common_subexpressions"]))
        try:
            return self.con.sql(sql).to_arrow_table()
        finally:
            self.con.execute(disable(disabled))

    def write_parquet(self, query: exp.Query, folder: Path) -> list[Path]:
        # DuckDB writes the file itself, in parallel; the path is a value, never SQL text
        folder.mkdir(parents=True, exist_ok=False)
        target = folder / f"{uuid.uuid4()}.parquet"
        with self._lock:
            try:
                self.con.sql(self.render(query)).write_parquet(str(target))
            except duckdb.Error as error:
                raise _failure(error, running=True) from None
        return [target]

    def inspect(self, query: exp.Query) -> pa.Table:
        return self._run(self.render(query))

    def read_csv_text(
        self, path: str, read: ReadOptions | None = None, compression: str = "none"
    ) -> tuple[pa.Table, list[Reject]]:
        self._rejects += 1
        table, scan = f"__rejects{self._rejects}", f"__reject_scans{self._rejects}"
        options: dict[str, exp.Expr | str] = {
            "store_rejects": exp.true(),
            "rejects_table": table,
            "rejects_scan": scan,
        }
        # The dialect given, never detected from lines that may be broken (assay.engine.dialect)
        given = dialect.detect(
            path,
            compression,
            read.encoding if read is not None else "utf-8",
            delimiter=read.delimiter if read is not None else None,
            quote=read.quote if read is not None else None,
            header=read.header if read is not None else True,
        )
        if given is not None:
            options |= {
                "auto_detect": exp.false(),
                "delim": given.delimiter,
                "quote": given.quote,
                "escape": given.quote,
                "columns": _as_text([n for n, _ in engine_names(given.names)]),
            }
        try:
            query = exp.select(exp.Star()).from_(_csv_source(path, read, compression, options))
            rows = self.con.sql(self.render(query)).to_arrow_table()
            found = self.con.table(table).select("line", "csv_line").fetchall()
            split = self.con.table(scan).select("delimiter", "quote").fetchall()
        except duckdb.Error as error:
            raise EngineError(_one_line(error)) from None
        delimiter, quote = (str(v).replace("(empty)", "") for v in split[0]) if split else (",", '"')
        rejected = dialect.one_per_line(
            Reject(int(line), str(text), dialect.reason(str(text), rows.num_columns, delimiter, quote))
            for line, text in found
        )
        return rows, rejected

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

    def rows(self, query: exp.Query, *, measuring: bool = True) -> list[dict[str, Any]]:
        # DuckDB's own Python values, which are Arrow's (to_pylist) for every type a profile or
        # a metric reads: a command that needs no Arrow table does not import pyarrow (0.1 s).
        # HUGEINT is an int, not a Decimal, an interval a timedelta, not Arrow's MonthDayNano,
        # and a TIMESTAMP_NS a datetime to the microsecond (Arrow needs pandas for its
        # nanoseconds); tests/engine/test_rows.py compares the two on those types.
        self.queries += measuring
        sql = self.render(query)
        with self._lock:
            try:
                relation = self.con.sql(sql)
                names = [column[0] for column in relation.description]
                return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
            except duckdb.Error as error:
                raise _failure(error, running=True) from None

    def bound(self, limits: Limits) -> dict[str, str]:
        """``SET`` each limit given (a size is DuckDB's own text, ``2GB``); what does not fit in
        ``memory_limit`` (a sort, a hash table, a materialized slice) spills to
        ``temp_directory``, which is created here: DuckDB creates only its last folder, and by
        default spills to ``.tmp`` in whatever folder the process started in.

        >>> import tempfile
        >>> engine = DuckDBEngine()
        >>> folder = Path(tempfile.mkdtemp()) / "tmp" / "duckdb" / "run"
        >>> applied = engine.bound(Limits(memory_limit="64MB", threads=1, temp_directory=folder))
        >>> applied["memory_limit"], applied["threads"], applied["temp_directory"] == str(folder)
        ('61.0 MiB', '1', True)
        """
        given: dict[str, str | int | None] = {
            "memory_limit": limits.memory_limit,
            "threads": limits.threads,
            "max_temp_directory_size": limits.max_temp_directory_size,
        }
        if limits.temp_directory is not None:
            limits.temp_directory.mkdir(parents=True, exist_ok=True)
            given["temp_directory"] = str(limits.temp_directory)
        for name, value in given.items():
            if value is None:
                continue
            literal = exp.Literal.number(value) if isinstance(value, int) else exp.Literal.string(value)
            item = exp.SetItem(this=exp.EQ(this=exp.column(name), expression=literal))
            try:
                self.con.execute(exp.Set(expressions=[item]).sql(dialect=self.dialect))
            except duckdb.Error as error:
                raise EngineError(f"{name} {value!r}: {_one_line(error)}") from None
        names = ("memory_limit", "threads", "temp_directory", "max_temp_directory_size")
        settings = exp.select(
            *(exp.alias_(exp.func("current_setting", exp.Literal.string(n)), n) for n in names)
        )
        (found,) = self.con.execute(settings.sql(dialect=self.dialect)).fetchall()
        return {n: str(v) for n, v in zip(names, found, strict=True)}

    def close(self) -> None:
        self.con.close()
