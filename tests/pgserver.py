"""A real PostgreSQL server for tests, started from the installed binaries; a pytest plugin.

The ``postgres_server`` fixture (session scope) runs ``initdb`` and ``pg_ctl`` from the machine's
PostgreSQL (``pg_config --bindir``, else the newest ``/usr/lib/postgresql/*/bin``) in a fresh
temporary folder, on a free TCP port of 127.0.0.1 with trust authentication, and stops it at the
end of the session. PostgreSQL refuses to run as root, so under root (as in CI) the server runs as
the ``postgres`` system user through ``runuser``. The ``postgres_url`` fixture gives each test a
database of its own, created empty, as a SQLAlchemy URL (``postgresql+psycopg://...``).

When PostgreSQL is not installed the fixtures fail (they do not skip) and say what to install:
``apt-get install postgresql`` on Debian. Durability is switched off (``fsync=off``): test data
need not survive a crash of the machine.

Use it from a test folder by importing the fixtures into that folder's ``conftest.py``
(``tests/`` is on ``sys.path`` because each test folder is a package under a ``tests/`` that is not
one)::

    from pgserver import postgres_server, postgres_url  # noqa: F401

    def test_something(postgres_url: str) -> None:
        engine = sqlalchemy.create_engine(postgres_url)

or register it once for the whole suite in ``tests/conftest.py`` with
``pytest_plugins = ["pgserver"]``. The server starts only when a test asks for it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

SUPERUSER = "postgres"
"""The server's superuser, and the system user the server runs as when the tests run as root."""


class PostgresServer:
    """A PostgreSQL server in a temporary folder, reachable on ``127.0.0.1:port`` without password.

    >>> server = PostgresServer.start()          # doctest: +SKIP
    >>> url = server.create_database()           # doctest: +SKIP
    >>> server.stop()                            # doctest: +SKIP
    """

    def __init__(self, bindir: Path, folder: Path, port: int) -> None:
        self.bindir = bindir
        self.folder = folder
        self.port = port

    @classmethod
    def start(cls) -> PostgresServer:
        """Create a cluster in a new temporary folder and start a server on a free port."""
        bindir = find_bindir()
        # mkdtemp makes a 0700 folder; the server's user must be able to enter it.
        folder = Path(tempfile.mkdtemp(prefix="assay-pg-"))
        folder.chmod(0o755)
        (folder / "socket").mkdir()
        if os.geteuid() == 0:
            shutil.chown(folder, SUPERUSER, SUPERUSER)
            shutil.chown(folder / "socket", SUPERUSER, SUPERUSER)
        server = cls(bindir, folder, free_port())
        server._run(
            "initdb", "-D", str(server.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "--no-locale"
        )
        options = (
            f"-k {folder / 'socket'} -p {server.port} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        server._run("pg_ctl", "-D", str(server.data), "-l", str(server.log), "-o", options, "-w", "start")
        return server

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        return self.folder / "data"

    @property
    def log(self) -> Path:
        """The server's log file."""
        return self.folder / "server.log"

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of ``database`` on this server.

        >>> PostgresServer(Path("/usr/bin"), Path("/tmp"), 5999).url("quality")
        'postgresql+psycopg://postgres@127.0.0.1:5999/quality'
        """
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (a unique name unless given) and return its SQLAlchemy URL."""
        name = name or f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=SUPERUSER, dbname="postgres"
        ) as connection:
            connection.autocommit = True
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def pause(self) -> None:
        """Stop the server (fast shutdown: sessions are cut) and keep its data, for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start a paused server again on the same port."""
        options = f"-k {self.folder / 'socket'} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.bindir / program), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SUPERUSER, "--", *command]
        # The server's user may not be able to enter the caller's working directory.
        done = subprocess.run(command, cwd=self.folder, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else "(no server log)"
            pytest.fail(
                f"PostgreSQL test server: {' '.join(command)} exited with {done.returncode}\n"
                f"{done.stdout}{done.stderr}\nserver log:\n{log}",
                pytrace=False,
            )


def find_bindir() -> Path:
    """The folder of the installed PostgreSQL server programs; fails the test when there is none."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            candidates.append(Path(done.stdout.strip()))
    installed = [Path(path) for path in glob.glob("/usr/lib/postgresql/*/bin")]
    versions = sorted(
        (path for path in installed if path.parent.name.isdigit()), key=lambda path: int(path.parent.name)
    )
    candidates.extend(reversed(versions))
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    pytest.fail(
        "PostgreSQL server programs (initdb, pg_ctl) not found (pg_config, /usr/lib/postgresql/*/bin): "
        "the PostgreSQL tests need them; install them with `apt-get install postgresql`",
        pytrace=False,
    )


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole test session."""
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The SQLAlchemy URL of a new, empty database on the session's server."""
    return postgres_server.create_database()
