"""Fixtures of the engine tests: a real PostgreSQL server for the PostgreSQL engine, one shared
SparkSession and the per-engine ``engine`` fixture for the Spark engine, a Spark Connect server
and a Spark standalone cluster."""

from pgserver import postgres_server, postgres_url  # noqa: F401
from sparkcluster import spark_cluster  # noqa: F401
from sparksession import engine, spark_connect_url, spark_session  # noqa: F401
