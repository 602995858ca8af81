"""Fixtures of the check-document tests: the shared SparkSession for the runs on Spark."""

from sparksession import spark_session  # noqa: F401
