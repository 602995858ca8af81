"""How the commands that read a data file (``dqdl run``, ``gate``, ``profile``) read it: their
"Reading input files" options, spelled once, and the one value they make (docs/reading.md).

Imported by :mod:`assay._cli_dqdl`, :mod:`assay._cli_gate` and :mod:`assay._cli_profile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

# How input files are read (docs/reading.md), spelled once for dqdl run, profile and gate.
_READING = "Reading input files"
NullValueOption = Annotated[
    list[str] | None,
    typer.Option(
        "--null-value",
        help="A cell value read as NULL in every column, e.g. NA or NULL (repeatable).",
        show_default="NA, N/A, NULL and null in number and date columns",
        rich_help_panel=_READING,
    ),
]
DelimiterOption = Annotated[
    str | None,
    typer.Option(help="The CSV delimiter, one character.", show_default="detected", rich_help_panel=_READING),
]
QuoteOption = Annotated[
    str | None,
    typer.Option(help="The CSV quote character.", show_default="detected", rich_help_panel=_READING),
]
NoHeaderOption = Annotated[
    bool,
    typer.Option(
        "--no-header",
        help="The CSV's first line is data; columns are named column0, column1, ...",
        rich_help_panel=_READING,
    ),
]
EncodingOption = Annotated[
    str, typer.Option(help="The CSV's encoding, e.g. latin-1 or utf-16.", rich_help_panel=_READING)
]
DecimalCommaOption = Annotated[
    bool,
    typer.Option("--decimal-comma", help="Numbers are written 3,14 (not 3.14).", rich_help_panel=_READING),
]
TypesOption = Annotated[
    Path | None,
    typer.Option(
        "--schema",
        help="Declared column types: a schema file in the gate's format (YAML).",
        show_default="types inferred from the file",
        rich_help_panel=_READING,
    ),
]


def read_options(
    null_value: list[str] | None,
    delimiter: str | None,
    quote: str | None,
    no_header: bool,
    encoding: str,
    decimal_comma: bool,
    schema: Path | None = None,
) -> Any:
    """The reading options as one ReadOptions value (imported late: ``--help`` stays fast)."""
    from assay.lake.readers import ReadOptions

    types = None
    if schema is not None:
        from assay.gate.schema import load_schema

        types = load_schema(schema)
    return ReadOptions(
        nulls=tuple(null_value or ()),
        delimiter=delimiter,
        quote=quote,
        header=not no_header,
        encoding=encoding,
        decimal_comma=decimal_comma,
        types=types,
    )
