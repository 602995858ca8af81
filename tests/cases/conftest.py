"""Fixtures: every vector runs once per engine (tests/sparksession.py)."""

from sparksession import engine, spark_session  # noqa: F401
