"""Object storage: ``s3://bucket/key`` inputs read, and a workspace's run files written, through
Arrow's own S3 filesystem (:class:`pyarrow.fs.S3FileSystem`). No DuckDB extension is loaded or
downloaded: DuckDB and Spark only ever see local files.

Where the connection comes from, in this order:

- ``storage:`` of the workspace's ``assay.yaml`` (:class:`StorageSettings`): ``endpoint``, ``region``,
  ``profile``, and where ``runs/`` and ``dq_error/`` go (an ``s3://bucket/prefix`` each);
- the standard AWS environment: ``AWS_ENDPOINT_URL`` (or ``AWS_ENDPOINT_URL_S3``), ``AWS_REGION`` /
  ``AWS_DEFAULT_REGION``, ``AWS_PROFILE`` with ``~/.aws/config`` and ``~/.aws/credentials``,
  ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``.

Secrets never go in ``assay.yaml`` (a workspace file is copied, committed, shown on the web): a key
there is refused with the place credentials belong.

Reading: an object is streamed, a MiB at a time, into a local copy in a staging folder of the
process (removed when it exits), its last-modified time kept; every reader, the gate's checksum and
the file rules then read that copy exactly as they read a local file, so an input gives the same
outcomes, metrics and splits from S3 as from disk, on DuckDB and on Spark alike.

Writing (:func:`put`): one object is one request: a single PUT (S3 stores all of it or none), or,
past Arrow's part size, a multipart upload, which S3 shows only once it is completed. A failed
write leaves nothing visible and is a :class:`~assay.errors.PlatformError` naming the object. Keys
are chosen by the caller from the run (``runs/<run_id>.json``), so a run finished again after a kill
overwrites its object, never adds a second.

>>> location("s3://drops/2026/day.csv")
Location(bucket='drops', key='2026/day.csv')
>>> str(location("s3:/drops/day.csv"))  # a Path folds the two slashes; the URL is the same
's3://drops/day.csv'
"""

from __future__ import annotations

import atexit
import fnmatch
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from assay.errors import ConfigError, PlatformError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

SCHEME = "s3"
_URL = re.compile(r"^s3:/+", re.IGNORECASE)
_CHUNK = 1 << 20
# What an S3 answer says when the user's configuration (credentials, bucket, region) is wrong,
# rather than the network or the server: a ConfigError (exit 2) that says what to set.
_USER_ERRORS = (
    "ACCESS_DENIED",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "NoSuchBucket",
    "NO_SUCH_BUCKET",
    "AuthorizationHeaderMalformed",
    "UNKNOWN (HTTP status 403)",
    "HTTP status 403",
)
_CREDENTIALS = (
    "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), AWS_REGION and, for a server other "
    "than AWS, AWS_ENDPOINT_URL (or storage: endpoint: in assay.yaml)"
)


class StorageSettings(BaseModel):
    """``storage:`` of ``assay.yaml``: where the S3-compatible store is, and which of the
    workspace's folders live on it. Credentials are the AWS environment's or profile's, never here.

    >>> StorageSettings(endpoint="http://minio:9000", runs="s3://dq-files/runs").runs
    's3://dq-files/runs'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    endpoint: str | None = None
    region: str | None = None
    profile: str | None = None
    runs: str | None = None
    dq_error: str | None = None

    @field_validator("runs", "dq_error")
    @classmethod
    def _a_prefix(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not is_url(value):
            raise ValueError(f"{value!r} is not an s3://bucket/prefix URL")
        try:
            return str(location(value))
        except ConfigError as error:
            raise ValueError(error.message) from None

    @classmethod
    def of(cls, raw: Any, config: Path) -> StorageSettings:
        """The ``storage:`` part ``raw`` of the file ``config``; each mistake names its field."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ConfigError(f"{config}: storage: is a mapping (endpoint, region, profile, runs, dq_error)")
        secrets = [k for k in raw if re.search(r"key|secret|token|password", str(k), re.IGNORECASE)]
        if secrets:
            raise ConfigError(
                f"{config}: storage.{secrets[0]}: credentials are not kept in the workspace file; "
                "set them in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or a profile "
                "(~/.aws/credentials, storage: profile:)"
            )
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            lines = [
                f"{config}: storage.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
            ]
            raise ConfigError("\n".join(lines)) from None


@dataclass(frozen=True)
class Location:
    """An object (or a prefix) of a bucket."""

    bucket: str
    key: str

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.key}" if self.key else f"s3://{self.bucket}"

    @property
    def path(self) -> str:
        """The ``bucket/key`` form Arrow's filesystem takes."""
        return f"{self.bucket}/{self.key}".rstrip("/")

    def child(self, *parts: str) -> Location:
        """The object ``parts`` below this prefix (each part a plain name, checked)."""
        return location(f"s3://{self.bucket}/{'/'.join([self.key.rstrip('/'), *parts]).lstrip('/')}")


@dataclass(frozen=True)
class StoredObject:
    """One object a listing found: its URL, size in bytes and last-modified time (epoch seconds)."""

    url: str
    size: int
    modified: float


def is_url(text: object) -> bool:
    """Whether ``text`` (a str or a path) names an object store location.

    >>> is_url("s3://drops/k"), is_url(Path("s3://drops/k")), is_url("data/s3.csv")
    (True, True, False)
    """
    return isinstance(text, str | os.PathLike) and bool(_URL.match(os.fspath(text)))


def location(text: str | os.PathLike[str] | Location) -> Location:
    """``s3://bucket/key`` as a :class:`Location`; a key that could climb out of its prefix once
    decoded (``..``, ``%2e%2e``, a backslash, a NUL) is refused.

    >>> location("s3://drops/in/%2e%2e/x.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: s3://drops/in/%2e%2e/x.csv: an object key may not hold '..', '.', ...
    """
    if isinstance(text, Location):
        return text
    raw = os.fspath(text)
    rest = _URL.sub("", raw, count=1)
    bucket, _, key = rest.partition("/")
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", bucket):
        raise ConfigError(f"{raw}: '{bucket}' is not a bucket name (write s3://bucket/key)")
    parts = key.split("/")
    if (
        "%" in key
        or "\\" in key
        or "\x00" in key
        or any(p in ("..", ".") for p in parts)
        or unquote(key) != key
        or any(p == "" for p in parts[:-1])
    ):
        raise ConfigError(f"{raw}: an object key may not hold '..', '.', '\\\\', NUL or %-escapes")
    return Location(bucket, key)


_settings = StorageSettings()


def configure(settings: StorageSettings) -> None:
    """Use ``settings`` (a workspace's ``storage:``) for the rest of the process; the run driver
    calls it when it opens a workspace."""
    global _settings
    _settings = settings


def settings() -> StorageSettings:
    """The settings in use (:func:`configure`; the environment's alone by default)."""
    return _settings


_filesystems: dict[tuple[str | None, ...], pafs.S3FileSystem] = {}


def filesystem(chosen: StorageSettings | None = None) -> pafs.S3FileSystem:
    """Arrow's S3 filesystem for ``chosen`` (by default the settings in use) and the AWS
    environment."""
    import pyarrow.fs as pafs

    chosen = chosen or _settings
    endpoint = chosen.endpoint or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    region = chosen.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    profile = chosen.profile or os.environ.get("AWS_PROFILE")
    keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    cache = (endpoint, region, profile, *(os.environ.get(k) for k in keys))
    if cache not in _filesystems:
        # delayed open: an object smaller than a part is one PUT at close, never a multipart
        # upload that a failure would leave behind unfinished
        options: dict[str, Any] = {"region": region or "us-east-1", "allow_delayed_open": True}
        if endpoint:
            parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
            options["scheme"], options["endpoint_override"] = parts.scheme, parts.netloc
        if chosen.profile:
            # Arrow's AWS SDK reads the profile from the environment only: storage: profile:
            # wins over AWS_PROFILE, for this process (keys in the environment still come first)
            os.environ["AWS_PROFILE"] = chosen.profile
        _filesystems[cache] = pafs.S3FileSystem(**options)
    return _filesystems[cache]


def failure(error: OSError, url: str, doing: str) -> ConfigError | PlatformError:
    """An Arrow S3 error as assay's: the user's configuration (credentials, bucket) or a missing
    object is a ConfigError (exit 2); anything else (network, server) a PlatformError (exit 3)."""
    reason = " ".join(str(error).split())
    if isinstance(error, FileNotFoundError):
        return ConfigError(f"{url}: no such object")
    if any(code in reason for code in _USER_ERRORS):
        return ConfigError(f"{url}: cannot {doing}: {reason}; {_CREDENTIALS}")
    return PlatformError(f"{url}: cannot {doing}: {reason}")


def objects(text: str | os.PathLike[str] | Location) -> list[StoredObject]:
    """The objects ``text`` names, in key order: one object, every object under a prefix (a
    ``/``-ended key, or a key that is a folder), or those a glob (``*``, ``?``, ``[``) matches below
    the part before its first glob character. [] when none exists."""
    import pyarrow.fs as pafs

    where = location(text)
    fs = filesystem()
    fixed, magic = _split_glob(where.key)
    try:
        if magic is None:
            info = fs.get_file_info(where.path)
            if info.type == pafs.FileType.File and not where.key.endswith("/"):
                return [_object(where.bucket, info)]
            if info.type == pafs.FileType.NotFound and not where.key.endswith("/"):
                return []
            infos = fs.get_file_info(pafs.FileSelector(where.path, recursive=True, allow_not_found=True))
            return sorted(
                (_object(where.bucket, i) for i in infos if i.type == pafs.FileType.File), key=lambda o: o.url
            )
        base = f"{where.bucket}/{fixed}".rstrip("/")
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    except OSError as error:
        raise failure(error, str(where), "list it") from None
    pattern = f"{where.bucket}/{where.key}"
    found = [
        _object(where.bucket, i)
        for i in infos
        if i.type == pafs.FileType.File and fnmatch.fnmatchcase(i.path, pattern)
    ]
    return sorted(found, key=lambda o: o.url)


def _split_glob(key: str) -> tuple[str, str | None]:
    parts = key.split("/")
    for i, part in enumerate(parts):
        if any(c in part for c in "*?["):
            return "/".join(parts[:i]), "/".join(parts[i:])
    return key, None


def _object(bucket: str, info: Any) -> StoredObject:
    modified = info.mtime.timestamp() if info.mtime is not None else 0.0
    return StoredObject(f"s3://{info.path}", int(info.size or 0), modified)


_staging: Path | None = None
_origins: dict[Path, str] = {}


def _staging_folder() -> Path:
    global _staging
    if _staging is None or not _staging.is_dir():
        _staging = Path(tempfile.mkdtemp(prefix="assay-s3-"))
        atexit.register(shutil.rmtree, _staging, True)
    return _staging


def stage(text: str | os.PathLike[str], *, what: str = "data file") -> Path:
    """The object ``text`` names as a local copy (streamed, its last-modified time kept), read by
    the local readers; a prefix or a missing object is refused as a local folder or file is."""
    where = location(text)
    found = objects(where) if where.key and not where.key.endswith("/") else []
    if len(found) != 1 or found[0].url != str(where):
        if found:
            raise ConfigError(f"{where}: is a prefix (a folder), not a {what}")
        raise ConfigError(f"{where}: no such {what}")
    return stage_objects(found)[0]


def stage_objects(found: Sequence[StoredObject]) -> list[Path]:
    """Local copies of ``found`` under the process's staging folder, at ``<bucket>/<key>``."""
    fs = filesystem()
    copies = []
    for item in found:
        where = location(item.url)
        target = _staging_folder() / where.bucket / where.key
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with fs.open_input_stream(where.path) as source, target.open("wb") as out:
                while chunk := source.read(_CHUNK):
                    out.write(chunk)
        except OSError as error:
            target.unlink(missing_ok=True)
            raise failure(error, item.url, "read it") from None
        os.utime(target, (item.modified, item.modified))
        _origins[target] = item.url
        copies.append(target)
    return copies


def release() -> None:
    """Remove the local copies staged so far (the run driver calls it when a run ends)."""
    for copy in list(_origins):
        copy.unlink(missing_ok=True)
        del _origins[copy]


def origin(path: str | os.PathLike[str]) -> str:
    """What a run records as its input: the ``s3://`` URL of an object (or of the staged copy
    read from one), else the path itself.

    >>> origin("data/day.csv"), origin(Path("s3://drops/day.csv"))
    ('data/day.csv', 's3://drops/day.csv')
    """
    if is_url(path):
        return str(location(path))
    return _origins.get(Path(path), os.fspath(path))


def put(url: str | Location, data: bytes | Path, chosen: StorageSettings | None = None) -> None:
    """Write ``data`` (bytes, or a local file streamed) as the object ``url``, whole or not at all,
    through ``chosen`` settings (by default the settings in use)."""
    where = location(url)
    fs = filesystem(chosen)
    try:
        out = fs.open_output_stream(where.path)
    except OSError as error:
        raise failure(error, str(where), "write it") from None
    try:
        if isinstance(data, Path):
            with data.open("rb") as source:
                while chunk := source.read(_CHUNK):
                    out.write(chunk)
        else:
            out.write(data)
        out.close()
    except OSError as error:
        raise failure(error, str(where), "write it") from None


def digest(url: str | Location, algorithm: str = "sha256") -> str:
    """The hex digest of the object ``url``'s bytes, streamed (nothing kept on disk)."""
    where = location(url)
    hasher = hashlib.new(algorithm)
    try:
        with filesystem().open_input_stream(where.path) as source:
            while chunk := source.read(_CHUNK):
                hasher.update(chunk)
    except OSError as error:
        raise failure(error, str(where), "read it") from None
    return hasher.hexdigest()


def read(url: str | Location) -> bytes:
    """The bytes of the object ``url``."""
    where = location(url)
    try:
        with filesystem().open_input_stream(where.path) as source:
            return bytes(source.read())
    except OSError as error:
        raise failure(error, str(where), "read it") from None
