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
>>> faulty, expected = swap_limit_mapping(bureau.month("BANK_A", 1))
>>> sorted(expected.rules)
['F01', 'T01', 'T02']
"""

from __future__ import annotations

import calendar
import csv
import io
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
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

PARSE_ERROR = "PARSE"
"""The pseudo rule id of a line that cannot be read at all (:func:`malformed_rows`)."""


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


# ---------------------------------------------------------------------------------------------------------
# Expectations


@cache
def rule_severities() -> Mapping[str, str]:
    """``rule_id -> severity`` of ``data/bureau_rules.csv``, plus :data:`PARSE_ERROR` (critical)."""
    text = (resources.files("assay.demo") / "data" / "bureau_rules.csv").read_text()
    severities = {row["rule_id"]: row["severity"] for row in csv.DictReader(io.StringIO(text))}
    return {**severities, PARSE_ERROR: "critical"}


@dataclass(frozen=True)
class Expected:
    """What a correct gate does with a faulty file.

    ``failures`` maps the account_id of every row the gate must catch to the rule ids it fails; an
    account absent from it passes every rule. ``traps`` maps rows a correct gate passes, but a
    plausible wrong gate would flag, to the rules it would wrongly fail (e.g. a stale baseline for a
    backfill). ``lines`` gives the 1-based line of each unreadable CSV line (header = line 1).
    """

    failures: Mapping[str, frozenset[str]] = field(default_factory=dict)
    traps: Mapping[str, frozenset[str]] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)

    @property
    def accounts(self) -> frozenset[str]:
        """Accounts whose rows fail at least one rule."""
        return frozenset(self.failures)

    @property
    def rules(self) -> frozenset[str]:
        """Every rule that catches at least one row."""
        return frozenset().union(*self.failures.values())

    @property
    def quarantined(self) -> frozenset[str]:
        """Accounts whose rows fail a critical rule: pulled out of the batch."""
        severity = rule_severities()
        return frozenset(
            a for a, rules in self.failures.items() if any(severity[r] == "critical" for r in rules)
        )

    @property
    def warned(self) -> frozenset[str]:
        """Accounts whose rows fail warnings only: committed, and reported."""
        return self.accounts - self.quarantined


def _expect(accounts: Iterable[str], *rules: str) -> dict[str, frozenset[str]]:
    return {account: frozenset(rules) for account in accounts}


def _merge(*parts: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    merged: dict[str, frozenset[str]] = {}
    for part in parts:
        for account, rules in part.items():
            merged[account] = merged.get(account, frozenset()) | rules
    return merged


def _kind(table: pa.Table) -> str:
    """The contributor type of a file, from its products."""
    products = set(table.column("product_type").unique().to_pylist())
    for kind in PROFILES:
        if products <= {p.name for p in PRODUCTS if p.kind == kind}:
            return kind
    raise ConfigError(f"products {sorted(map(str, products))} belong to no single contributor type")


def _accounts(table: pa.Table, mask: pa.ChunkedArray | pa.Array) -> list[str]:
    ids: list[str] = table.column("account_id").filter(mask).to_pylist()
    return ids


def _with_previous(table: pa.Table) -> pa.ChunkedArray:
    """Rows that have a previous month: every account but the ones opened this month (``N``).

    The expectations of trend faults assume that the contributor's previous month is committed.
    """
    return pc.not_equal(table.column("operation_code"), "N")


def _limit_trend_failures(table: pa.Table, changed: pa.ChunkedArray | pa.Array) -> dict[str, frozenset[str]]:
    """T01/T02 on rows whose limits changed: bank rows with a previous month and no ADMIN_CHANGE."""
    if _kind(table) != "bank":
        return {}
    caught = pc.and_(
        pc.and_(changed, _with_previous(table)),
        pc.not_equal(table.column("account_status"), "ADMIN_CHANGE"),
    )
    return _expect(_accounts(table, caught), "T01", "T02")


# ---------------------------------------------------------------------------------------------------------
# Whole-file faults: the seed's well-formed corruption that only history exposes


def swap_limit_mapping(table: pa.Table) -> tuple[pa.Table, Expected]:
    """An export swaps the column mapping: credit_limit carries the product limit and vice versa.

    Every value stays plausible; only accounts with a temporary limit actually change. Those fail
    F01 (credit_limit is no longer product_limit + temporary_limit) and, at a bank, T01 and T02 when
    they had a previous month and no ADMIN_CHANGE; at an instalment lender, F03 (warning) where the
    instalment no longer fits in the smaller credit limit.

    >>> faulty, expected = swap_limit_mapping(Bureau().month("BANK_B", 3))
    >>> expected.quarantined == expected.accounts
    True
    """
    credit, product = table.column("credit_limit"), table.column("product_limit")
    faulty = table.set_column(SCHEMA.get_field_index("credit_limit"), "credit_limit", product)
    faulty = faulty.set_column(SCHEMA.get_field_index("product_limit"), "product_limit", credit)
    changed = pc.not_equal(table.column("temporary_limit"), 0)
    failures = _merge(_expect(_accounts(table, changed), "F01"), _limit_trend_failures(table, changed))
    if _kind(table) == "instalment":
        too_big = pc.greater(table.column("instalment_amount"), product)
        failures = _merge(failures, _expect(_accounts(table, too_big), "F03"))
    return faulty, Expected(failures)


def truncate(
    table: pa.Table, keep: float = 0.5, *, previous: pa.Table | None = None
) -> tuple[pa.Table, Expected]:
    """A truncated extract: only the first ``keep`` share of the file's rows arrive.

    No row is wrong, so the aggregate rules catch it for the whole contributor-month group: A02
    (RowCount >= 0.8 * last month's) and, when the arrears total falls below half of last month's, A01.
    Every kept row is expected to fail those rules. ``previous`` is last month's file; without it
    the untruncated file stands in for it.

    >>> bureau = Bureau()
    >>> faulty, expected = truncate(bureau.month("EASYPAY", 5), previous=bureau.month("EASYPAY", 4))
    >>> "A02" in expected.rules
    True
    """
    kept = table.slice(0, round(table.num_rows * keep))
    last = table if previous is None else previous
    rules = []
    arrears = pc.sum(kept.column("amount_in_arrears")).as_py() or 0
    if arrears < 0.5 * (pc.sum(last.column("amount_in_arrears")).as_py() or 0):
        rules.append("A01")
    if kept.num_rows < 0.8 * last.num_rows:
        rules.append("A02")
    failures = _expect(kept.column("account_id").to_pylist(), *rules) if rules else {}
    return kept, Expected(failures)


def double_limits(table: pa.Table, share: float = 0.05, *, seed: int = 0) -> tuple[pa.Table, Expected]:
    """A bad upstream join doubles credit_limit, product_limit and temporary_limit on ``share`` of rows.

    The rows stay consistent (F01 holds), so only history catches them: T01 and T02 at a bank, on
    rows with a previous month that are not ADMIN_CHANGE. Nothing catches it at an instalment lender:
    its ruleset watches the instalment (T03), not the limits.
    """
    picked = set(random.Random(seed).sample(range(table.num_rows), round(table.num_rows * share)))
    changed = pa.array([i in picked for i in range(table.num_rows)])
    faulty = table
    for name in ("credit_limit", "product_limit", "temporary_limit"):
        column = table.column(name)
        doubled = pc.if_else(changed, pc.multiply(column, 2), column)
        faulty = faulty.set_column(SCHEMA.get_field_index(name), name, doubled)
    return faulty, Expected(_limit_trend_failures(table, changed))


def _trend_rules(kind: str) -> tuple[str, ...]:
    return ("T01", "T02", "T04") if kind == "bank" else ("T03", "T04")


def backfill(
    bureau: Bureau, contributor_id: str, first_index: int, months: int = 3
) -> tuple[pa.Table, Expected]:
    """Several consecutive clean months in one file: each must be baselined on the month before it.

    Nothing fails. ``traps`` lists the accounts that a gate baselining every month of the file on the
    last committed month (``first_index - 1``) would wrongly flag: limits that legitimately moved
    with an ADMIN_CHANGE inside the backfill, arrears that moved by more than two over several months.

    >>> table, expected = backfill(Bureau(), "BANK_A", 12)
    >>> expected.failures, len(expected.traps) > 0
    ({}, True)
    """
    contributor = bureau.contributor(contributor_id)
    files = [bureau.month(contributor_id, i) for i in range(first_index, first_index + months)]
    traps: dict[str, frozenset[str]] = {}
    if first_index > contributor.since:
        stale = {r["account_id"]: r for r in bureau.month(contributor_id, first_index - 1).to_pylist()}
        rules = _trend_rules(contributor.type)
        for row in (r for f in files[1:] for r in f.to_pylist()):
            old = stale.get(row["account_id"])
            if old is not None:
                wrong = frozenset(r for r in rules if not _TREND_PASSES[r](row, old))
                traps = _merge(traps, {row["account_id"]: wrong} if wrong else {})
    return pa.concat_tables(files), Expected(traps=traps)


_TREND_PASSES: Mapping[str, Callable[[Row, Row], bool]] = {
    "T01": lambda r, p: r["credit_limit"] == p["credit_limit"] or r["account_status"] == "ADMIN_CHANGE",
    "T02": lambda r, p: r["product_limit"] == p["product_limit"] or r["account_status"] == "ADMIN_CHANGE",
    "T03": lambda r, p: (
        r["instalment_amount"] == p["instalment_amount"] or r["account_status"] == "ADMIN_CHANGE"
    ),
    "T04": lambda r, p: abs(r["month_in_arrears"] - p["month_in_arrears"]) <= 2,
}
"""The trend rules of bureau_rules.csv on a row and its previous month's row (for :func:`backfill`)."""


def first_file(bureau: Bureau, contributor_id: str) -> tuple[pa.Table, Expected]:
    """A contributor's first file ever: no history, so every trend rule is skipped and nothing fails.

    ``traps`` lists, for every row, the trend rules that a gate treating a missing previous month as a
    failure (a NULL comparison) would wrongly fail: all of them but T01-T03 on ADMIN_CHANGE rows.

    >>> bureau = Bureau([*DEFAULT_CONTRIBUTORS, Contributor("NEWPAY", "instalment", 250, since=12)])
    >>> table, expected = first_file(bureau, "NEWPAY")
    >>> expected.failures, len(expected.traps) == table.num_rows
    ({}, True)
    """
    contributor = bureau.contributor(contributor_id)
    table = bureau.month(contributor_id, contributor.since)
    traps = {
        row["account_id"]: frozenset(
            r for r in _trend_rules(contributor.type) if r == "T04" or row["account_status"] != "ADMIN_CHANGE"
        )
        for row in table.select(["account_id", "account_status"]).to_pylist()
    }
    return table, Expected(traps=traps)


# ---------------------------------------------------------------------------------------------------------
# Row faults: a few rows broken in one way each, caught by exactly one rule


@dataclass(frozen=True)
class RowFault:
    """A fault planted on a few rows: which rows can carry it, how it rewrites one, the rule that catches it.

    ``eligible`` keeps the planted fault from tripping any other rule; ``rewrite`` returns the changed
    cells of a row, given the row and, for a trend fault, the account's row of the previous month
    (``needs_previous``: only accounts present in that month can carry it; otherwise it gets ``{}``).
    """

    rule_id: str
    eligible: Callable[[Row], bool]
    rewrite: Callable[[Row, Row], Row]
    needs_previous: bool = False


def _jump_arrears(row: Row, previous: Row) -> Row:
    months = previous["month_in_arrears"] + 3
    return {"month_in_arrears": months, "amount_in_arrears": months * row["instalment_amount"]}


ROW_FAULTS: Mapping[str, RowFault] = {
    # I01: no form of ID at all.
    "no_id": RowFault(
        "I01", lambda r: True, lambda r, p: {"new_ic": None, "old_ic": None, "passport_no": None}
    ),
    # I02: a new IC with eleven digits (the last one dropped).
    "short_new_ic": RowFault(
        "I02", lambda r: r["new_ic"] is not None, lambda r, p: {"new_ic": r["new_ic"][:-1]}
    ),
    # D01: an operation code outside N/U/C/D.
    "unknown_operation_code": RowFault("D01", lambda r: True, lambda r, p: {"operation_code": "R"}),
    # D02 (warning): an unknown status, on ACTIVE rows so that no limit change loses its ADMIN_CHANGE.
    "unknown_status": RowFault(
        "D02", lambda r: r["account_status"] == "ACTIVE", lambda r, p: {"account_status": "FROZEN"}
    ),
    # F02: a negative balance.
    "negative_balance": RowFault(
        "F02",
        lambda r: r["outstanding_balance"] > 0,
        lambda r, p: {"outstanding_balance": -r["outstanding_balance"]},
    ),
    # T04: months in arrears three more than last month's (the amount follows, so T05 holds).
    "arrears_jump": RowFault("T04", lambda r: r["operation_code"] == "U", _jump_arrears, needs_previous=True),
    # T05: an amount in arrears on an account that is not behind.
    "arrears_without_months": RowFault(
        "T05",
        lambda r: r["month_in_arrears"] == 0 and r["operation_code"] != "C",
        lambda r, p: {"amount_in_arrears": r["instalment_amount"]},
    ),
}
"""The row faults by name, each caught by exactly one rule (see :func:`plant`)."""


def plant(
    table: pa.Table, fault: str, count: int = 3, *, seed: int = 0, previous: pa.Table | None = None
) -> tuple[pa.Table, Expected]:
    """Plant a row fault of :data:`ROW_FAULTS` on ``count`` distinct accounts of a one-month file.

    ``previous`` is the contributor's previous month, which the trend fault ``arrears_jump`` needs.

    >>> faulty, expected = plant(Bureau().month("BANK_C", 2), "short_new_ic")
    >>> len(expected.accounts), expected.rules
    (3, frozenset({'I02'}))
    """
    if fault not in ROW_FAULTS:
        raise ConfigError(f"unknown row fault '{fault}': use one of {', '.join(ROW_FAULTS)}")
    planted = ROW_FAULTS[fault]
    before: dict[str, Row] = {}
    if planted.needs_previous:
        if previous is None:
            raise ConfigError(f"the row fault '{fault}' needs the previous month")
        before = {r["account_id"]: r for r in previous.to_pylist()}
    candidates = [
        i
        for i, row in enumerate(table.to_pylist())
        if planted.eligible(row) and (not planted.needs_previous or row["account_id"] in before)
    ]
    if len(candidates) < count:
        raise ConfigError(f"only {len(candidates)} rows can carry the fault '{fault}', not {count}")
    picked = sorted(random.Random(seed).sample(candidates, count))
    rows = table.take(picked).to_pylist()
    changes = {
        i: planted.rewrite(row, before.get(row["account_id"], {}))
        for i, row in zip(picked, rows, strict=True)
    }
    faulty = table
    for name in sorted({name for cells in changes.values() for name in cells}):
        values = table.column(name).to_pylist()
        for i, cells in changes.items():
            values[i] = cells.get(name, values[i])
        faulty = faulty.set_column(
            SCHEMA.get_field_index(name), name, pa.array(values, SCHEMA.field(name).type)
        )
    return faulty, Expected(_expect((r["account_id"] for r in rows), planted.rule_id))


# ---------------------------------------------------------------------------------------------------------
# Unreadable lines


def malformed_rows(text: str, *, seed: int = 0) -> tuple[str, Expected]:
    """Break three lines of a CSV file so that they cannot be read; every other line stays intact.

    One line gets text in a number cell (credit_limit ``12,5O0``-style: a thousands separator and the
    letter O), one an impossible statement date (the day after the month's last), one a missing
    field (passport_no). Each is on a distinct account; all three are :data:`PARSE_ERROR` failures,
    and ``lines`` gives their line numbers.

    >>> text, expected = malformed_rows(csv_text(Bureau().month("BANK_A", 0)))
    >>> len(expected.lines)
    3
    """
    lines = text.splitlines()
    if len(lines) < 4:
        raise ConfigError(f"a file needs three data lines to break, not {max(len(lines) - 1, 0)}")
    header = next(csv.reader([lines[0]]))
    position = {
        name: header.index(name) for name in ("account_id", "statement_date", "credit_limit", "passport_no")
    }
    picked = random.Random(seed).sample(range(1, len(lines)), 3)
    found: dict[str, int] = {}
    for number, breaker in zip(picked, (_bad_number, _impossible_date, _missing_field), strict=True):
        cells = next(csv.reader([lines[number]]))
        found[cells[position["account_id"]]] = number + 1
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(breaker(cells, position))
        lines[number] = out.getvalue()
    ending = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + ending, Expected(_expect(found, PARSE_ERROR), lines=found)


def _bad_number(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["credit_limit"]
    digits = f"{int(cells[at]):,}"
    zero = digits.rfind("0") if "0" in digits else len(digits) - 1
    return [*cells[:at], f"{digits[:zero]}O{digits[zero + 1 :]}", *cells[at + 1 :]]


def _impossible_date(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["statement_date"]
    day = date.fromisoformat(cells[at])
    after_last = calendar.monthrange(day.year, day.month)[1] + 1
    return [*cells[:at], f"{day.year:04d}-{day.month:02d}-{after_last:02d}", *cells[at + 1 :]]


def _missing_field(cells: list[str], position: Mapping[str, int]) -> list[str]:
    at = position["passport_no"]
    return [*cells[:at], *cells[at + 1 :]]
