"""The shared-catalog tests start a real PostgreSQL server, a real S3-compatible server and a real
Iceberg REST catalog server (one each per pytest process)."""

from icebergrest import iceberg_rest  # noqa: F401
from pgserver import postgres_server, postgres_url  # noqa: F401
from s3server import s3_bucket, s3_server  # noqa: F401
