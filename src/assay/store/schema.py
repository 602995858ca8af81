"""The metric store's tables, as SQLAlchemy Core metadata.

The tables here are what the code reads and writes; the Alembic migrations in
``assay/store/migrations/versions`` are what creates them, and a test checks that the two agree.
Constraint and index names follow :data:`NAMING_CONVENTION` so that later migrations can name
them on both backends.

>>> sorted(metadata.tables)  # doctest: +NORMALIZE_WHITESPACE
['audit', 'baseline_marks', 'catalog_entries', 'catalog_tags', 'certifications', 'check_outcomes',
 'datasets', 'decision_sources', 'decisions', 'incident_events', 'incident_layers', 'incidents',
 'judgements', 'lineage_edges', 'load_columns', 'load_values', 'loads',
 'login_codes', 'metrics', 'notifications', 'outcomes', 'proposal_events', 'proposals', 'reads', 'run_stages',
 'runs', 'schedule_ticks', 'scores', 'users', 'value_sets', 'web_sessions']
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite


def upsert(connection: Connection, table: sa.Table) -> sqlite.Insert | postgresql.Insert:
    """An ``INSERT`` that can take ``on_conflict_do_update`` on the connection's dialect.

    Both dialects spell "insert ... on conflict" the same way, and Core has no portable form of
    it. Only the connected dialect's module is imported: PostgreSQL's takes 30 ms to import (it
    brings asyncio with its async drivers), which every command on an SQLite store would pay."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

VERSION_TABLE = "assay_alembic_version"
"""Alembic's bookkeeping table, named apart from the default so a shared database can hold others."""

TRANSACTION_MEMO = "assay.transaction_memo"
"""The key, in a connection's ``info``, of what one store transaction has already done (a
dataset's id read, its catalog entry marked stale): set when the transaction begins, dropped at
its end, so nothing outlives a rollback."""


def first_in_transaction(connection: Connection, what: tuple[object, ...]) -> bool:
    """Whether ``what`` is done for the first time in the store transaction ``connection`` is in
    (and now remembered as done); always True outside one, where nothing is remembered."""
    memo = connection.info.get(TRANSACTION_MEMO)
    if memo is None:
        return True
    if what in memo:
        return False
    memo[what] = True
    return True


DATASET_NAME_LENGTH = 200
"""The longest dataset name the store accepts."""


class UTCDateTime(sa.TypeDecorator[datetime]):
    """A timestamp that goes in and comes out timezone-aware, in UTC, on every backend.

    PostgreSQL keeps the instant (``timestamptz``) and returns it in the session's time zone;
    SQLite has no time zone at all, so the value is stored as naive UTC text, which also keeps
    its ordering correct. Naive datetimes are refused: their meaning depends on the machine.

    >>> sqlite = sa.create_engine("sqlite://").dialect
    >>> UTCDateTime().process_bind_param(datetime(2024, 5, 1, tzinfo=UTC), sqlite)
    datetime.datetime(2024, 5, 1, 0, 0)
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"timestamp {value.isoformat()} has no time zone")
        utc = value.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """The current instant, timezone-aware in UTC.

    >>> utcnow().tzinfo
    datetime.timezone.utc
    """
    return datetime.now(UTC)


metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

datasets = sa.Table(
    "datasets",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(DATASET_NAME_LENGTH), nullable=False, unique=True),
    sa.Column("owner", sa.String(200)),
    sa.Column("description", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False, default=utcnow),
)

loads = sa.Table(
    "loads",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    # '' rather than NULL for "no partition": NULLs never compare equal, so history lookups and
    # any later unique key over (dataset, partition, ...) would treat every unpartitioned load apart.
    sa.Column("partition", sa.String(200), nullable=False, server_default=""),
    sa.Column("logical_time", UTCDateTime, nullable=False),
    sa.Column("logical_date", sa.Date),
    sa.Column("source_path", sa.Text),
    sa.Column("source_sha256", sa.String(64)),
    sa.Column("row_count", sa.BigInteger),
    sa.Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    # current | rejected | superseded (migration 0002), pending (0004): history reads current loads only.
    sa.Column("status", sa.String(20), nullable=False, server_default="current"),
    # The run that measured the load (migration 0004): a pending load settles with its run.
    sa.Column("run_id", sa.String(36)),
    sa.Index(None, "dataset_id", "partition", "logical_time"),
    sa.Index(None, "dataset_id", "partition", "logical_date"),
    sa.Index(None, "run_id"),
)

metrics = sa.Table(
    "metrics",
    metadata,
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("entity", sa.String(20), nullable=False),
    # Text: a Multicolumn instance lists every column it covers, with no useful upper bound.
    sa.Column("instance", sa.Text, nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    # NULL is both "no value" and NaN: SQLite cannot store NaN, so neither backend does.
    sa.Column("value", sa.Double),
    sa.PrimaryKeyConstraint("load_id", "entity", "instance", "name"),
    # History reads one metric across many loads: key first, then the load to join on.
    sa.Index(None, "entity", "instance", "name", "load_id"),
)

# What of a load later baselines do not read (migration 0011): every flow writes a mark when a
# load's metric raised a hard alert or failed an expectation (``held``: out until a person
# accepts it), and every flow's history leaves out the metrics a ``held`` or ``left_out`` mark
# matches. ``entity``, ``instance`` and ``name`` are a metric key; '*' matches any.
baseline_marks = sa.Table(
    "baseline_marks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    # what raised it: a monitor judgement's kind, a check expectation's id, a DQDL rule's text
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("entity", sa.String(20), nullable=False),
    sa.Column("instance", sa.Text, nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("state", sa.String(20), nullable=False),  # held | accepted | left_out
    sa.Column("run_id", sa.String(36)),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("decided_by", sa.String(200)),
    sa.Column("decided_at", UTCDateTime),
    sa.Column("note", sa.Text),
    sa.Index(None, "load_id"),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id")),
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id")),
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("summary", sa.JSON(none_as_null=True)),
    # migration 0004: what the run read, what it counted, why it failed, and which process runs it
    sa.Column("inputs", sa.JSON(none_as_null=True)),
    sa.Column("counts", sa.JSON(none_as_null=True)),
    sa.Column("error", sa.Text),
    sa.Column("owner", sa.String(200)),
    sa.Index(None, "dataset_id", "started_at"),
    sa.Index(None, "state"),
)

outcomes = sa.Table(
    "outcomes",
    metadata,
    sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("outcome", sa.String(20), nullable=False),
    sa.Column("message", sa.Text),
    sa.Column("metrics", sa.JSON, nullable=False),
    sa.Column("labels", sa.JSON, nullable=False),
    sa.PrimaryKeyConstraint("run_id", "position"),
)

# --- profiles (migration 0003) -----------------------------------------------------------------

load_columns = sa.Table(
    "load_columns",
    metadata,
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("type", sa.String(100), nullable=False),
    sa.PrimaryKeyConstraint("load_id", "position"),
)

# The value counts of a load's categorical columns (up to the profiler's cap).
load_values = sa.Table(
    "load_values",
    metadata,
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("column", sa.Text, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("count", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("load_id", "column", "value"),
)

# Every value a dataset's categorical column has held, with the first and last load that held it
# (current loads only): a new value can replace a retired one and leave the distinct count unchanged.
value_sets = sa.Table(
    "value_sets",
    metadata,
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("column", sa.Text, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("first_load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("last_load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("first_date", sa.Date),
    sa.Column("last_date", sa.Date),
    sa.PrimaryKeyConstraint("dataset_id", "column", "value"),
)

# What each load was judged against: the band of a metric, the observed value, and the alert if any.
judgements = sa.Table(
    "judgements",
    metadata,
    sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
    sa.Column("column", sa.Text, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("observed", sa.Double),
    sa.Column("low", sa.Double),
    sa.Column("high", sa.Double),
    sa.Column("severity", sa.String(10)),
    sa.Column("message", sa.Text),
    sa.Column("detail", sa.JSON),
    sa.PrimaryKeyConstraint("load_id", "column", "kind"),
)

decisions = sa.Table(
    "decisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("column", sa.Text, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("first_load_id", sa.Integer, sa.ForeignKey("loads.id")),
    sa.Column("opened_at", UTCDateTime, nullable=False),
    sa.Column("decided_at", UTCDateTime),
    sa.Column("decided_by", sa.String(200)),
    sa.Column("note", sa.Text),
    sa.UniqueConstraint("dataset_id", "column", "value"),
)

# Where a pending decision's rows came from: one row per source (a profiled load date, a gate
# run), replaced when the same source comes again, so profiling a date twice does not count its
# rows twice. A decision's row count is the sum over its sources.
decision_sources = sa.Table(
    "decision_sources",
    metadata,
    sa.Column("decision_id", sa.Integer, sa.ForeignKey("decisions.id"), primary_key=True),
    sa.Column("source", sa.String(200), primary_key=True),
    sa.Column("rows", sa.BigInteger, nullable=False),
)

# --- check documents (migration 0005) -----------------------------------------------------------

# One outcome of a check run per expectation and group ('' for the total); ``at`` is the run's
# logical time, so that an expectation's history reads in the order of the data, not of the runs.
check_outcomes = sa.Table(
    "check_outcomes",
    metadata,
    sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("expectation", sa.String(200), nullable=False),
    sa.Column("group_key", sa.Text, nullable=False, server_default=""),
    sa.Column("outcome", sa.String(20), nullable=False),
    sa.Column("severity", sa.String(20), nullable=False),
    sa.Column("mode", sa.String(20), nullable=False),
    sa.Column("owner", sa.String(200)),
    sa.Column("observed", sa.Double),
    sa.Column("expected", sa.JSON(none_as_null=True)),
    sa.Column("message", sa.Text),
    sa.Column("reason", sa.String(40)),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.PrimaryKeyConstraint("run_id", "position"),
    sa.Index(None, "dataset_id", "expectation", "at"),
)

# --- schedules (migration 0006) -----------------------------------------------------------------

# One tick of a profile's schedule that a scheduler claimed (inserting the row is the claim: the
# primary key makes it exactly-once), the run it started and how that run ended. ``document`` is
# the check document's path relative to the workspace; ``tick`` the instant, in UTC.
schedule_ticks = sa.Table(
    "schedule_ticks",
    metadata,
    sa.Column("document", sa.String(500), nullable=False),
    sa.Column("profile", sa.String(200), nullable=False),
    sa.Column("tick", UTCDateTime, nullable=False),
    sa.Column("logical_date", sa.Date, nullable=False),
    sa.Column("dataset", sa.String(200), nullable=False),
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("run_id", sa.String(36)),
    sa.Column("claimed_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("message", sa.Text),
    # the process holding the tick (host:pid:start), none while it waits on the queue (0010)
    sa.Column("owner", sa.String(200)),
    sa.PrimaryKeyConstraint("document", "profile", "tick"),
)

# --- incidents and the notification outbox (migration 0007) -------------------------------------

# Failures grouped by dataset + quality dimension + expectation (+ group when the expectation has
# ``divide_by_group``): at most one incident of a key is not resolved at a time (the partial
# unique index). Times are the evaluations' logical times; ``updated_at`` is the wall clock.
# ``channels``: where its notifications went last ([[channel, digest], ...]), for a resolve by hand.
incidents = sa.Table(
    "incidents",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("dimension", sa.String(20), nullable=False),
    sa.Column("expectation", sa.String(200), nullable=False),
    sa.Column("group_key", sa.Text, nullable=False, server_default=""),
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("severity", sa.String(20), nullable=False),
    sa.Column("owner", sa.String(200)),
    sa.Column("opened_at", UTCDateTime, nullable=False),
    sa.Column("evaluated_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime),
    sa.Column("muted_until", UTCDateTime),
    sa.Column("passes", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("observed", sa.Double),
    sa.Column("notified_observed", sa.Double),
    sa.Column("expected", sa.JSON(none_as_null=True)),
    sa.Column("message", sa.Text),
    sa.Column("cause", sa.String(20)),
    sa.Column("channels", sa.JSON(none_as_null=True)),
    sa.Column("updated_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Index(None, "dataset_id", "state"),
    sa.Index(
        "uq_incidents_unresolved",
        "dataset_id",
        "dimension",
        "expectation",
        "group_key",
        unique=True,
        # Partial on both dialects. Migration 0007 gives PostgreSQL the same predicate; it is not
        # repeated here as postgresql_where because naming a dialect's option makes SQLAlchemy
        # import that dialect, and PostgreSQL's (with asyncio for its async drivers) costs every
        # command on an SQLite store 30-40 ms. tests/store/test_database.py checks both indexes.
        sqlite_where=sa.text("state != 'resolved'"),
    ),
)

# What happened to an incident, in order: opened, failed, escalated, passed, resolved, reopened,
# acknowledged, muted, unmuted; with the run (for evaluations) or the person (for actions).
incident_events = sa.Table(
    "incident_events",
    metadata,
    sa.Column("incident_id", sa.String(36), sa.ForeignKey("incidents.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("recorded_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Column("run_id", sa.String(36)),
    sa.Column("by", sa.String(200)),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.PrimaryKeyConstraint("incident_id", "seq"),
)

# The outbox: one row per (notification, channel), written in the transaction of the outcomes
# that caused it; a delivery pass sends the pending ones (a lease keeps two passes apart).
# ``status``: pending → sent | failed, or held (a digest route's item, until its day's digest,
# then digested). ``dedupe_key`` lets a config error be sent once per distinct error.
notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", sa.String(36), nullable=False),
    sa.Column("channel", sa.String(200), nullable=False),
    sa.Column("kind", sa.String(30), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("next_attempt_at", UTCDateTime, nullable=False),
    sa.Column("lease_until", UTCDateTime),
    sa.Column("sent_at", UTCDateTime),
    sa.Column("error", sa.Text),
    sa.Column("dedupe_key", sa.Text),
    sa.Column("digest_day", sa.Date),
    sa.Column("digest_id", sa.String(36)),
    sa.Column("run_id", sa.String(36)),
    sa.Column("incident_id", sa.String(36)),
    sa.PrimaryKeyConstraint("id", "channel"),
    sa.Index(None, "status", "next_attempt_at"),
    sa.Index(None, "dedupe_key"),
)

# The stages a check run passed, in order (running, measured, judged, notified), each when it was
# committed: ``measured`` with its metrics, ``judged`` with its outcomes and the notifications
# they caused, ``notified`` once the last of those was delivered or given up (or at once: none).
run_stages = sa.Table(
    "run_stages",
    metadata,
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.Column("stage", sa.String(20), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.PrimaryKeyConstraint("run_id", "stage"),
)

# --- scores, certification, proposals, reads (migration 0008) --------------------------------------

# One score per subject ("dataset" or "event") per UTC day, the last computed that day: the
# history that "2 consecutive daily scores below the gate" and a badge's score criterion read.
scores = sa.Table(
    "scores",
    metadata,
    sa.Column("subject", sa.String(10), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("day", sa.Date, nullable=False),
    sa.Column("score", sa.Double, nullable=False),
    sa.Column("gate", sa.Double),
    sa.Column("below_gate", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.Column("recorded_at", UTCDateTime, nullable=False, default=utcnow),
    sa.PrimaryKeyConstraint("subject", "name", "day"),
)

# A dataset's certification badge, one row per change (certified, at_risk, not_certified,
# revoked), with the criteria as they stood.
certifications = sa.Table(
    "certifications",
    metadata,
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("badge", sa.String(20), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("recorded_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Column("by", sa.String(200)),
    sa.Column("reason", sa.Text),
    sa.Column("criteria", sa.JSON(none_as_null=True)),
    sa.PrimaryKeyConstraint("dataset_id", "seq"),
)

# A check proposed from a dataset's stored history: ``target`` says what it is about (its kind and
# columns), ``evidence_hash`` what justified it, so that a rejected proposal is not proposed again
# until its evidence changes. ``state``: open → accepted | rejected.
proposals = sa.Table(
    "proposals",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("kind", sa.String(30), nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("evidence_hash", sa.String(64), nullable=False),
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("expectation", sa.JSON, nullable=False),
    sa.Column("evidence", sa.JSON, nullable=False),
    sa.Column("backtest", sa.JSON(none_as_null=True)),
    sa.Column("dry_run", sa.JSON(none_as_null=True)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("decided_at", UTCDateTime),
    sa.Column("decided_by", sa.String(200)),
    sa.Column("why", sa.Text),
    sa.Column("document", sa.Text),
    sa.Index(None, "dataset_id", "state"),
)

# Every step of a proposal: proposed, shown again, accepted, rejected; who and when.
proposal_events = sa.Table(
    "proposal_events",
    metadata,
    sa.Column("proposal_id", sa.String(36), sa.ForeignKey("proposals.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("by", sa.String(200)),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.PrimaryKeyConstraint("proposal_id", "seq"),
)

# The reads of a dataset that assay sees (a check or gate run, an export, an API read): with the
# declared consumers, what a dataset's importance is made of.
reads = sa.Table(
    "reads",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("by", sa.String(200)),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.Index(None, "dataset_id", "at"),
)


# --- users, sessions and the audit trail (migration 0009) ---------------------------------------

# The people of the web control plane. A token is shown once and kept as its SHA-256: tokens are
# 256 random bits, so a fast hash is as safe as a slow one and a lookup by hash is one index read.
users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Column("created_by", sa.String(200)),
    sa.Column("disabled_at", UTCDateTime),
)

# A browser's session: the cookie holds a random id, the store its hash and the CSRF token that
# every form of the session must send back.
web_sessions = sa.Table(
    "web_sessions",
    metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
    sa.Column("csrf", sa.String(64), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)

# A one-time login link's code (``assay serve`` on a workspace with no users, ``assay users link``).
login_codes = sa.Table(
    "login_codes",
    metadata,
    sa.Column("code_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    sa.Column("expires_at", UTCDateTime, nullable=False),
    sa.Column("used_at", UTCDateTime),
)

# Every write made through the web interface, the API or ``assay users``: who, when, what
# (``action``, e.g. check.save or incident.resolve), on what (``target``), with its detail (a
# saved document's diff, a resolution's cause).
audit = sa.Table(
    "audit",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("by", sa.String(200), nullable=False),
    sa.Column("action", sa.String(40), nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("dataset", sa.String(200)),
    sa.Column("detail", sa.JSON(none_as_null=True)),
    sa.Index(None, "at"),
    sa.Index(None, "dataset", "at"),
)


# --- the catalog's kept entries (migration 0012) ---------------------------------------------------

# Each dataset's score and what the catalog filters and sorts on, kept so that a page of the
# catalog is one indexed query instead of scoring every dataset per request (0.4 ms each: four
# seconds at 10,000). Every write to a score's inputs marks the row ``stale`` and bumps
# ``version`` in its own transaction; a refresh writes the row back only if ``version`` did not
# move meanwhile, so a score is never newer-looking than its inputs (docs/scores.md).
catalog_entries = sa.Table(
    "catalog_entries",
    metadata,
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("stale", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="0"),
    sa.Column("score", sa.Double),
    sa.Column("health", sa.Double),
    sa.Column("enrichment", sa.Double),
    sa.Column("importance", sa.Double),
    sa.Column("tier", sa.Integer),
    sa.Column("team", sa.String(200)),
    sa.Column("owner", sa.String(200)),
    sa.Column("description", sa.Text),
    sa.Column("schema_name", sa.String(200)),
    sa.Column("search", sa.Text),
    sa.Column("badge", sa.String(20)),
    sa.Column("open_incidents", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_run_at", UTCDateTime),
    sa.Column("loaded_at", UTCDateTime),
    sa.Column("document", sa.Text),
    sa.Column("computed_at", UTCDateTime),
    sa.Index(None, "stale"),
    sa.Index(None, "score"),
    sa.Index(None, "team"),
)

# A kept entry's tags, one row each: the catalog's tag filter and its rollup by tag.
catalog_tags = sa.Table(
    "catalog_tags",
    metadata,
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("tag", sa.String(200), nullable=False),
    sa.PrimaryKeyConstraint("dataset_id", "tag"),
    sa.Index(None, "tag"),
)

# --- lineage and incident layers (migration 0013) -------------------------------------------------

# The lineage graph's edges, by dataset name (a name may be one assay has no run of yet): what a
# check document's ``dataset.upstream`` declares (``origin`` declared, ``job`` empty) and what
# OpenLineage events posted to ``assay serve`` taught (``origin`` openlineage, with the job).
lineage_edges = sa.Table(
    "lineage_edges",
    metadata,
    sa.Column("upstream", sa.String(DATASET_NAME_LENGTH), nullable=False),
    sa.Column("downstream", sa.String(DATASET_NAME_LENGTH), nullable=False),
    sa.Column("origin", sa.String(20), nullable=False),
    sa.Column("job", sa.String(400), nullable=False, server_default=""),
    sa.Column("seen_at", UTCDateTime, nullable=False),
    sa.PrimaryKeyConstraint("upstream", "downstream", "origin", "job"),
    sa.Index(None, "downstream"),
)

# The datasets one incident spans (docs/lineage.md): the one it opened on and each connected
# dataset whose same failure joined it, with when it failed first and last, its last evaluation
# (a re-run of it changes nothing), the runs that failed, and its passes in a row since (the
# incident resolves when every layer has enough).
incident_layers = sa.Table(
    "incident_layers",
    metadata,
    sa.Column("incident_id", sa.String(36), sa.ForeignKey("incidents.id"), nullable=False),
    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("first_seen", UTCDateTime, nullable=False),
    sa.Column("last_seen", UTCDateTime, nullable=False),
    sa.Column("evaluated_at", UTCDateTime, nullable=False),
    sa.Column("passes", sa.Integer, nullable=False, server_default="0"),
    sa.Column("run_ids", sa.JSON, nullable=False),
    sa.PrimaryKeyConstraint("incident_id", "dataset_id"),
    sa.Index(None, "dataset_id"),
)
