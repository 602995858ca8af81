"""A Spark session for the engine: built with assay's defaults (``ASSAY_SPARK_MASTER``,
``ASSAY_SPARK_CONF``), its failures told apart (the query's fault, an :class:`EngineError` that a
rule reports as its outcome; or the machine's, a :class:`PlatformError` that stops the run), and
its DataFrames recognised without importing PySpark.

Session defaults, chosen for one small machine (any of them can be overridden with
``ASSAY_SPARK_CONF``, a file of ``key value`` lines): two shuffle partitions, no web UI, the
session time zone UTC (timestamp literals and ``now()`` mean one instant, as on DuckDB), and
ANSI mode **off** (``spark.sql.ansi.enabled false``): a division by zero is NULL, as DuckDB and
Glue's Spark 3 evaluate it, instead of failing the whole query; assay casts user values with
``TRY_CAST`` where a value may not convert, so no rule relies on a cast raising.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.engine.base import EngineError
from assay.errors import ConfigError, PlatformError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_MASTER = "local[2]"

# The session a SparkEngine builds when none is handed to it; ASSAY_SPARK_CONF overrides these.
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.log.level": "ERROR",
    # the gate persists its batch (text, then typed): an uncompressed cache builds in half the
    # time (5 s against 10 s for a million rows of 17 text columns on one core) for more memory
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    # a date that does not fit its Java pattern is NULL (Spark 4's default; Spark 3.5's,
    # EXCEPTION, fails the query where the pre-3.0 parser would have read it)
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
}


def read_conf(path: str | os.PathLike[str]) -> dict[str, str]:
    """Spark settings from a file of ``key value`` lines (``#`` starts a comment), the format of
    ``spark-defaults.conf``.

    >>> import tempfile
    >>> conf = Path(tempfile.mkdtemp()) / "spark.conf"
    >>> _ = conf.write_text("# small\\nspark.sql.shuffle.partitions 4\\nspark.driver.memory=2g\\n")
    >>> read_conf(conf)
    {'spark.sql.shuffle.partitions': '4', 'spark.driver.memory': '2g'}
    """
    settings: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"ASSAY_SPARK_CONF: cannot read {path}: {error.strerror or error}") from None
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"(\S+?)(?:\s*=\s*|\s+)(\S.*)", line)
        if match is None:
            raise ConfigError(f"{path}:{number}: expected 'key value', got {line!r}")
        settings[match.group(1)] = match.group(2).strip()
    return settings


# Failures of the machine, not of the query (the JVM, the driver or a cluster gone, a task lost):
# they stop the run as a system error (exit 3) instead of becoming a rule's Error outcome.
def failure(error: Exception) -> Exception:
    from pyspark.errors import PySparkException

    captured = (
        "AnalysisException",
        "ParseException",
        "IllegalArgumentException",
        "ArithmeticException",
        "NumberFormatException",
        "DateTimeException",
        "SparkRuntimeException",
        "ArrayIndexOutOfBoundsException",
        "SparkNoSuchElementException",
        "UnsupportedOperationException",
    )
    if isinstance(error, PySparkException) and any(c.__name__ in captured for c in type(error).__mro__):
        return EngineError(one_line(error))
    # A failure inside a task reaches Python as the JVM's stack trace: the query's fault when
    # Spark names an error class for it (an invalid pattern, a value that does not convert),
    # the machine's otherwise (memory, a lost executor).
    text = str(error)
    named = _ERROR_CLASS.search(text)
    if named is not None and not named.group(1).startswith(_SYSTEM_CLASSES):
        return EngineError(one_line(Exception(named.group(0))))
    causes = re.findall(r"Caused by: ([\w.$]+(?:Exception|Error)): ?(.*)", text)
    reason = f"{causes[-1][0].rsplit('.', 1)[-1]}: {causes[-1][1]}" if causes else one_line(error)
    if causes and causes[-1][0].rsplit(".", 1)[-1] in _QUERY_FAULTS:
        return EngineError(one_line(Exception(reason)))
    return PlatformError(f"the Spark engine failed: {one_line(Exception(reason))}")


_QUERY_FAULTS = frozenset(
    ("PatternSyntaxException", "NumberFormatException", "DateTimeParseException", "ArithmeticException")
)
_ERROR_CLASS = re.compile(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\] [^\n]*")
# error classes of the machine, not of the query
_SYSTEM_CLASSES = (
    "INTERNAL_ERROR",
    "FAILED_EXECUTE",
    "TASK_WRITE_FAILED",
    "UNABLE_TO_ACQUIRE_MEMORY",
    "SPARK_JOB_CANCELLED",
)


_CLEANUPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\s*Did you mean one of the following\?\s*\[[^\]]*\]\.?"), ""),
    (re.compile(r"\s*SQLSTATE: \w+"), ""),
    (re.compile(r";?\s*line \d+ pos \d+.*"), ""),
    (re.compile(r"\s*\(line \d+, pos \d+\).*"), ""),
    (re.compile(r"\s*Use `try_\w+`[^.]*\.(\s*If necessary set [^.]*\.)?"), ""),
    (re.compile(r"`?\bassay[0-9a-f]{6}_\d+_(\w+)`?"), r"\1"),  # the engine's view names: the user's
    (re.compile(r"`?\b__\w+`?"), "an internal value"),  # assay's own columns (__row, __freq0)
)


def one_line(error: Exception, limit: int = 400) -> str:
    """Spark's message on one line, fit for a user: its first paragraph, without the plan, the
    query echo, the SQLSTATE, the suggestions or assay's internal names.

    >>> one_line(Exception("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `x` cannot be "
    ...     "resolved. Did you mean one of the following? [`a`]. SQLSTATE: 42703; line 1 pos 7;\\n'Project"))
    '[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `x` cannot be resolved.'
    """
    text = str(error).strip().split("\n== SQL", 1)[0]
    text = text.split("\n", 1)[0] if not text.startswith("[PARSE") else text.split("\n\n", 1)[0]
    for pattern, replacement in _CLEANUPS:
        text = pattern.sub(replacement, text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def master_url(master: str | None = None) -> str:
    """The master a session is built for: ``master``, else ``ASSAY_SPARK_MASTER``, else ``local[2]``.

    >>> master_url("sc://host:15002")
    'sc://host:15002'
    """
    return master or os.environ.get("ASSAY_SPARK_MASTER") or DEFAULT_MASTER


def build_session(master: str | None = None, conf: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession for ``master`` (else ``ASSAY_SPARK_MASTER``, else ``local[2]``) with
    assay's defaults, then the settings of the ``ASSAY_SPARK_CONF`` file, then ``conf``."""
    from pyspark.sql import SparkSession

    settings = dict(DEFAULT_CONF)
    if os.environ.get("ASSAY_SPARK_CONF"):
        settings |= read_conf(os.environ["ASSAY_SPARK_CONF"])
    settings |= conf or {}
    url = master_url(master)
    # sc://host:15002 is a Spark Connect server (pyspark[connect]); anything else a master URL
    builder = (
        SparkSession.builder.remote(url) if url.startswith("sc://") else SparkSession.builder.master(url)
    )
    builder = builder.appName("assay")
    if url.startswith("sc://"):
        # a Connect server's static settings (its UI, its log level, its parallelism) are the
        # server's own: a client can set only the session's SQL settings, and would be warned
        # for each of the others; a setting from the user's file or ``conf`` is always sent
        settings = {k: v for k, v in settings.items() if k.startswith("spark.sql.") or k not in DEFAULT_CONF}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except ImportError as error:  # Spark Connect's client needs grpcio and friends
        raise ConfigError(
            f"Spark Connect ({url}) needs PySpark's connect client: pip install 'assay[spark-connect]'"
            f" ({one_line(error)})"
        ) from None
    except Exception as error:  # the JVM would not start: no Java, a bad master URL
        raise PlatformError(f"cannot start Spark: {one_line(error)}") from None


def quiet() -> None:
    # PySpark logs every failed query's stack trace at ERROR level through this Python logger; a
    # failing rule is an outcome assay reports, not an error of the process.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)


def is_spark_dataframe(data: Any) -> bool:
    """Whether ``data`` is a PySpark DataFrame (classic or Spark Connect), without importing
    PySpark."""
    kind = type(data)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pyspark.sql")


def shuffle_partitions(session: SparkSession) -> int:
    """The session's ``spark.sql.shuffle.partitions`` (200 when unreadable, Spark's default)."""
    try:
        return max(1, int(session.conf.get("spark.sql.shuffle.partitions") or 200))
    except (ValueError, TypeError):
        return 200


def rows_of(frame: DataFrame) -> pa.Table:
    """A query's rows as Arrow, without Spark's column metadata (Spark 4: ``toArrow``; 3.5:
    through pandas)."""
    import pyarrow as pa  # not on import: the file readers import this module for is_spark_dataframe

    if hasattr(frame, "toArrow"):
        table = frame.toArrow()
    else:  # Spark 3.5: through pandas, then back to the query's own types (pandas holds an
        # integer column with nulls as floats; exact below 2**53)
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema)
        table = pa.Table.from_pandas(frame.toPandas(), schema=schema, preserve_index=False)
    fields = [pa.field(f.name, f.type, f.nullable) for f in table.schema]
    return table.cast(pa.schema(fields)) if any(f.metadata for f in table.schema) else table
