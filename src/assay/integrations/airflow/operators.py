"""The three operators: ``assay check run``, ``assay gate`` and ``assay profile`` as Airflow
tasks, each taking its command's options by their snake_case names and returning the run's JSON
(XCom ``return_value``). The work is the platform's, the functions the commands call."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from airflow.sdk import Context

from assay.integrations.airflow.base import AssayOperator, Finished, logical_date
from assay.vocabulary import fail_on as parse_fail_on
from assay.vocabulary import reached


class AssayCheckOperator(AssayOperator):
    """``assay check run DOC [DOC...]``: a check document (or event contract files) run once.

    ``at`` defaults to the DAG run's logical date (its ``run_after`` when it has none), as an
    ISO-8601 date-time; ``fail_on`` takes the command's words, ``nothing`` too; the run
    "evaluated nothing" when every enforced expectation was skipped or in error."""

    template_fields = (*AssayOperator.template_fields, "document", "more", "at", "now", "only")

    def __init__(
        self,
        *,
        document: str,
        more: Sequence[str] | None = None,
        at: str | None = None,
        now: str | None = None,
        only: Sequence[str] | None = None,
        dry_run: bool = False,
        run_retries: int | None = None,
        run_backoff: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.document = document
        self.more = list(more or ())
        self.at = at
        self.now = now
        self.only = list(only or ())
        self.dry = dry_run  # BaseOperator.dry_run is a method of its own
        self.run_retries = run_retries
        self.run_backoff = run_backoff

    def run(self, context: Context) -> Finished:
        from assay.platform.checks.document import load_document
        from assay.platform.checks.outcomes import evaluated_nothing, failures
        from assay.platform.events.document import event_files
        from assay.platform.runs.check import run_document

        parse_fail_on(self.fail_on, nothing=True)  # a wrong word stops the task before anything runs
        at = self.at if self.at is not None else logical_date(context).isoformat()
        options: dict[str, Any] = {"at": at, "now": self.now, "only": tuple(self.only)}
        options |= {"dry_run": self.dry, "retries": self.run_retries, "backoff": self.run_backoff}
        doc = Path(self.document)
        files = event_files(doc, [Path(m) for m in self.more])
        if files is not None:
            return self._events(files, options)
        document = load_document(doc)
        space = self.space()
        with self.opened(space) as metric_store:
            result = run_document(
                document,
                doc,
                store=metric_store,
                workspace=space,
                engine=self.engine,
                spark_master=self.spark_master,
                **options,
            )
        if result.state == "system_error":
            return Finished(result.to_dict(), error=result.error or "the run could not measure")
        nothing = "the run evaluated nothing (every expectation skipped or in error)"
        return Finished(
            result.to_dict(),
            failures=failures(result, self.fail_on) if self.fail_on is not None else [],
            nothing=nothing if evaluated_nothing(result.outcomes) else None,
        )

    def _events(self, files: list[Path], options: dict[str, Any]) -> Finished:
        """Event contract files: one run per event, each on its window (``check run``'s way)."""
        from assay.platform.checks.outcomes import evaluated_nothing, failures
        from assay.platform.events.event import events, load_contracts
        from assay.platform.runs.event import duckdb_only, events_payload, run_events

        duckdb_only(self.engine)
        found = events(load_contracts(files))
        space = self.space()
        with self.opened(space) as metric_store:
            results = run_events(found, store=metric_store, workspace=space, **options)
        payload = events_payload(results)
        failed = [r for r in results if r.state == "system_error"]
        if failed:
            return Finished(payload, error=failed[0].error or "the run could not measure")
        threshold = self.fail_on
        return Finished(
            payload,
            failures=[f for r in results for f in failures(r, threshold)] if threshold is not None else [],
            nothing="every event evaluated nothing"
            if all(evaluated_nothing(r.outcomes) for r in results)
            else None,
        )


class AssayGateOperator(AssayOperator):
    """``assay gate BATCH --rules RULES --contributor ID``: a contributor's batch through the
    ingestion gate. ``fail_on``: ``critical`` when rows were quarantined, ``warning`` also when
    rows were warned or a dataset rule failed; an empty batch is a run that evaluated nothing."""

    template_fields = (
        *AssayOperator.template_fields,
        "batch",
        "rules",
        "contributor",
        "contributor_type",
        "table",
        "summary",
    )

    def __init__(
        self,
        *,
        batch: str,
        rules: str,
        contributor: str,
        contributor_type: str | None = None,
        table: str | None = None,
        key: str | None = None,
        order: str | None = None,
        contributor_column: str | None = None,
        schema: str | None = None,
        summary: str | None = None,
        null_value: Sequence[str] | None = None,
        delimiter: str | None = None,
        quote: str | None = None,
        no_header: bool = False,
        encoding: str = "utf-8",
        decimal_comma: bool = False,
        run_retries: int = 0,
        run_backoff: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.batch, self.rules, self.contributor = batch, rules, contributor
        self.contributor_type, self.table, self.key, self.order = contributor_type, table, key, order
        self.contributor_column, self.schema, self.summary = contributor_column, schema, summary
        self.reading = (list(null_value or ()), delimiter, quote, no_header, encoding, decimal_comma)
        self.run_retries, self.run_backoff = run_retries, run_backoff

    def run(self, context: Context) -> Finished:
        from assay.engine.registry import engine_factory
        from assay.lake.writers import write_json
        from assay.platform.flows import gate
        from assay.platform.reading import read_options
        from assay.platform.runs.driver import Retry
        from assay.platform.runs.gate import findings, gate_options

        threshold = parse_fail_on(self.fail_on)
        open_engine = engine_factory(self.engine, master=self.spark_master)
        space = self.space()
        options = gate_options(
            space,
            batch=self.batch,
            rules=self.rules,
            contributor=self.contributor,
            contributor_type=self.contributor_type,
            table=self.table,
            key=self.key,
            order=self.order,
            contributor_column=self.contributor_column,
            schema=self.schema,
            read=read_options(*self.reading),
        )
        with self.opened(space) as metric_store:
            result = gate(
                options,
                store=metric_store,
                engine_factory=open_engine,
                retry=Retry.after(self.run_retries, self.run_backoff),
            )
        payload = result.summary.to_dict()
        if self.summary is not None:
            write_json(Path(self.summary), payload)  # as the command's --summary writes it
        found = findings(result)
        counts = {"critical": f"{payload['quarantined']} row(s) quarantined (critical)"}
        counts["warning"] = f"{payload['warned']} row(s) warned or a dataset rule failed (warning)"
        return Finished(
            payload,
            failures=[counts[s.value] for s in found] if reached(found, threshold) else [],
            nothing="the batch has no rows" if payload["total"] == 0 else None,
        )


class AssayProfileOperator(AssayOperator):
    """``assay profile INPUT --dataset NAME --load-date DAY``: a load profiled and judged
    against earlier loads. ``load_date`` defaults to the day of the DAG run's logical date;
    ``fail_on``: a hard alert is critical, a soft one a warning; a load without rows is a run
    that evaluated nothing."""

    template_fields = (*AssayOperator.template_fields, "input_file", "dataset", "load_date", "config")

    def __init__(
        self,
        *,
        input_file: str,
        dataset: str,
        load_date: str | None = None,
        window: str | None = None,
        config: str | None = None,
        null_value: Sequence[str] | None = None,
        delimiter: str | None = None,
        quote: str | None = None,
        no_header: bool = False,
        encoding: str = "utf-8",
        decimal_comma: bool = False,
        schema: str | None = None,
        run_retries: int = 0,
        run_backoff: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.input_file, self.dataset, self.load_date = input_file, dataset, load_date
        self.window, self.config = window, config
        self.reading = (list(null_value or ()), delimiter, quote, no_header, encoding, decimal_comma, schema)
        self.run_retries, self.run_backoff = run_retries, run_backoff

    def run(self, context: Context) -> Finished:
        from assay.engine.registry import engine_factory
        from assay.platform.flows import profile
        from assay.platform.reading import read_options
        from assay.platform.runs.driver import Retry
        from assay.platform.runs.profile import dataset_config, findings, load_day

        threshold = parse_fail_on(self.fail_on)
        day = (
            load_day(self.load_date, "load_date")
            if self.load_date is not None
            else logical_date(context).astimezone(UTC).date()
        )
        read = read_options(*self.reading)
        open_engine = engine_factory(self.engine, master=self.spark_master)
        space = self.space()
        with self.opened(space) as metric_store:
            result = profile(
                self.input_file,
                dataset=self.dataset,
                load_date=day,
                store=metric_store,
                workspace=space.root,
                window=self.window,
                config=lambda: dataset_config(space, self.dataset, self.config),  # read inside the run
                read=read,
                engine_factory=open_engine,
                retry=Retry.after(self.run_retries, self.run_backoff),
            )
        payload = result.to_dict()
        found = findings(result)
        alerts = [f"{a.kind} on {a.column or 'the load'} ({a.severity})" for a in result.alerts]
        return Finished(
            payload,
            failures=[text for text, s in zip(alerts, found, strict=True) if reached([s], threshold)],
            nothing="the load has no rows" if payload.get("rows") == 0 else None,
        )
