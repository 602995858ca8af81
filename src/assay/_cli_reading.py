"""How the commands that read a data file (``dqdl run``, ``gate``, ``profile``) read it: their
"Reading input files" options, spelled once (docs/reading.md); the one value they make is
:func:`assay.platform.reading.read_options`'s.

Imported by :mod:`assay._cli_dqdl`, :mod:`assay._cli_gate` and :mod:`assay._cli_profile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
