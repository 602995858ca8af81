"""Apache Spark, through PySpark's public DataFrame and SQL API (so Spark Connect works too).

Every registered name is a temporary view of the session, named with a prefix unique to the
engine (``assay3f2a9c_1_primary``), so two engines on one session never see each other's
tables; queries name the registered tables (``primary``), and :meth:`SparkEngine.render` points
them at the engine's views. ``close`` drops the engine's own views and stops the session only
if the engine built it.

The session (its defaults, ``ASSAY_SPARK_CONF``) and the telling apart of a query's failures from
the machine's are :mod:`assay.engine.spark_session`; its names are importable from here too.
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from assay.engine import cells, dialect, spark_cluster
from assay.engine.base import Column, DataKind, Engine, EngineError, Reject, StagedText
from assay.engine.spark_session import (
    DEFAULT_CONF,
    DEFAULT_MASTER,
    build_session,
    failure,
    master_url,
    one_line,
    quiet,
    read_conf,
    rows_of,
    shuffle_partitions,
)
from assay.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from assay.lake.files import ReadOptions

__all__ = [
    "APPROX_DISTINCT_RSD",
    "DEFAULT_CONF",
    "DEFAULT_MASTER",
    "SPREAD_BYTES",
    "SparkEngine",
    "build_session",
    "kind_of",
    "master_url",
    "one_line",
    "read_conf",
]

SPREAD_BYTES = 16 << 20  # a staged CSV this large is spread over the shuffle partitions

_KINDS: tuple[tuple[str, DataKind], ...] = (
    (r"(tinyint|smallint|int|bigint|byte|short|integer|long)", DataKind.INTEGER),
    (r"(float|double|real)", DataKind.FLOAT),
    (r"decimal(\(.*\))?", DataKind.DECIMAL),
    (r"(string|varchar\(\d+\)|char\(\d+\))", DataKind.STRING),
    (r"boolean", DataKind.BOOLEAN),
    (r"date", DataKind.DATE),
    (r"timestamp(_ntz|_ltz)?", DataKind.TIMESTAMP),
)


def kind_of(type_name: str) -> DataKind:
    """The family of a Spark SQL type name (``DataType.simpleString()``).

    >>> [kind_of(t).value for t in ("bigint", "decimal(10,2)", "timestamp_ntz", "string", "array<int>")]
    ['integer', 'decimal', 'timestamp', 'string', 'other']
    """
    for pattern, kind in _KINDS:
        if re.fullmatch(pattern, type_name.lower()):
            return kind
    return DataKind.OTHER


_engines = itertools.count(1)
# a table name handed to SparkSession.table: one to three dotted parts, each an identifier or a
# backquoted name (a doubled backquote inside)
_PART = r"(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)+`)"
_TABLE_NAME = re.compile(rf"{_PART}(?:\.{_PART}){{0,2}}")
# The relative standard deviation of Spark's distinct-count estimate (HyperLogLog++). Spark's
# default, 0.05, strays 10 % from the exact count on 2,000 distinct values where DuckDB's estimate
# (a mean error of 2 %, measured) does not. At 0.02 the engines' estimates are alike; 0.01 would
# cost the profile of 20 columns 15 s more on every load (measured on 100,000 rows, local[2]),
# 0.02 costs it about 2.5 s (docs/engines.md).
APPROX_DISTINCT_RSD = 0.02


class SparkEngine(Engine):
    """A Spark session: queries render for the ``spark`` dialect and run as Spark SQL.

    >>> from assay.engine.spark import SparkEngine
    >>> SparkEngine.dialect
    'spark'
    """

    dialect = "spark"

    def __init__(
        self,
        session: SparkSession | None = None,
        *,
        master: str | None = None,
        conf: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        quiet()
        if session is None and not master_url(master).startswith("sc://"):
            # a session already running in this process (a notebook's, a test suite's) is used
            # and left running: getOrCreate would return it, and stopping it is not ours to do;
            # a Spark Connect URL always gets a session of its own on that server
            from pyspark.sql import SparkSession

            session = SparkSession.getActiveSession()
        self._owns_session = session is None
        self.session = session if session is not None else build_session(master, conf)
        self._prefix = f"assay{uuid.uuid4().hex[:6]}_{next(_engines)}_"
        self._views: dict[str, str] = {}  # registered name (lower case) -> the session's view
        self._cached: list[DataFrame] = []
        # a cluster's executors are processes of their own: what they need is checked before
        # they are given work (docs/operations.md, "Spark cluster")
        self._cluster = spark_cluster.on_cluster(self.session)
        self._reached: set[str] = set()
        if self._cluster:
            try:
                spark_cluster.check(self.session)
            except Exception:
                if self._owns_session:
                    self.session.stop()
                raise

    def __repr__(self) -> str:
        return f"SparkEngine({self._prefix!r})"

    def hex_number(self, digits: exp.Expr) -> exp.Expr:
        """``CAST(conv(digits, 16, 10) AS BIGINT)``: Spark's base conversion."""
        converted = exp.Anonymous(
            this="conv", expressions=[digits, exp.Literal.number(16), exp.Literal.number(10)]
        )
        return exp.cast(converted, exp.DataType.build("BIGINT"))

    # --- names ---------------------------------------------------------------------------------

    def _view(self, name: str) -> str:
        view = self._views.get(name.lower())
        if view is None:
            view = self._prefix + re.sub(r"\W", "_", name)
            self._views[name.lower()] = view
        return view

    def _publish(self, name: str, frame: DataFrame) -> None:
        try:
            frame.createOrReplaceTempView(self._view(name))
        except Exception as error:
            raise failure(error) from None

    def render(self, query: exp.Expr) -> str:
        """The query for Spark, its registered table names pointed at this engine's views (a
        CTE of the query keeps its own name)."""
        tree = _java_patterns(query.copy())
        for estimate in tree.find_all(exp.ApproxDistinct):
            if estimate.args.get("accuracy") is None:  # Spark's default is 5 %
                estimate.set("accuracy", exp.Literal.number(APPROX_DISTINCT_RSD))
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for source in list(tree.find_all(exp.From, exp.Join)):
            if isinstance(source.this, exp.Identifier):  # `from_(to_identifier(name))`
                source.set("this", exp.Table(this=source.this.copy()))
        for table in tree.find_all(exp.Table):
            if (
                table.args.get("db")
                or table.args.get("catalog")
                or not isinstance(table.this, exp.Identifier)
            ):
                continue
            original = table.name
            name = original.lower()
            if name in self._views and name not in ctes:
                if not table.alias:  # `primary.id` still names the table's columns
                    table.set("alias", exp.TableAlias(this=exp.to_identifier(original, quoted=True)))
                table.set("this", exp.to_identifier(self._views[name], quoted=True))
        return tree.sql(dialect=self.dialect)

    def _reach(self, read: Sequence[str] = (), write: Sequence[str] = ()) -> None:
        """On a cluster, that every executor reads ``read`` and can make ``write``, checked once each."""
        if not self._cluster:
            return
        reads = [p for p in read if p not in self._reached]
        writes = [p for p in write if p not in self._reached]
        if reads or writes:
            spark_cluster.check(self.session, reads, writes)
            self._reached.update(reads + writes)

    # --- registering ---------------------------------------------------------------------------

    def register_arrow(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        from pyspark.sql.pandas.types import from_arrow_schema

        table = data.read_all() if isinstance(data, pa.RecordBatchReader) else data
        try:
            if table.num_rows == 0:  # Spark Connect infers no schema from an empty Arrow table
                frame = self.session.createDataFrame([], schema=from_arrow_schema(table.schema))
            else:
                frame = self.session.createDataFrame(table)
        except TypeError:  # Spark 3.5 takes pandas, not Arrow
            # as Python rows with the schema given: pandas would hold an integer column with
            # nulls as floats with NaN, which Spark 3.5 refuses (exact, and slow for big tables;
            # the gate sends Spark small ones), and an empty table keeps its columns
            frame = self.session.createDataFrame(table.to_pylist(), schema=from_arrow_schema(table.schema))
        except Exception as error:
            raise failure(error) from None
        self._publish(name, frame)

    def register_dataframe(self, name: str, frame: DataFrame) -> None:
        """Make a Spark DataFrame of this engine's session queryable as table ``name``."""
        if frame.sparkSession is not self.session:
            raise ConfigError("the DataFrame belongs to another SparkSession than the run's")
        self._publish(name, frame)

    def register_table(self, name: str, table: str) -> None:
        """Make the session's table ``table`` (``db.table``, ``catalog.db.table``, or a temporary
        view's name) queryable as ``name``. The name is checked to be one (dotted identifiers,
        backquoted where they need it) and handed to ``SparkSession.table``, never put in SQL."""
        if not _TABLE_NAME.fullmatch(table):
            raise ConfigError(
                f"spark:{table}: not a table name; write db.table (quote a part with backquotes)"
            )
        try:
            frame = self.session.table(table)
            frame.schema  # noqa: B018 -- Spark Connect resolves a table only when asked for its schema
        except Exception as error:
            found = failure(error)
            if isinstance(found, EngineError):
                raise ConfigError(f"spark:{table}: {found.message}") from None
            raise found from None
        self._publish(name, frame)

    def register_file(self, name: str, path: str | list[str], fmt: str, compression: str = "none") -> None:
        paths = [path] if isinstance(path, str) else list(path)
        self._reach(read=paths)
        reader = self.session.read
        try:
            if fmt == "parquet":
                frame = reader.parquet(*paths)
            elif fmt == "json":
                # an array of objects is its rows (one document a file), else one object a line
                frame = reader.json(paths, multiLine=_starts_with_array(paths[0], compression))
            elif fmt == "jsonl":
                frame = reader.json(paths)
            else:
                raise EngineError(f"unknown file format {fmt!r}")
        except EngineError:
            raise
        except Exception as error:
            raise failure(error) from None
        self._publish(name, frame)

    @staticmethod
    def _csv_options(path: str, read: ReadOptions | None, compression: str) -> dict[str, str]:
        """Spark's reader options for a CSV read as ``read`` says: every cell as text, a blank
        cell the empty string, and only the given null strings NULL (one NUL character stands
        for "no null string": Spark reads its ``nullValue`` as NULL, and its default, the empty
        string, would make blanks NULL). The delimiter, when not given, is sniffed from the
        file's first bytes."""
        header = read.header if read is not None else True
        delimiter = read.delimiter if read is not None and read.delimiter else None
        if delimiter is None:
            delimiter = _sniff_delimiter(path, compression, read.encoding if read else "utf-8")
        quote = read.quote if read is not None and read.quote is not None else '"'
        return {
            "header": str(header).lower(),
            "sep": delimiter,
            "quote": quote,
            "escape": quote,  # RFC 4180: a quote inside a quoted cell is doubled
            "encoding": read.encoding if read is not None else "utf-8",
            "inferSchema": "false",
            "nullValue": "\u0000",
            "emptyValue": "",
            "multiLine": "true",  # quoted cells may hold line breaks
            "mode": "PERMISSIVE",
        }

    def _text_frame(
        self, path: str, read: ReadOptions | None, compression: str, options: dict[str, str] | None = None
    ) -> DataFrame:
        """The CSV with every cell as text, read with ``options`` (by default
        :meth:`_csv_options`)."""
        self._reach(read=(path,))
        options = options or self._csv_options(path, read, compression)
        header = options["header"] == "true"
        try:
            frame = self.session.read.options(**options).csv(path)
        except Exception as error:
            raise failure(error) from None
        if not header:  # DuckDB's (and assay's) names for a headerless file's columns
            frame = frame.toDF(*(f"column{i}" for i in range(len(frame.columns))))
        return frame

    def _null_strings(self, source: str, names: list[str], read: ReadOptions | None) -> exp.Select:
        """The text view: a cell equal to one of ``read.nulls`` is NULL."""
        nulls = [exp.Literal.string(v) for v in read.nulls] if read is not None else []
        projections: list[exp.Expr] = []
        for column in names:
            # Spark's reader makes an unquoted blank cell NULL whatever its nullValue: it is ""
            cell = exp.Coalesce(this=exp.column(column, quoted=True), expressions=[exp.Literal.string("")])
            value: exp.Expr = cell
            if nulls:
                value = exp.Case(
                    ifs=[
                        exp.If(
                            this=exp.In(this=cell.copy(), expressions=[n.copy() for n in nulls]),
                            true=exp.Null(),
                        )
                    ],
                    default=cell.copy(),
                )
            projections.append(exp.alias_(value, column, quoted=True))
        return exp.select(*projections).from_(exp.to_identifier(source, quoted=True))

    def register_csv_text(
        self, name: str, path: str, read: ReadOptions, compression: str = "none", *, whole_file: bool = False
    ) -> list[Column]:
        # Spark has no CSV sniffer: the delimiter is detected from the file's first bytes, and
        # the types by one aggregate query over every row (a sample would need a second pass
        # when a later row does not fit; Spark reads the whole file for either).
        raw = f"{name}__raw"
        frame = self._text_frame(path, read, compression)
        names = list(frame.columns)
        self._publish(raw, frame)
        self.register_query(name, self._null_strings(raw, names, read))
        return self._detect(name, names, read)

    def _detect(self, table: str, names: list[str], read: ReadOptions) -> list[Column]:
        shapes = {
            "BIGINT": r"^[+-]?(0|[1-9][0-9]{0,17})$",
            "DOUBLE": (
                r"^[+-]?([0-9]+(,[0-9]*)?|,[0-9]+)([eE][+-]?[0-9]+)?$"
                if read.decimal_comma
                else r"^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$"
            ),
            **cells.DATE_TIME_SHAPES,
        }
        if not names:
            return []
        projections: list[exp.Expr] = []
        for i, column in enumerate(names):
            value = cells.value(column, read)
            present = exp.Not(this=exp.Is(this=value, expression=exp.Null()))
            projections.append(exp.alias_(exp.func("count_if", present), f"n{i}"))
            for kind, shape in shapes.items():
                fits = exp.and_(
                    present.copy(), exp.RegexpLike(this=value.copy(), expression=exp.Literal.string(shape))
                )
                projections.append(exp.alias_(exp.func("count_if", fits), f"{kind}{i}"))
        scan = exp.select(*projections).from_(exp.to_identifier(table, quoted=True))
        row = self.inspect(scan).to_pylist()[0]
        columns = []
        for i, column in enumerate(names):
            filled = int(row[f"n{i}"] or 0)
            found = "VARCHAR"
            if filled:
                # the shapes of dates, date-times and zoned date-times are disjoint: a date is its
                # midnight, and a value without an offset in a zoned column is UTC (as on DuckDB)
                dates, timed, zoned = (int(row[f"{k}{i}"] or 0) for k in ("DATE", "TIMESTAMP", "TIMESTAMPTZ"))
                if row[f"BIGINT{i}"] == filled:
                    found = "BIGINT"
                elif row[f"DOUBLE{i}"] == filled:
                    found = "DOUBLE"
                elif dates == filled:
                    found = "DATE"
                elif dates + timed == filled:
                    found = "TIMESTAMP"
                elif dates + timed + zoned == filled:
                    found = "TIMESTAMPTZ"
            columns.append(Column(column, found, _DETECTED[found]))
        return columns

    def register_query(
        self, name: str, query: exp.Query, *, materialize: bool = False, unrepeated: bool = False
    ) -> None:
        try:
            frame = self.session.sql(self.render(query))
            if materialize:
                # held by Spark (memory, then disk), computed once on first read
                from pyspark import StorageLevel

                frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
                self._cached.append(frame)
        except Exception as error:
            raise failure(error) from None
        self._publish(name, frame)

    def inspect(self, query: exp.Query) -> pa.Table:
        return self._run(self.render(query))

    def read_csv_text(
        self, path: str, read: ReadOptions | None = None, compression: str = "none"
    ) -> tuple[pa.Table, list[Reject]]:
        # The records staged in Spark (stage_csv_text), then brought back in file order.
        row = "__csv_row"
        staged = self.stage_csv_text("__csv_text", path, read, compression, row=row)
        names = [c.name for c in self.columns(staged.name) if c.name != row]
        query = (
            exp.select(*(exp.column(n, quoted=True) for n in names))
            .from_(exp.to_identifier(staged.name, quoted=True))
            .order_by(exp.column(row, quoted=True))
        )
        return self.inspect(query), staged.rejects

    def stage_csv_text(
        self, name: str, path: str, read: ReadOptions | None, compression: str, *, row: str
    ) -> StagedText:
        # The records stay in Spark: each gets monotonically_increasing_id (its partition in the
        # upper bits, its place in the partition below), the frame is persisted so the ids are
        # computed once, and a record's line comes from the records counted per partition (one
        # small aggregate), as zipWithIndex would, without the RDD API (so Spark Connect works).
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        options = self._csv_options(path, read, compression)
        header, delimiter, quote = options["header"] == "true", options["sep"], options["quote"]
        frame = self._text_frame(path, read, compression, options)
        corrupt = "__corrupt"
        schema = StructType(
            [StructField(c, StringType()) for c in frame.columns] + [StructField(corrupt, StringType())]
        )
        try:
            from pyspark import StorageLevel

            checked = (
                self.session.read.options(**options, columnNameOfCorruptRecord=corrupt)
                .schema(schema)
                .csv(path)
                .withColumn(row, F.monotonically_increasing_id())
            )
            if _size(path) >= SPREAD_BYTES:
                # multiLine (a quoted cell may hold a line break) makes one task of a file:
                # spread over the shuffle partitions, so what reads the records runs in
                # parallel (a small file is not worth the shuffle)
                checked = checked.repartition(shuffle_partitions(self.session))
            checked = checked.persist(StorageLevel.MEMORY_AND_DISK)
            self._cached.append(checked)
            names = [c for c in checked.columns if c not in (corrupt, row)]
            # one job: the records per partition, and the rejected ones (a handful, if any)
            rejected = F.when(
                F.col(corrupt).isNotNull(), F.struct(F.col(row).alias("i"), F.col(corrupt).alias("t"))
            )
            found = (
                checked.groupBy(F.shiftright(F.col(row), 33).alias("p"))
                .agg(F.count(F.lit(1)).alias("n"), F.collect_list(rejected).alias("bad"))
                .collect()
            )
            per_partition = {int(r["p"]): int(r["n"]) for r in found}
            bad = sorted(((int(b["i"]), str(b["t"])) for r in found for b in r["bad"]), key=lambda b: b[0])
        except Exception as error:
            raise failure(error) from None
        # A file cut inside a quoted cell: Spark reads the cell to the end of the file as its
        # value; the record is rejected, as DuckDB's reader rejects it.
        filled = [p for p in sorted(per_partition) if per_partition[p]]
        last = (filled[-1] << 33) + per_partition[filled[-1]] - 1 if filled else None
        cut = None
        if last is not None and (not bad or bad[-1][0] != last):
            given = dialect.Dialect(delimiter, quote, tuple(names))
            cut = dialect.unclosed_last(path, compression, options["encoding"], given)
            if cut is not None:
                bad.append((last, cut))
        offsets, before = {}, 0
        for partition in sorted(per_partition):
            offsets[partition] = before
            before += per_partition[partition]
        staged = StagedText(name, before - len(bad), [], first_line=2 if header else 1, offsets=offsets)
        lines = staged.lines([i for i, _ in bad])
        staged.rejects = [
            Reject(line, text, dialect.reason(text, len(names), delimiter, quote))
            for line, (_, text) in zip(lines, bad, strict=True)
        ]
        self._publish(f"{name}__checked", checked)
        # blank cells as "", the given null strings as NULL: as register_csv_text reads them
        cells = self._null_strings(f"{name}__checked", names, read)
        kept: exp.Expr = exp.column(corrupt, quoted=True).is_(exp.null())
        if cut is not None:
            kept = exp.and_(
                kept, exp.NEQ(this=exp.column(row, quoted=True), expression=exp.Literal.number(last))
            )
        cells = cells.select(exp.column(row, quoted=True)).where(kept)
        self.register_query(name, cells)
        return staged

    def write_parquet(self, query: exp.Query, folder: Path) -> list[Path]:
        # Spark writes the files itself (its executors, in parallel); timestamps as INT64
        # microseconds, the Parquet type Iceberg reads, not Spark's legacy INT96.
        self._reach(write=(str(folder),))
        key = "spark.sql.parquet.outputTimestampType"
        try:
            before = self.session.conf.get(key, None)
            self.session.conf.set(key, "TIMESTAMP_MICROS")
            try:
                self.session.sql(self.render(query)).write.mode("error").parquet(str(folder))
            finally:
                if before is None:
                    self.session.conf.unset(key)
                else:
                    self.session.conf.set(key, before)
        except Exception as error:
            raise failure(error) from None
        return sorted(folder.glob("part-*.parquet"))

    # --- reading -------------------------------------------------------------------------------

    def columns(self, name: str) -> list[Column]:
        if name.lower() not in self._views:
            raise EngineError(f"Table {name} does not exist")
        try:
            schema = self.session.table(self._views[name.lower()]).schema
        except Exception as error:
            raise failure(error) from None
        return [
            Column(f.name, f.dataType.simpleString(), kind_of(f.dataType.simpleString()))
            for f in schema.fields
        ]

    def describe(self, query: exp.Query) -> list[Column]:
        try:
            schema = self.session.sql(self.render(query)).schema  # analysed, not run
        except Exception as error:
            raise failure(error) from None
        return [
            Column(f.name, f.dataType.simpleString(), kind_of(f.dataType.simpleString()))
            for f in schema.fields
        ]

    def _run(self, sql: str) -> pa.Table:
        try:
            return rows_of(self.session.sql(sql))
        except Exception as error:
            raise failure(error) from None

    def close(self) -> None:
        for frame in self._cached:
            try:
                frame.unpersist()
            except Exception:
                continue
        for view in self._views.values():
            try:
                self.session.catalog.dropTempView(view)
            except Exception:
                continue
        self._views.clear()
        self._cached.clear()
        if self._owns_session:
            self.session.stop()


def _size(path: str) -> int:
    """A local file's size in bytes (0 when it is not one: a cluster's path)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _java_patterns(tree: exp.Expr) -> exp.Expr:
    """The tree with DQDL's Java patterns as written: a regex that assay translated for RE2
    (DuckDB) goes to Spark's Java regex untranslated, and a ``format`` tag's Java date pattern
    goes to ``try_to_timestamp`` instead of the strftime codes DuckDB reads (which sqlglot would
    turn back into Java letters, losing ``dd`` = exactly two digits). docs/engines.md has the
    table.

    >>> from assay.rules.predicates import regex_full_match
    >>> _java_patterns(regex_full_match(exp.column("x"), "(?<y>[0-9]{4})")).sql("spark")
    "x RLIKE '^(?:(?<y>[0-9]{4}))$'"
    """
    for literal in tree.find_all(exp.Literal):
        if "java_regex" in literal.meta:
            literal.set("this", literal.meta["java_regex"])
    for node in list(tree.find_all(exp.StrToTime)):
        fmt = node.args.get("format")
        java = fmt.meta.get("java_format") if isinstance(fmt, exp.Literal) else None
        if java is not None:
            parsed = exp.Anonymous(this="try_to_timestamp", expressions=[node.this, exp.Literal.string(java)])
            if node is tree:
                return parsed
            node.replace(parsed)
    return tree


_DETECTED = {
    "BIGINT": DataKind.INTEGER,
    "DOUBLE": DataKind.FLOAT,
    "DATE": DataKind.DATE,
    "TIMESTAMP": DataKind.TIMESTAMP,
    "TIMESTAMPTZ": DataKind.TIMESTAMP,
    "VARCHAR": DataKind.STRING,
}


def _open_text(path: str, compression: str, encoding: str) -> Any:
    if compression == "gzip":
        return gzip.open(path, "rt", encoding=encoding, errors="replace", newline="")
    return open(path, encoding=encoding, errors="replace", newline="")


def _sniff_delimiter(path: str, compression: str, encoding: str) -> str:
    """The delimiter of a CSV from its first 64 KB (``,`` when nothing else fits)."""
    try:
        with dialect.text_of(path, compression, encoding) as handle:
            return dialect.sniff_delimiter(handle.read(dialect.SAMPLE))
    except (OSError, LookupError, EOFError):
        return ","


def _starts_with_array(path: str, compression: str) -> bool:
    try:
        with _open_text(path, compression, "utf-8") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return bool(head.lstrip().startswith("["))
