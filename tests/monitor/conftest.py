"""Fixtures: the session's SparkSession (tests/sparksession.py)."""

from sparksession import spark_session  # noqa: F401
