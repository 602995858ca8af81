"""A simulated credit bureau: the monthly account files of banks and instalment lenders, and their faults.

The seed's bureau (seeds/000) receives one CSV a month from each contributor and validates it against
``data/bureau_rules.csv``, trend rules included: each row is compared with the same account's previous
statement. A :class:`Bureau` produces those files, clean by construction, so that a demo, a test or a
benchmark can plant *known* faults in them and assert exactly which rows the gate catches.

Every value is a pure function of (seed, contributor, account serial, month), drawn by DuckDB's
``hash`` of those integers: month 12 is the same table whether or not months 0-11 were generated first,
and a million-row month is one vectorised query. Accounts evolve without breaking any rule:

- limits and the instalment change only at an account's periodic review, a month whose status is
  ``ADMIN_CHANGE`` (rules T01-T03); a closing month keeps the limits of the month before;
- months in arrears follow late-payment episodes that climb and fall back by one a month (T04 allows
  two), and an amount in arrears is the missed instalments (T05); 3+ months behind is ``DEFAULT``;
- a few percent of accounts open (``N``) and close (``C``, once, then never again) each month, always
  with nothing in arrears, so row counts and arrears totals move smoothly (A01, A02);
- a write-off climbs to 8 months behind (4 at an instalment lender), is reported ``WRITTEN_OFF``
  while recoveries bring the arrears down two months at a time, and closes at zero.

The seed (``seed``) goes through ``random.Random`` into one salt per contributor. A01 holds by the law
of large numbers, not by construction: books of 250 accounts or more keep their arrears total above
half of last month's; a few dozen accounts in arrears are too lumpy for it.

>>> bureau = Bureau()
>>> january = bureau.month("BANK_A", 0)
>>> january.num_rows
400

Faults to plant in these files, with what a correct gate must do with them, are in
:mod:`assay.demo.faults`.
"""

from __future__ import annotations

import calendar
import csv
import io
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv

from assay.errors import ConfigError

Row = dict[str, Any]

SCHEMA = pa.schema(
    [
        ("contributor_id", pa.string()),
        ("account_id", pa.string()),
        ("statement_date", pa.date32()),
        ("operation_code", pa.string()),
        ("product_type", pa.string()),
        ("new_ic", pa.string()),
        ("old_ic", pa.string()),
        ("passport_no", pa.string()),
        ("account_status", pa.string()),
        ("credit_limit", pa.int64()),
        ("product_limit", pa.int64()),
        ("temporary_limit", pa.int64()),
        ("instalment_amount", pa.int64()),
        ("outstanding_balance", pa.int64()),
        ("month_in_arrears", pa.int64()),
        ("amount_in_arrears", pa.int64()),
    ]
)
"""The contract of every account file: these columns, in this order. Amounts are whole currency units."""


@dataclass(frozen=True)
class Contributor:
    """A lender that sends the bureau one account file a month.

    ``type`` selects the ruleset (``bank`` or ``instalment``); ``accounts`` is the size of the book in
    its first month; ``since`` is the month index of its first file, so ``since=12`` is a contributor
    that joins a year after the others and whose first file has no history at all.

    >>> Contributor("NEWPAY", "instalment", 250, since=12).since
    12
    """

    id: str
    type: str
    accounts: int
    since: int = 0


DEFAULT_CONTRIBUTORS = (
    Contributor("BANK_A", "bank", 400),
    Contributor("BANK_B", "bank", 300),
    Contributor("BANK_C", "bank", 250),
    Contributor("PAYLATER", "instalment", 500),
    Contributor("EASYPAY", "instalment", 350),
)


@dataclass(frozen=True)
class Profile:
    """How the portfolio of one contributor type moves from month to month."""

    open_rate: float  # accounts opened a month, as a share of the first book (jittered ±25%)
    closure_rate: float  # monthly chance that an account is closed early; loans also close at term
    episode_rate: float  # chance that an account falls behind (at least once) in an arrears window
    write_off_share: float  # share of accounts whose life ends in a write-off rather than a settlement
    window: int  # months of an arrears window: episodes are shorter and more frequent at instalment lenders


PROFILES: Mapping[str, Profile] = {
    "bank": Profile(open_rate=0.015, closure_rate=0.012, episode_rate=0.3, write_off_share=0.08, window=12),
    "instalment": Profile(
        open_rate=0.03, closure_rate=0.02, episode_rate=0.3, write_off_share=0.12, window=6
    ),
}


@dataclass(frozen=True)
class Product:
    """A product a contributor type sells: its share of accounts, limits, term and review cycle.

    Revolving products (``term == (0, 0)``) have a utilisation that moves every month and a minimum
    payment; loans amortise over a term, pay a fixed instalment and close when the term ends. A review
    (every ``review`` months, drawn per account) raises the product limit by 15-50% of the original
    and redraws the temporary limit: those are the months reported as ``ADMIN_CHANGE``.
    """

    name: str
    kind: str
    weight: float
    limit: tuple[int, int]  # original product limit, drawn log-uniformly in this range
    unit: int  # limits are whole multiples of this
    term: tuple[int, int]  # months, drawn in whole arrears windows (years at a bank); (0, 0) if revolving
    rate: float  # flat yearly interest of a loan
    payment: float  # minimum payment of revolving credit, as a share of the credit limit
    temporary: float  # chance that a review period carries a temporary limit
    delinquency: float  # how often accounts fall behind, relative to the contributor type's episode rate
    review: tuple[int, int]  # months between two reviews
    horizon: int  # the oldest revolving account in the first book, in months


PRODUCTS = (
    Product("CARD", "bank", 0.45, (2_000, 60_000), 100, (0, 0), 0.0, 0.05, 0.3, 1.2, (9, 36), 120),
    Product("PERSONAL", "bank", 0.25, (5_000, 150_000), 100, (36, 84), 0.08, 0.0, 0.0, 1.2, (24, 72), 0),
    Product("AUTO", "bank", 0.18, (30_000, 250_000), 100, (60, 108), 0.05, 0.0, 0.0, 0.8, (36, 96), 0),
    Product(
        "MORTGAGE", "bank", 0.12, (100_000, 1_000_000), 1_000, (240, 420), 0.045, 0.0, 0.0, 0.4, (36, 120), 0
    ),
    Product("BNPL", "instalment", 0.7, (300, 3_000), 10, (0, 0), 0.0, 1 / 3, 0.15, 1.0, (6, 18), 36),
    Product("INSTALMENT", "instalment", 0.3, (500, 10_000), 10, (6, 24), 0.1, 0.0, 0.0, 1.0, (12, 36), 0),
)

# Macros of the month query. draw() is a uniform number in [0, 1) keyed by integers. Arrears come in
# episodes inside windows of an account's age (12 months at a bank, 6 at an instalment lender): an episode
# starts at offset >= 1, climbs one month at a time to its peak and falls back one month at a time, so it
# is over before the window ends and consecutive months never differ by more than one (T04 allows two).
_MACROS = """
CREATE MACRO draw(key, stream, n) AS
    hash(key, CAST(stream AS BIGINT), CAST(n AS BIGINT)) / 18446744073709551616.0;
CREATE MACRO whole(x, unit) AS CAST(round(x / unit) AS BIGINT) * unit;
CREATE MACRO peak(u, w) AS least(w // 2, 1 + CAST(floor(-ln(1 - u) / ln(2)) AS BIGINT));
CREATE MACRO episode(t, h) AS
    CASE WHEN t < 0 THEN 0 WHEN t < h THEN t + 1 ELSE greatest(0, 2 * h - 1 - t) END;
CREATE MACRO onset(u, h, w) AS 1 + CAST(floor(u * (w - 2 * h + 1)) AS BIGINT);
CREATE MACRO behind(key, age, rate, w) AS
    CASE WHEN draw(key, 20, age // w) < rate
         THEN episode(age % w - onset(draw(key, 21, age // w), peak(draw(key, 22, age // w), w), w),
                      peak(draw(key, 22, age // w), w))
         ELSE 0 END;
"""

# One month of one contributor. Ages are in months; an account closes at the end of an arrears window
# (so never while behind). A write-off replaces the account's last window with a climb to 2/3 of the
# window (DEFAULT from three months on), WRITTEN_OFF from the peak while recoveries bring the arrears
# down two months at a time, and a closing row at zero: the arrears total never loses an account at once.
_MONTH = """
WITH cohort AS (
    SELECT range AS opened,
           CASE WHEN range = $since THEN $accounts
                ELSE CAST(round($accounts * $open_rate * (0.75 + 0.5 * draw($salt, 50, range))) AS BIGINT)
           END AS n
    FROM range($since, $index + 1)
), serial AS (
    SELECT opened, unnest(range(first, first + n)) AS serial
    FROM (SELECT opened, n, CAST(sum(n) OVER (ORDER BY opened) AS BIGINT) - n AS first FROM cohort)
), keyed AS (
    SELECT opened, serial, hash($salt, serial) AS key FROM serial
), account AS (
    SELECT k.opened, k.serial, k.key, p.*,
           CASE WHEN p.term_low = 0 THEN 0
                ELSE $window * (p.term_low // $window + CAST(floor(draw(k.key, 9, 0)
                     * (p.term_high // $window - p.term_low // $window + 1)) AS BIGINT))
           END AS term,
           p.review_low + CAST(floor(draw(k.key, 6, 0) * (p.review_high - p.review_low + 1)) AS BIGINT)
               AS review,
           p.limit_low * pow(p.limit_high / p.limit_low, draw(k.key, 4, 0)) AS base,
           0.15 + 0.35 * draw(k.key, 5, 0) AS growth,
           1 + CAST(floor(ln(1 - draw(k.key, 10, 0)) / ln(1 - $closure_rate)) AS BIGINT) AS lifetime,
           draw(k.key, 11, 0) < $write_off_share AS written_off,
           draw(k.key, 2, 0) AS identity
    FROM keyed AS k
    JOIN products AS p ON draw(k.key, 1, 0) >= p.pick_from AND draw(k.key, 1, 0) < p.pick_to
), aged AS (
    SELECT *,
           CASE WHEN opened = $since
                THEN CAST(floor(draw(key, 8, 0) * CASE WHEN term = 0 THEN horizon ELSE term END) AS BIGINT)
                ELSE 0 END AS age0
    FROM account
), dated AS (
    SELECT *, opened + close_age - age0 AS closed
    FROM (SELECT *, CASE WHEN term = 0 THEN ends ELSE least(ends, term) END AS close_age
          FROM (SELECT *, $window * ((age0 + lifetime + $window - 1) // $window) AS ends FROM aged))
), present AS (
    SELECT *, age0 + $index - opened AS age, $index = closed AS closing,
           written_off AND age0 + $index - opened >= close_age - $window // 3 AS charged
    FROM dated WHERE closed >= $index
), state AS (
    SELECT *,
           CASE WHEN written_off AND age >= close_age - $window
                THEN least(age - close_age + $window, 2 * (close_age - age))
                WHEN closing THEN 0
                ELSE behind(key, age, $episode_rate * delinquency, $window) END AS month_in_arrears,
           -- limits move only on ADMIN_CHANGE rows: never on a closing row or once written off
           CASE WHEN charged THEN greatest(age0, close_age - $window // 3 - 1)
                WHEN closing THEN age - 1
                ELSE age END AS limit_age
    FROM present
), limits AS (
    SELECT *, whole(base * (1 + growth * epoch), unit) AS product_limit,
           CASE WHEN draw(key, 30, epoch) < temporary
                THEN whole(base * (1 + growth * epoch) * (0.1 + 0.2 * draw(key, 31, epoch)), unit)
                ELSE 0 END AS temporary_limit
    -- reviews since the first file: the first book starts at its original limits
    FROM (SELECT *, limit_age // review - age0 // review AS epoch FROM state)
), amounts AS (
    SELECT *, product_limit + temporary_limit AS credit_limit,
           CASE WHEN term = 0
                THEN CAST(greatest(50, ceil((product_limit + temporary_limit) * payment)) AS BIGINT)
                ELSE CAST(ceil(product_limit * (1 + rate * term / 12) / term) AS BIGINT)
           END AS instalment_amount
    FROM limits
), balances AS (
    SELECT *, month_in_arrears * instalment_amount AS amount_in_arrears,
           CASE WHEN closing THEN 0
                WHEN term = 0 THEN CAST(round(credit_limit * 0.9 * draw(key, 40, $index)) AS BIGINT)
                ELSE CAST(round(product_limit * (term - age) / term) AS BIGINT)
           END AS balance
    FROM amounts
)
SELECT $contributor AS contributor_id,
       $contributor || '-' || lpad(CAST(serial AS VARCHAR), 8, '0') AS account_id,
       $statement_date AS statement_date,
       CASE WHEN closing THEN 'C' WHEN $index = opened THEN 'N' ELSE 'U' END AS operation_code,
       name AS product_type,
       CASE WHEN identity < 0.88
            THEN strftime(DATE '1950-01-01' + CAST(floor(draw(key, 3, 0) * 20000) AS INTEGER), '%y%m%d')
                 || lpad(CAST(1 + hash(key, 13) % 14 AS VARCHAR), 2, '0')
                 || lpad(CAST(hash(key, 14) % 10000 AS VARCHAR), 4, '0')
            END AS new_ic,
       CASE WHEN identity >= 0.8 AND identity < 0.95
            THEN 'A' || lpad(CAST(hash(key, 15) % 10000000 AS VARCHAR), 7, '0') END AS old_ic,
       CASE WHEN identity >= 0.95
            THEN chr(CAST(65 + hash(key, 16) % 26 AS INTEGER))
                 || lpad(CAST(hash(key, 17) % 100000000 AS VARCHAR), 8, '0') END AS passport_no,
       CASE WHEN closing AND written_off THEN 'WRITTEN_OFF'
            WHEN closing THEN 'CLOSED'
            WHEN charged THEN 'WRITTEN_OFF'
            WHEN $index > opened AND limit_age = age AND age % review = 0 THEN 'ADMIN_CHANGE'
            WHEN month_in_arrears >= 3 THEN 'DEFAULT'
            ELSE 'ACTIVE' END AS account_status,
       credit_limit, product_limit, temporary_limit, instalment_amount,
       greatest(balance, amount_in_arrears) AS outstanding_balance,
       month_in_arrears, amount_in_arrears
FROM balances
ORDER BY serial
"""


@cache
def _products(kind: str) -> pa.Table:
    """The products of one contributor type, each with its slice [pick_from, pick_to) of [0, 1)."""
    chosen = [p for p in PRODUCTS if p.kind == kind]
    total = sum(p.weight for p in chosen)
    rows, edge = [], 0.0
    for i, p in enumerate(chosen):
        upper = 1.0 if i == len(chosen) - 1 else edge + p.weight / total
        rows.append(
            {
                "pick_from": edge,
                "pick_to": upper,
                "name": p.name,
                "limit_low": float(p.limit[0]),
                "limit_high": float(p.limit[1]),
                "unit": p.unit,
                "term_low": p.term[0],
                "term_high": p.term[1],
                "rate": p.rate,
                "payment": p.payment,
                "temporary": p.temporary,
                "delinquency": p.delinquency,
                "review_low": p.review[0],
                "review_high": p.review[1],
                "horizon": p.horizon,
            }
        )
        edge = upper
    return pa.Table.from_pylist(rows)


def month_end(start: date, index: int) -> date:
    """The statement date ``index`` months after the month-end ``start``.

    >>> month_end(date(2025, 1, 31), 1), month_end(date(2025, 1, 31), 13)
    (datetime.date(2025, 2, 28), datetime.date(2026, 2, 28))
    """
    year, month = divmod(start.year * 12 + start.month - 1 + index, 12)
    return date(year, month + 1, calendar.monthrange(year, month + 1)[1])


class Bureau:
    """The contributors of a bureau and their monthly files, reproducible from a seed.

    ``month(c, i)`` is a pure function of the seed, the contributor and ``i``: the same accounts evolve
    from month to month, and no month depends on which months were generated before it.

    >>> bureau = Bureau(seed=7)
    >>> files = bureau.months("PAYLATER", 3)
    >>> [str(f.column("statement_date")[0]) for f in files]
    ['2025-01-31', '2025-02-28', '2025-03-31']
    >>> Bureau(contributors=(Contributor("BIG", "bank", 1_000_000),)).month("BIG", 0).num_rows
    1000000
    """

    def __init__(
        self,
        contributors: Iterable[Contributor] = DEFAULT_CONTRIBUTORS,
        start: date = date(2025, 1, 31),
        seed: int = 7,
    ) -> None:
        self.contributors: dict[str, Contributor] = {}
        for contributor in contributors:
            if contributor.id in self.contributors:
                raise ConfigError(f"contributor '{contributor.id}' is listed twice")
            if contributor.type not in PROFILES:
                raise ConfigError(f"contributor '{contributor.id}': unknown type '{contributor.type}'")
            if contributor.accounts < 1 or contributor.since < 0:
                raise ConfigError(f"contributor '{contributor.id}' needs accounts >= 1 and since >= 0")
            self.contributors[contributor.id] = contributor
        if month_end(start, 0) != start:
            raise ConfigError(f"start {start} is not a month-end")
        self.start = start
        self.seed = seed
        # One salt per contributor, from its id and not its position: adding a contributor changes nobody.
        self._salts = {
            c.id: random.Random(f"assay.demo.bureau/{seed}/{c.id}").getrandbits(62)
            for c in self.contributors.values()
        }

    def contributor(self, contributor_id: str) -> Contributor:
        """The contributor named ``contributor_id``."""
        try:
            return self.contributors[contributor_id]
        except KeyError:
            raise ConfigError(f"unknown contributor '{contributor_id}'") from None

    def statement_date(self, index: int) -> date:
        """The statement date of month ``index`` (0 is ``start``)."""
        return month_end(self.start, index)

    def month(self, contributor_id: str, index: int) -> pa.Table:
        """The clean file of month ``index`` (0-based, counted from ``start``) for a contributor.

        >>> Bureau().month("EASYPAY", 0).column_names == SCHEMA.names
        True
        """
        contributor = self.contributor(contributor_id)
        if index < contributor.since:
            raise ConfigError(f"{contributor.id} sends its first file in month {contributor.since}")
        profile = PROFILES[contributor.type]
        parameters = {
            "salt": self._salts[contributor.id],
            "contributor": contributor.id,
            "accounts": contributor.accounts,
            "since": contributor.since,
            "index": index,
            "statement_date": self.statement_date(index),
            "open_rate": profile.open_rate,
            "closure_rate": profile.closure_rate,
            "episode_rate": profile.episode_rate,
            "write_off_share": profile.write_off_share,
            "window": profile.window,
        }
        with duckdb.connect() as con:
            con.execute(_MACROS)
            con.register("products", _products(contributor.type))
            table = con.sql(_MONTH, params=parameters).to_arrow_table()
        return table.cast(SCHEMA)

    def months(self, contributor_id: str, count: int) -> list[pa.Table]:
        """The contributor's first ``count`` files, oldest first."""
        since = self.contributor(contributor_id).since
        return [self.month(contributor_id, i) for i in range(since, since + count)]


def csv_text(table: pa.Table) -> str:
    """A table as a contributor would export it: a header, ISO dates, NULLs as empty cells, no quotes.

    Only when a value holds a comma, a quote or a line break are the text cells quoted.

    >>> csv_text(Bureau().month("BANK_A", 0)).splitlines()[0].split(",")[:3]
    ['contributor_id', 'account_id', 'statement_date']
    """
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(table.column_names)
    sink = pa.BufferOutputStream()
    try:
        pacsv.write_csv(table, sink, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    except pa.ArrowInvalid:
        sink = pa.BufferOutputStream()
        pacsv.write_csv(table, sink, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    return header.getvalue() + bytes(sink.getvalue().to_pybytes()).decode()


def write_csv(table: pa.Table, path: Path) -> Path:
    """Write a table as a contributor's CSV file (see :func:`csv_text`) and return the path.

    >>> import tempfile
    >>> path = write_csv(Bureau().month("BANK_A", 0), Path(tempfile.mkdtemp()) / "BANK_A_2025-01-31.csv")
    >>> path.read_text().splitlines()[1].split(",")[:4]
    ['BANK_A', 'BANK_A-00000000', '2025-01-31', 'N']
    """
    path.write_text(csv_text(table))
    return path
