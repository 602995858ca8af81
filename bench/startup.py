"""How long `assay --help` takes to start, against a bare Python start, in the same run.

    python bench/startup.py [--runs 20] [--json OUT]

Each round runs, in fresh processes and in turn: ``python -c pass`` (the interpreter alone),
``python -c "import assay.cli"`` (the module the ``assay`` entry point imports) and
``python -m assay --help`` (the whole command), with this checkout's ``src`` first on the path.
Bytecode files are written by the first, untimed round, as an installed copy has them. It prints
the medians, the difference of each from the bare start, and whether ``assay --help`` is under
the 0.25 s target. It asserts nothing and exits 0 whatever the figures (STYLE.md habit 10); it
exits 2 when a command fails. To see where the time goes:
``python -X importtime -c "import assay.cli" 2> imports.txt``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import assay_env

TARGET = 0.25  # seconds for `assay --help`, the whole process
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import assay.cli": ["-c", "import assay.cli"],
    "assay --help": ["-m", "assay", "--help"],
}


def once(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(args)} exited with {done.returncode}:\n{done.stderr.strip()}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20, help="rounds (the median is reported)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    env = assay_env(COLUMNS="100")
    for command in COMMANDS.values():  # warm the OS caches and the bytecode files once, untimed
        try:
            once(command, env)
        except SystemExit as error:
            print(error, file=sys.stderr)
            return 2
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            times[name].append(once(command, env))
    medians = {name: statistics.median(series) for name, series in times.items()}
    bare = medians["python -c pass"]
    print(f"startup: {args.runs} round(s), each command in a fresh process; Python {sys.version.split()[0]}")
    for name, median in medians.items():
        extra = "" if name == "python -c pass" else f"  (+{median - bare:.3f} s over the bare start)"
        print(f"  {name:<18} median {median:.3f} s, min {min(times[name]):.3f} s{extra}")
    help_time = medians["assay --help"]
    verdict = "under" if help_time < TARGET else "OVER"
    print(
        f"assay --help: {help_time:.3f} s, {verdict} the {TARGET} s target; "
        f"ratio to python -c pass {help_time / bare:.2f}"
    )
    if args.json:
        payload = {
            "benchmark": "startup",
            "runs": args.runs,
            "python": sys.version.split()[0],
            "medians": medians,
            "times": times,
            "target": TARGET,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
