"""A batch's CSV dialect, given to the engine's reader rather than guessed by it, and the reason
a record did not split, in the user's words.

The gate reads a contributor's file whatever is wrong with some of its lines, so the dialect is
taken from what cannot be broken by a bad line: the delimiter given (``--delimiter``) or found in
the file's first 64 KB, the quote given or ``"`` (RFC 4180, a quote doubled inside a quoted cell),
and the header's names from its first record. DuckDB's own detection was given the whole file:
a short line as the file's last (a transfer cut mid-line) or an unclosed quote made it fail
("It was not possible to automatically detect the CSV parsing dialect") or read the file as one
column, or without quotes, so the same record was a parse error in one file and a value in
another. Both engines now read a batch with this one dialect.

A record that does not split into the header's columns is one :class:`~assay.engine.Reject`
(DuckDB's reader reports it once per missing or extra column: 14 rows for a line 14 fields
short), with :func:`reason`'s message.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

from assay.engine.base import Reject

SAMPLE = 64 * 1024  # characters read to find the delimiter (never the whole file)
DELIMITERS = ",;\t|"
UNCLOSED = "a quoted cell is not closed: the file ends inside it (cut short?)"


@dataclass(frozen=True)
class Dialect:
    """How a CSV batch splits: its delimiter, its quote (also its escape: a quote is doubled),
    and its columns' names (``column0``, ``column1``, ... for a file without a header, or for a
    blank name)."""

    delimiter: str
    quote: str
    names: tuple[str, ...]


def text_of(path: str, compression: str, encoding: str) -> TextIO:
    """The file as text, decompressed (gzip), with its line breaks as written (a byte-order mark
    of a UTF-8 file dropped, as the engines drop it)."""
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-8-sig"
    if compression == "gzip":
        return gzip.open(path, "rt", encoding=encoding, errors="replace", newline="")
    return open(path, encoding=encoding, errors="replace", newline="")


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a CSV from its start (``,`` when nothing else fits).

    >>> sniff_delimiter("a;b;c\\n1;2;3\\n"), sniff_delimiter("a\\n")
    (';', ',')
    """
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        first = sample.split("\n", 1)[0]
        counts = {d: first.count(d) for d in DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def detect(
    path: str, compression: str, encoding: str, *, delimiter: str | None, quote: str | None, header: bool
) -> Dialect | None:
    """The dialect of a CSV batch: ``delimiter`` and ``quote`` when given, else found as the
    module says; the names from the first record. None when Python cannot read the file's text
    (zstd: the engine's detection stands) or it has no record.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "b.csv"
    >>> _ = path.write_text("id;note\\n1;x\\n2\\n")
    >>> detect(str(path), "none", "utf-8", delimiter=None, quote=None, header=True)
    Dialect(delimiter=';', quote='"', names=('id', 'note'))
    """
    if compression not in ("gzip", "none"):
        return None
    quote = quote or '"'
    try:
        with text_of(path, compression, encoding) as handle:
            sample = handle.read(SAMPLE)
    except (OSError, LookupError, EOFError):
        return None
    delimiter = delimiter or sniff_delimiter(sample)
    # the first record of the sample (a header cut by the sample's end is still its names)
    first = next(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, quotechar=quote), None)
    if not first:
        return None
    if not header:
        return Dialect(delimiter, quote, tuple(f"column{i}" for i in range(len(first))))
    # blank names as DuckDB names them; spaces around a name dropped, as its detection did
    names = tuple(name.strip() or f"column{i}" for i, name in enumerate(first))
    return Dialect(delimiter, quote, names)


def reason(text: str, expected: int, delimiter: str, quote: str) -> str:
    """Why the record ``text`` (as the file has it) is not a row of ``expected`` columns.

    >>> reason("BANK_R,broken line", 16, ",", '"')
    '2 fields where the header has 16'
    >>> reason('B1,"a note, cut', 3, ",", '"')
    'a quoted cell is not closed: the file ends inside it (cut short?)'
    """
    try:
        split = csv.reader(
            io.StringIO(text, newline=""),
            delimiter=delimiter,
            quotechar=quote or None,
            quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE,
            strict=True,
        )
        first = next(split, [])
    except csv.Error:
        return UNCLOSED
    return f"{len(first)} field{'s' if len(first) != 1 else ''} where the header has {expected}"


def one_per_line(rejects: Iterable[Reject]) -> list[Reject]:
    """The rejects in line order, the first of each line only (DuckDB's reader reports a record
    once per missing or extra column)."""
    seen: dict[int, Reject] = {}
    for reject in rejects:
        seen.setdefault(reject.line, reject)
    return [seen[line] for line in sorted(seen)]


def unclosed_last(path: str, compression: str, encoding: str, dialect: Dialect) -> str | None:
    """The text of the record that a cut in the middle of a quoted cell left last in the file,
    or None. Spark's reader takes such a cell's
    text up to the end of the file as its value; DuckDB's rejects it. The quotes are counted
    first (an even number: nothing is open); only an odd number is parsed to be sure (a quote
    inside an unquoted cell is text, ``5"x``)."""
    mark = dialect.quote.encode()
    count = 0
    try:
        opener = gzip.open if compression == "gzip" else open
        with opener(path, "rb") as raw:
            for chunk in iter(lambda: raw.read(1 << 20), b""):
                count += chunk.count(mark)
    except OSError:
        return None
    if count % 2 == 0:
        return None
    with text_of(path, compression, encoding) as handle:
        text = handle.read()
    lines = _Counted(io.StringIO(text, newline=""))
    reader = csv.reader(lines, delimiter=dialect.delimiter, quotechar=dialect.quote, strict=True)
    start = 1
    try:
        for _ in reader:
            start = lines.read + 1
    except csv.Error:
        return "".join(io.StringIO(text, newline="").readlines()[start - 1 :])
    return None


class _Counted(Iterator[str]):
    """Lines of a text, counting those read (csv's ``line_num`` counts records' lines only once
    a record is complete)."""

    def __init__(self, handle: TextIO) -> None:
        self.handle, self.read = handle, 0

    def __next__(self) -> str:
        line = self.handle.readline()
        if not line:
            raise StopIteration
        self.read += 1
        return line
