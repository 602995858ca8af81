"""How a flow reads a data file (``dqdl run``, ``gate``, ``profile``, and the Airflow operators
that run the last two): the reading options as the one value the readers take (docs/reading.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.lake.readers import ReadOptions


def read_options(
    null_value: Sequence[str] | None,
    delimiter: str | None,
    quote: str | None,
    no_header: bool,
    encoding: str,
    decimal_comma: bool,
    schema: Path | str | None = None,
) -> ReadOptions:
    """The reading options as one ReadOptions value, from the words of the commands' options
    (imported late: ``--help`` stays fast).

    >>> read_options(["NA"], ";", None, False, "utf-8", True).nulls
    ('NA',)
    """
    from assay.lake.readers import ReadOptions

    types = None
    if schema is not None:
        from assay.gate.schema import load_schema

        types = load_schema(Path(schema))
    return ReadOptions(
        nulls=tuple(null_value or ()),
        delimiter=delimiter,
        quote=quote,
        header=not no_header,
        encoding=encoding,
        decimal_comma=decimal_comma,
        types=types,
    )
