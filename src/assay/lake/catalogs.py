"""Which Iceberg catalog a workspace's tables live in: ``catalog:`` of ``assay.yaml``.

Without ``catalog:`` the catalog is the workspace's own SQLite file (``warehouse/catalog.db``,
data under ``warehouse/``), as one machine needs. A deployment of several machines names a
catalog they share, and a warehouse every one of them can read::

    catalog:
      type: sql                                   # PyIceberg's SQL catalog on a shared database
      uri: postgresql+psycopg://iceberg@db.internal:5432/lake
      warehouse: s3://lake/warehouse              # or a folder every machine mounts

    catalog:
      type: rest                                  # an Iceberg REST catalog server
      uri: https://catalog.internal/api/catalog
      warehouse: lake                             # optional: the server's name for its warehouse
      token_env: ICEBERG_TOKEN                    # optional: the variable holding a bearer token

Decisions:

* **No secret in the file.** ``assay.yaml`` sits in a workspace folder that backups, check
  documents and the web's authors share; a password there leaks with any of them. A REST token or
  OAuth2 client credential is named by the environment variable holding it (``token_env``,
  ``credential_env``); a SQL URL with a password is refused (PostgreSQL reads ``PGPASSWORD`` or
  ``~/.pgpass``). S3 endpoint and keys come from the standard AWS variables (``AWS_ENDPOINT_URL``,
  ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``), given
  to PyIceberg's S3 file IO as its ``s3.*`` properties.
* **A SQL catalog names its warehouse.** Two machines on one catalog must write data where both
  read it: a local default (each machine's own workspace folder) would commit files the other
  machine cannot open, so ``warehouse:`` is required. A REST server chooses table locations
  itself; ``warehouse:`` is then only passed to it.
* ``name:`` (default ``assay``) is the catalog's name: a SQL catalog keeps the tables of every
  name in one database, apart by this name.

>>> settings({"type": "sql", "uri": "postgresql+psycopg://iceberg@db/lake", "warehouse": "s3://lake/wh"},
...          Path("/ws/assay.yaml")).warehouse
's3://lake/wh'
>>> settings({"type": "sql", "uri": "postgresql://ana:secret@db/lake", "warehouse": "/srv/lake"},
...          Path("/ws/assay.yaml"))
Traceback (most recent call last):
...
assay.errors.ConfigError: /ws/assay.yaml: catalog.uri: holds a password; ...
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pyiceberg.catalog import Catalog
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from assay.errors import ConfigError

__all__ = [
    "DEFAULT_NAME",
    "RestSettings",
    "Settings",
    "SqlSettings",
    "local_location",
    "open_catalog",
    "s3_properties",
    "settings",
    "warehouse_location",
]

DEFAULT_NAME = "assay"
S3_SCHEME = "s3://"
# PyIceberg's S3 file IO properties, each from the standard AWS variable(s) a user already sets.
S3_PROPERTIES = {
    "s3.endpoint": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "s3.access-key-id": ("AWS_ACCESS_KEY_ID",),
    "s3.secret-access-key": ("AWS_SECRET_ACCESS_KEY",),
    "s3.session-token": ("AWS_SESSION_TOKEN",),
    "s3.region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}
ARROW_IO = "pyiceberg.io.pyarrow.PyArrowFileIO"
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SqlSettings(_Strict):
    """``catalog: {type: sql}``: PyIceberg's SQL catalog on the database at ``uri``."""

    type: Literal["sql"]
    uri: str
    name: str = DEFAULT_NAME
    warehouse: str

    @field_validator("uri")
    @classmethod
    def _sqlalchemy_url(cls, uri: str) -> str:
        try:
            url = make_url(uri)
        except ArgumentError:
            raise ValueError(
                f"{uri!r} is not a SQLAlchemy URL (postgresql+psycopg://user@host:5432/db)"
            ) from None
        if url.password is not None:
            raise ValueError(
                "holds a password; keep it out of assay.yaml (PostgreSQL reads PGPASSWORD or ~/.pgpass)"
            )
        return uri


class RestSettings(_Strict):
    """``catalog: {type: rest}``: an Iceberg REST catalog server at ``uri``."""

    type: Literal["rest"]
    uri: str
    name: str = DEFAULT_NAME
    warehouse: str | None = None
    token_env: Annotated[str, Field(pattern=ENV_NAME)] | None = None
    credential_env: Annotated[str, Field(pattern=ENV_NAME)] | None = None
    # where a credential is exchanged for a token: the catalog's own endpoint unless given
    oauth_uri: str | None = None

    @field_validator("uri")
    @classmethod
    def _http_url(cls, uri: str) -> str:
        if not uri.startswith(("http://", "https://")):
            raise ValueError(f"{uri!r} is not an http:// or https:// URL")
        return uri.rstrip("/")


Settings = Annotated[SqlSettings | RestSettings, Field(discriminator="type")]


class _Part(_Strict):
    catalog: Settings


def settings(raw: Any, config: Path) -> SqlSettings | RestSettings | None:
    """The ``catalog:`` part of the assay.yaml at ``config`` (``raw``, as read) as settings, None
    when there is none; every mistake in it is one ConfigError naming the file and the field."""
    if raw is None:
        return None
    try:
        return _Part.model_validate({"catalog": raw}).catalog
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            # a union's branch name ('sql', 'rest') is pydantic's, not a key of the file
            where = [str(p) for p in problem["loc"] if p not in ("sql", "rest")]
            message = problem["msg"].removeprefix("Value error, ")
            lines.append(f"{config}: {'.'.join(where)}: {message}")
        raise ConfigError("\n".join(lines)) from None


def warehouse_location(text: str, workspace: Path, config: Path) -> str:
    """``warehouse:`` as the location PyIceberg takes: ``s3://bucket/prefix`` as it is, a folder
    (relative to the workspace) as a ``file://`` URL."""
    if text.startswith(S3_SCHEME):
        bucket = text[len(S3_SCHEME) :].split("/", 1)[0]
        if not bucket:
            raise ConfigError(f"{config}: catalog.warehouse: {text!r} names no bucket (s3://bucket/prefix)")
        return text.rstrip("/")
    if "://" in text:
        raise ConfigError(f"{config}: catalog.warehouse: {text!r}: write a folder or s3://bucket/prefix")
    folder = Path(os.path.expanduser(text))
    folder = (folder if folder.is_absolute() else workspace / folder).resolve()
    return local_location(folder, workspace)


def local_location(folder: Path, workspace: Path) -> str:
    """``folder`` as a ``file://`` URL, refused when Iceberg would misread it."""
    # Iceberg keeps file locations as URLs: '#' and '?' would end the path. The location is
    # given unencoded (file:///a b/...), because PyIceberg does not decode %20 when it writes.
    if set("#?") & set(str(folder)):
        raise ConfigError(
            f"{workspace}: a warehouse path cannot contain '#' or '?' (Iceberg keeps file locations "
            "as URLs); choose another folder"
        )
    return f"file://{folder}"


def s3_properties() -> dict[str, str]:
    """PyIceberg's ``s3.*`` properties from the standard AWS variables that are set, the endpoint
    and region of the workspace's ``storage:`` first (:mod:`assay.lake.storage`: the inputs, the
    run files and the warehouse reach one S3 the same way)."""
    from assay.lake import storage

    found = {}
    for key, names in S3_PROPERTIES.items():
        value = next((os.environ[n] for n in names if os.environ.get(n)), None)
        if value is not None:
            found[key] = value
    chosen = storage.settings()
    for key, value in (("s3.endpoint", chosen.endpoint), ("s3.region", chosen.region)):
        if value:
            found[key] = value
    return found


def open_catalog(chosen: SqlSettings | RestSettings, workspace: Path, config: Path) -> Catalog:
    """The PyIceberg catalog ``chosen`` names (a SQL catalog's tables are created on first use)."""
    common = {**s3_properties(), "py-io-impl": ARROW_IO}
    if isinstance(chosen, SqlSettings):
        from pyiceberg.catalog.sql import SqlCatalog

        location = warehouse_location(chosen.warehouse, workspace, config)
        return SqlCatalog(chosen.name, uri=chosen.uri, warehouse=location, **common)
    from pyiceberg.catalog.rest import RestCatalog

    properties = {**common, "uri": chosen.uri}
    if chosen.warehouse is not None:
        properties["warehouse"] = chosen.warehouse
    for key, variable in (("token", chosen.token_env), ("credential", chosen.credential_env)):
        if variable is None:
            continue
        value = os.environ.get(variable)
        if not value:
            raise ConfigError(f"{config}: catalog.{key}_env: the variable {variable} is not set")
        properties[key] = value
    if chosen.credential_env is not None:
        properties["oauth2-server-uri"] = chosen.oauth_uri or f"{chosen.uri}/v1/oauth/tokens"
    return RestCatalog(chosen.name, **properties)
