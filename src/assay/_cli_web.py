"""``assay serve`` and ``assay users``: the web control plane and the people who may use it.

Imported by :mod:`assay.cli`, which registers the commands; the work is in :mod:`assay.web` and
the store's users (:mod:`assay.store.users`).
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from assay._cli_common import StoreOption, WorkspaceOption, out
from assay.errors import ConfigError
from assay.workspace import Workspace, store_url

users_app = typer.Typer(
    help="Users of the web control plane and the API: viewer, author or admin.", no_args_is_help=True
)

ByOption = Annotated[
    str | None,
    typer.Option(
        "--by",
        help="Who does it (kept in the audit trail).",
        envvar="ASSAY_USER",
        show_default="the login name",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")]
HostOption = Annotated[str, typer.Option(help="The address to listen on (0.0.0.0: every interface).")]
PortOption = Annotated[int, typer.Option(min=0, max=65535, help="The port to listen on (0: a free one).")]


def _who(by: str | None) -> str:
    return by or os.environ.get("ASSAY_USER") or getpass.getuser()


def _store(workspace: Path | None, store: str | None) -> Any:
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.ensure()
    return MetricStore.open(store_url(store), workspace=space.root)


def link(host: str, port: int, code: str) -> str:
    """The one-time login link a person opens."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/login?token={code}"


def serve(
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    now: Annotated[
        str | None,
        typer.Option(
            help="A fixed clock (ISO-8601) for scores and freshness: a demo's or a replay's.",
            show_default="the real clock",
        ),
    ] = None,
    secure_cookies: Annotated[
        bool,
        typer.Option(
            "--secure-cookies",
            help="Send every cookie (session, login form, messages) over HTTPS only (behind a TLS proxy).",
        ),
    ] = False,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json", help="Print {url, workspace, login} as one JSON line once listening, then serve."
        ),
    ] = False,
) -> None:
    """Serve the web control plane and its JSON API (/api/v1) for the workspace, until Ctrl-C or
    SIGTERM. On a workspace with no users it creates an admin and prints a one-time login link."""
    serve_workspace(
        Workspace(workspace).root,
        store_url(store),
        host=host,
        port=port,
        now=now,
        secure_cookies=secure_cookies,
        json_out=json_out,
    )


def serve_workspace(
    root: Path,
    url: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    now: str | None = None,
    secure_cookies: bool = False,
    json_out: bool = False,
) -> None:
    """Serve ``root`` (``assay serve``, ``assay demo --serve``); prints the address, and a
    one-time login link when the workspace has no user yet (with ``json_out``, both as one JSON
    line)."""
    import socket

    import uvicorn

    from assay.judge.evaluation import parse_now
    from assay.web.app import create_app
    from assay.web.plane import Plane, Settings

    clock = None if now is None else parse_now(now)
    plane = Plane(Settings(root, store_url=url, now=clock, secure_cookies=secure_cookies))
    try:
        # bind first: a port in use is the user's to change (exit 2), before any user is made
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(2048)  # connections made from now on wait for the server, none is refused
        except OSError as error:
            raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror}") from None
        port = sock.getsockname()[1]  # the one chosen, for --port 0
        login = None
        if plane.store.user_count() == 0:
            plane.store.add_user("admin", "admin", by="assay serve")
            login = link(host, port, plane.store.login_code("admin", by="assay serve"))
        url = f"http://{host}:{port}/"
        if json_out:
            sys.stdout.write(json.dumps({"url": url, "workspace": str(root), "login": login}) + "\n")
        else:
            if login is not None:
                sys.stdout.write("no user yet: created the admin 'admin'; open this link once to log in\n")
                sys.stdout.write(f"login: {login}\n")
            sys.stdout.write(f"serving {root} at {url} (Ctrl-C stops)\n")
        sys.stdout.flush()
        app = create_app(plane=plane)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        server = uvicorn.Server(config)
        _exit_zero_on_signals()
        server.run(sockets=[sock])
    finally:
        plane.close()


def _exit_zero_on_signals() -> None:
    """SIGTERM and Ctrl-C stop the server cleanly with exit code 0, as ``assay scheduler`` does:
    uvicorn finishes the requests in flight, then hands the signal it caught to the handler that
    was there before it, which is this one."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user's name (letters, digits, . _ @ -).")],
    role: Annotated[
        str, typer.Option(help="viewer (reads), author (adds checks, decides) or admin.")
    ] = "viewer",
    by: ByOption = None,
    json_out: JsonOption = False,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Add a user; their token (for the login form and Authorization: Bearer) is the last line."""
    with _store(workspace, store) as metric_store:
        token = metric_store.add_user(name, role, by=_who(by))
        user = metric_store.user(name)
    if json_out:
        sys.stdout.write(json.dumps({"user": user.to_dict(), "token": token}, indent=2) + "\n")
        return
    sys.stdout.write(f"added {name} ({role}); the token, shown this once:\n{token}\n")


@users_app.command("list")
def users_list(
    json_out: JsonOption = False, workspace: WorkspaceOption = None, store: StoreOption = None
) -> None:
    """Every user with their role (tokens are never shown again)."""
    with _store(workspace, store) as metric_store:
        found = metric_store.users()
    if json_out:
        sys.stdout.write(json.dumps({"users": [u.to_dict() for u in found]}, indent=2) + "\n")
        return
    if not found:
        out.print("no user yet: assay users add NAME --role admin, or assay serve makes one", highlight=False)
        return
    table = Table(title_justify="left")
    for column in ("name", "role", "added", "by", "state"):
        table.add_column(column, overflow="fold")
    for u in found:
        table.add_row(
            escape(u.name),
            u.role,
            f"{u.created_at:%Y-%m-%d %H:%M}",
            escape(u.created_by or ""),
            "disabled" if u.disabled_at else "active",
        )
    out.print(table)


@users_app.command("token")
def users_token(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user.")],
    by: ByOption = None,
    json_out: JsonOption = False,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Give a user a new token (the last line); the old one and their sessions stop working."""
    with _store(workspace, store) as metric_store:
        token = metric_store.new_token(name, by=_who(by))
    if json_out:
        sys.stdout.write(json.dumps({"user": name, "token": token}, indent=2) + "\n")
        return
    sys.stdout.write(f"new token of {name}; the old one no longer works:\n{token}\n")


@users_app.command("link")
def users_link(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user.")],
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    by: ByOption = None,
    json_out: JsonOption = False,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Print a one-time login link for a user (valid 24 hours), for a server at HOST:PORT."""
    with _store(workspace, store) as metric_store:
        code = metric_store.login_code(name, by=_who(by))
    if json_out:
        sys.stdout.write(json.dumps({"user": name, "login": link(host, port, code)}, indent=2) + "\n")
        return
    sys.stdout.write(f"login: {link(host, port, code)}\n")


@users_app.command("set")
def users_set(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user.")],
    role: Annotated[str | None, typer.Option(help="The new role.", show_default="unchanged")] = None,
    disable: Annotated[
        bool | None,
        typer.Option(
            "--disable/--enable",
            help="Disable the user (their sessions end) or enable them.",
            show_default="unchanged",
        ),
    ] = None,
    by: ByOption = None,
    json_out: JsonOption = False,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
) -> None:
    """Change a user's role, or disable or enable them."""
    if role is None and disable is None:
        raise ConfigError("say what to change: --role ROLE, --disable or --enable")
    with _store(workspace, store) as metric_store:
        user = metric_store.set_user(name, by=_who(by), role=role, disabled=disable)
    if json_out:
        sys.stdout.write(json.dumps({"user": user.to_dict()}, indent=2) + "\n")
        return
    state = "disabled" if user.disabled_at else "active"
    out.print(f"{escape(user.name)}: {user.role}, {state}", highlight=False)
