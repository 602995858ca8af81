"""Fixtures of the engine tests: a real PostgreSQL server for the PostgreSQL engine."""

from pgserver import postgres_server, postgres_url  # noqa: F401
