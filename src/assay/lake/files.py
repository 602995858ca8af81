"""What an input file is and how it is read: its format (from its name), its compression (from
its first bytes), where it is (a local path, or an ``s3://`` object read into a local copy), and
the reading options a user gives (:class:`ReadOptions`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.engine.cells import NULL_TOKENS
from assay.errors import ConfigError
from assay.lake import storage

if TYPE_CHECKING:
    import pyarrow as pa

# The one column of a table read without columns: the engine cannot hold a table without any, so
# it keeps the row count in one that no rule can see (ColumnCount = 0, RowCount = the rows).
PLACEHOLDER = "__assay_no_columns"

FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}

# Tokens that are NULL in a column inferred as a number, date or boolean (never in a text column,

# A scheme of two letters or more (C:/ is a drive), then "//" (or "/": pathlib folds the two).
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True)
class ReadOptions:
    """How input files are read; every field's default is the file's own (or Glue's) reading.

    - ``nulls``: cell values read as NULL in every column (``("NA", "NULL")``); by default only a
      blank cell of a number, date or boolean column is NULL.
    - ``delimiter``, ``quote``: one character each; None lets the reader detect them.
    - ``header``: False when the first line is data; columns are then named column0, column1, ...
    - ``encoding``: of a CSV file (``utf-8``, ``latin-1``, ``utf-16``).
    - ``decimal_comma``: numbers are written ``3,14`` (a CSV delimited by ``;``, or quoted).
    - ``types``: declared column types (a schema in the gate's format, see ``--schema``); a column
      it names is converted to that type, and a cell that does not convert is refused with its
      column and value; the other columns are inferred.
    - ``null_tokens``: cells read as NULL in number, date and time columns only (``NA``, ``N/A``,
      ``NULL``, ``null``), so that a column that is sometimes ``NA`` keeps its type.

    Compression (gzip, zstd) is detected from the file's first bytes, whatever its name.

    >>> ReadOptions(nulls=("NA",), delimiter=";").delimiter
    ';'
    """

    nulls: tuple[str, ...] = ()
    delimiter: str | None = None
    quote: str | None = None
    header: bool = True
    encoding: str = "utf-8"
    decimal_comma: bool = False
    types: pa.Schema | None = None
    null_tokens: tuple[str, ...] = NULL_TOKENS  # NULL in number, date and time columns only

    def __post_init__(self) -> None:
        for name in ("delimiter", "quote"):
            value = getattr(self, name)
            if value is not None and len(value) != 1:
                raise ConfigError(f"--{name}: give one character, not {value!r}")

    def recorded(self) -> dict[str, object]:
        """The options that differ from the defaults, as JSON values: what a run records so
        that its input can be read again as it was (``assay gate audit``); ``types`` aside.

        >>> ReadOptions(delimiter=";").recorded()
        {'delimiter': ';'}
        >>> ReadOptions.of_recorded(ReadOptions(nulls=("NA",)).recorded()) == ReadOptions(nulls=("NA",))
        True
        """
        default = ReadOptions()
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name in _RECORDED
            if (value := getattr(self, name)) != getattr(default, name)
        }

    @classmethod
    def of_recorded(cls, recorded: Mapping[str, Any]) -> ReadOptions:
        """The options :meth:`recorded` wrote (an unknown name is ignored: a later version's)."""
        chosen: dict[str, Any] = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in recorded.items()
            if name in _RECORDED
        }
        return cls(**chosen)


_RECORDED = ("nulls", "delimiter", "quote", "header", "encoding", "decimal_comma", "null_tokens")


def file_format(path: Path) -> str:
    """The format of a data file, from its suffix (a ``.gz`` or ``.zst`` suffix is looked through).

    >>> file_format(Path("accounts.csv")), file_format(Path("x.parquet")), file_format(Path("a.csv.gz"))
    ('csv', 'parquet', 'csv')
    """
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in (".gz", ".gzip", ".zst"):
        suffixes.pop()
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise ConfigError(
            f"{path}: unknown data file type '{path.suffix}'; use one of {known} (or .gz of one)"
        )
    return fmt


def compression(path: Path) -> str:
    """The file's compression from its first bytes: ``gzip``, ``zstd`` or ``none``."""
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic.startswith(_GZIP):
        return "gzip"
    if magic.startswith(_ZSTD):
        return "zstd"
    return "none"


def local_path(data: str | os.PathLike[str], *, what: str = "data file") -> Path:
    """``data`` as a local path: an ``s3://`` object is read into a local copy first
    (:func:`assay.lake.storage.stage`); another URL (``https://``) is refused.

    >>> local_path("https://example.com/x.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: https://example.com/x.csv: remote paths (https://) are not supported; ...
    """
    text = os.fspath(data)
    if storage.is_url(text):
        return storage.stage(text, what=what)
    match = _URL.match(text)
    if match:
        raise ConfigError(
            f"{text}: remote paths ({match.group(1)}://) are not supported; "
            "give a local path or an s3://bucket/key"
        )
    return Path(text)
