"""The object-storage tests run against the session's real S3-compatible server (tests/s3server.py)."""

from s3server import s3_bucket, s3_server  # noqa: F401
from sparksession import spark_session  # noqa: F401
