"""Fixtures of the reconciliation tests: a real PostgreSQL server and the shared SparkSession."""

from pgserver import postgres_server, postgres_url  # noqa: F401
from sparksession import spark_session  # noqa: F401
