"""The lifecycle tests start a real PostgreSQL server for their PostgreSQL cases."""

from pgserver import postgres_server, postgres_url  # noqa: F401
