"""whylogs' drift scores on the loads of ``bench/detection.py``; runs in whylogs' own virtual
environment (``bench/detection.py --setup-peers``), never in assay's.

    python whylogs_child.py JOB.json OUT.json

JOB holds the clean load files in date order and, for each trial, the load it starts at and the
faulty files planted from there. Each load is profiled with ``whylogs.log``; a load is judged
against the merged profiles of the ``window`` loads before it with whylogs'
``calculate_drift_scores`` (Kolmogorov-Smirnov for numbers, chi-square for categories, its
default thresholds): a column whose drift category is ``DRIFT`` (p < 0.05) is an alert. OUT gets
the drifted columns of every clean load and of every faulty load, and whylogs' error when it
could not score a load (an empty load, a column whose type changed).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

os.environ.setdefault("WHYLOGS_NO_ANALYTICS", "True")  # offline: no usage report

import pandas as pd
import whylogs as why
from whylogs.viz.drift.column_drift_algorithms import calculate_drift_scores


def view(path: str) -> Any:
    frame = pd.read_csv(path) if path.endswith(".csv") else pd.read_parquet(path)
    return why.log(frame).view()


def drifted(references: list[Any], target: Any) -> list[str]:
    reference = references[0]
    for other in references[1:]:
        reference = reference.merge(other)
    try:
        scores = calculate_drift_scores(target_view=target, reference_view=reference, with_thresholds=True)
    except Exception as error:
        return [f"!error: {type(error).__name__}: {error}"[:200]]
    return sorted(c for c, s in scores.items() if s and s.get("drift_category") == "DRIFT")


def main() -> None:
    with open(sys.argv[1]) as source:
        job = json.load(source)
    window, warm = job["window"], job["warm"]
    clean = [view(path) for path in job["clean"]]
    judged = [drifted(clean[i - window : i], clean[i]) if i >= warm else [] for i in range(len(clean))]
    trials = []
    for trial in job["trials"]:
        history = clean[: trial["k"]]
        found = []
        for path in trial["files"]:
            today = view(path)
            found.append(drifted(history[-window:], today))
            history = [*history, today]
        trials.append(found)
    with open(sys.argv[2], "w") as out:
        json.dump({"clean": judged, "trials": trials}, out)


if __name__ == "__main__":
    main()
