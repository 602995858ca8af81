"""The ``assay`` command: parse arguments, call the package, render. No logic lives here.

Imports of the engine, the lake, the store and the renderers happen inside the commands that use
them, so that ``assay --help`` starts in a fraction of a second (``bench/startup.py`` measures it;
tests/test_cli.py checks that importing this module loads none of them).

Exit codes (DESIGN.md): 0 the run completed (data failures are in its outputs); 1 a
``--fail-on`` level was reached; 2 usage or configuration error; 3 system error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from assay import __version__
from assay._cli_common import StoreOption, WorkspaceOption, err, out
from assay._cli_common import write_json as _write_json
from assay._terminal import visible
from assay.errors import AssayError
from assay.workspace import Workspace, store_url

app = typer.Typer(
    name="assay",
    help="Data quality for tables that arrive in loads: DQDL rules on DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """assay: can this load be trusted?"""


def recover_command(
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's runs.", show_default="every dataset")
    ] = None,
    workspace: WorkspaceOption = None,
    store: StoreOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was recovered as JSON.")] = False,
) -> None:
    """Finish the runs that were killed after their commit, and undo those killed before it; then
    finish, or run again, the scheduled ticks whose process was killed."""
    from datetime import UTC, datetime

    from assay._cli_schedule import print_ticks
    from assay.platform.runs.recover import recover
    from assay.platform.schedule import resume_orphans
    from assay.store import MetricStore

    space = Workspace(workspace)
    space.ensure()
    with MetricStore.open(store_url(store), workspace=space.root) as metric_store:
        done = recover(metric_store, space, dataset=dataset)
        ticks = resume_orphans(space, metric_store, datetime.now(UTC), dataset=dataset)
    if json_out:
        _write_json(
            "-",
            {"recovered": [item.to_dict() for item in done], "ticks": [s.to_dict() for s in ticks.started]},
        )
        return
    if not done and not ticks.started and not ticks.problems:
        out.print("nothing to recover", highlight=False)
    for item in done:
        out.print(
            f"{item.action} {item.kind} run {item.run_id} of {item.dataset}: {item.detail}",
            highlight=False,
            markup=False,
        )
    print_ticks(ticks)


def demo(
    workspace: Annotated[
        Path | None, typer.Option(help="Where to build the demo.", show_default="./assay-demo")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print what each part of the demo did as JSON, not the story.")
    ] = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve", help="Then serve the demo's workspace in the web control plane (until Ctrl-C)."
        ),
    ] = False,
    port: Annotated[int, typer.Option(min=1, max=65535, help="With --serve: the port to listen on.")] = 8000,
) -> None:
    """Run the sample ruleset on the sample orders shipped with assay and show the outcomes."""
    import io

    from assay.demo import run_demo
    from assay.demo.orders import CLOCK

    # With --json the story is not printed: stdout holds the one JSON object, progress is on stderr.
    # Either way the story is recorded and kept in the workspace as story.txt, to read again.
    story = Console(file=io.StringIO(), width=100, record=True) if json_out else Console(record=True)
    done = run_demo(story, workspace or Path("assay-demo"), status=err)
    command = f"assay serve --workspace {done['workspace']} --now {CLOCK} --port {port}"
    story.print(
        f"\nSee it all in a browser: {command}\nthen open the login link it prints (http://127.0.0.1:{port}/).",
        highlight=False,
        markup=False,
    )
    done["serve"] = {"command": command, "url": f"http://127.0.0.1:{port}/", "now": CLOCK}
    (Path(done["workspace"]) / "story.txt").write_text(story.export_text(styles=False))
    if json_out:
        _write_json("-", done)
    if serve:
        from assay._cli_web import serve_workspace

        serve_workspace(Path(done["workspace"]), None, port=port, now=CLOCK)


def main() -> None:
    """Entry point: map assay's errors to exit codes, never a traceback for a user's mistake."""
    try:
        # Only the commands this line names are built in full (assay._cli_lazy): start-up time.
        from assay._cli_lazy import command_for

        code = command_for(app, sys.argv[1:])(standalone_mode=False)  # a typer.Exit's code
        if isinstance(code, int) and code:
            sys.exit(code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except AssayError as error:
        # Plain text, never re-wrapped: the caret under a ruleset error must stay in its column.
        sys.stderr.write(visible(f"error: {error}") + "\n")
        sys.exit(error.exit_code)
    except Exception as error:  # click's usage errors and anything unexpected
        if isinstance(error, typer.TyperException):  # usage errors: typer prints them, exit 2
            error.show()  # type: ignore[attr-defined]
            sys.exit(getattr(error, "exit_code", 2))
        if os.environ.get("ASSAY_DEBUG"):
            import traceback

            traceback.print_exc()
        from assay.platform.runs.run import as_assay_error

        failure = as_assay_error(error, "assay")
        sys.stderr.write(visible(f"error: {failure} (set ASSAY_DEBUG=1 for the traceback)") + "\n")
        sys.exit(failure.exit_code)


def _register_commands() -> None:
    # In the order ``assay --help`` lists them (commands, then groups); each group's module is
    # imported here, at the end, so that every command module can be read on its own.
    from assay._cli_check import check_app
    from assay._cli_decisions import accept_command, decisions_app
    from assay._cli_dqdl import dqdl_app, rules_app
    from assay._cli_gate import GateCommand, gate, table_app
    from assay._cli_incidents import incidents_app
    from assay._cli_notify import notify_app
    from assay._cli_profile import history_command, profile_command
    from assay._cli_proposals import proposals_app, propose_command
    from assay._cli_reconcile import reconcile_command
    from assay._cli_schedule import run_due, scheduler, worker
    from assay._cli_score import certify, score
    from assay._cli_web import serve, users_app

    app.add_typer(dqdl_app, name="dqdl")
    app.add_typer(rules_app, name="rules")
    app.add_typer(table_app, name="table")
    app.add_typer(decisions_app, name="decisions")
    app.command("gate", cls=GateCommand)(gate)
    app.command("profile")(profile_command)
    app.command("reconcile")(reconcile_command)
    app.command("history")(history_command)
    app.command("accept")(accept_command)
    app.command("recover")(recover_command)
    app.command("demo")(demo)
    app.add_typer(check_app, name="check")
    app.add_typer(notify_app, name="notify")
    app.add_typer(incidents_app, name="incidents")
    app.command("run")(run_due)
    app.command("scheduler")(scheduler)
    app.command("worker")(worker)
    app.command("score")(score)
    app.command("certify")(certify)
    app.command("propose")(propose_command)
    app.add_typer(proposals_app, name="proposals")
    app.command("serve")(serve)
    app.add_typer(users_app, name="users")


_register_commands()
