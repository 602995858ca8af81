"""A real S3-compatible server for tests, on 127.0.0.1; a pytest plugin.

The ``s3_server`` fixture (session scope) starts moto's standalone server (``moto[server]``, the
``dev`` extra) in a thread of the test process, on a free port of 127.0.0.1, and stops it at the
end of the session: one server per pytest process (each pytest-xdist worker has its own). The
``s3_bucket`` fixture gives each test a bucket of its own, created empty, and puts the standard
AWS environment variables (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_REGION``) that point at the server into ``os.environ`` for the test, so that assay, and the
``assay`` processes a test starts, reach it as a user's configuration would.

The server speaks the S3 protocol over HTTP as AWS does: nothing in assay knows it is moto.

Use it from a test folder by importing the fixtures into that folder's ``conftest.py``::

    from s3server import s3_bucket, s3_server  # noqa: F401

    def test_something(s3_bucket: S3Bucket) -> None:
        s3_bucket.put("in/day.csv", b"a,b\\n1,2\\n")
        url = s3_bucket.url("in/day.csv")  # s3://<bucket>/in/day.csv
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

ACCESS_KEY = "assay-test-key"
SECRET_KEY = "assay-test-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """A running S3-compatible server: its endpoint, and the environment that points at it."""

    endpoint: str
    handle: Any

    def environment(self) -> dict[str, str]:
        """The standard AWS variables a client (boto3, pyarrow, assay) reads to reach the server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self) -> Any:
        """A boto3 S3 client on the server, for the tests' own puts and reads."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )


@dataclass(frozen=True)
class S3Bucket:
    """A bucket of one test's own on the session's server."""

    server: S3Server
    name: str

    def url(self, key: str = "") -> str:
        """``s3://<bucket>/<key>``."""
        return f"s3://{self.name}/{key}" if key else f"s3://{self.name}"

    def put(self, key: str, body: bytes) -> str:
        """Write ``body`` at ``key``; returns its ``s3://`` URL."""
        self.server.client().put_object(Bucket=self.name, Key=key, Body=body)
        return self.url(key)

    def get(self, key: str) -> bytes:
        """The bytes at ``key``."""
        return bytes(self.server.client().get_object(Bucket=self.name, Key=key)["Body"].read())

    def keys(self, prefix: str = "") -> list[str]:
        """Every key under ``prefix``, sorted."""
        pages = self.server.client().get_paginator("list_objects_v2")
        found = [
            item["Key"]
            for page in pages.paginate(Bucket=self.name, Prefix=prefix)
            for item in page.get("Contents", [])
        ]
        return sorted(found)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server on a free port of 127.0.0.1, for the whole session."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(endpoint=f"http://{host}:{port}", handle=server)
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Bucket:
    """An empty bucket of this test's own, with the AWS environment pointing at the server."""
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    bucket = S3Bucket(server=s3_server, name=f"assay-{uuid.uuid4().hex[:12]}")
    s3_server.client().create_bucket(Bucket=bucket.name)
    return bucket


def free_environment() -> dict[str, str]:
    """``os.environ`` without AWS variables: a process that must not reach any S3 server."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
