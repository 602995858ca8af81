"""A person's decision on a proposal: accepting writes its expectation into the dataset's check
document as ``mode: advisory`` (with who, when and the evidence, and the metrics it needs added
to its profile; the author's comments and layout kept), or a classification's column into the
document's ``dataset.classified``, rejecting records why; both are events
of the proposal's trail, and an accepted one is never proposed again, a rejected one only when
its evidence changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.platform.checks.document import find_document, read_text
from assay.platform.checks.edit import classified_text, diff_text, document_lock, edited_text, write_document
from assay.store.proposals import ProposalRecord
from assay.workspace import Workspace


@dataclass
class Accepted:
    proposal: ProposalRecord
    document: Path
    diff: str


def accept(
    store: Any, proposal_id: str, *, by: str, workspace: Path | str | None = None, at: datetime | None = None
) -> Accepted:
    """Accept an open proposal (its id or a unique prefix): its expectation is appended to the
    dataset's check document, advisory, its description saying who accepted it and when, and
    a comment above it the proposal's id and numbers (a classification's column is added to
    ``dataset.classified`` instead); returns the diff of the document. The
    document is written and the decision recorded together, with its audit row
    (``proposal.accept``, the document as the workspace names it and the diff), or neither."""
    when = at or datetime.now(UTC)
    record = store.proposal(proposal_id)
    if record.state != "open":
        store.decide_proposal(record.id, "accepted", by=by, at=when)  # raises: says who and when
    root = Workspace(workspace).root
    path = find_document(root / "checks", record.dataset)
    if path is None:
        raise ConfigError(f"no check document of dataset '{record.dataset}' in {root / 'checks'}")
    stamp = f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    backtest = record.backtest or {}
    dry = record.dry_run or {}
    edit: Callable[[str], str]
    written: Callable[[str], bool]
    if record.kind == "classify":  # a classification: the columns join dataset.classified
        classes = {str(k): [str(c) for c in v] for k, v in record.expectation["classified"].items()}
        note = (
            f"proposal {record.id[:8]} (classify), accepted by {by} on {stamp}: "
            f"{record.evidence.get('share', 0):.0%} of {record.evidence.get('sampled')} sampled values "
            f"looked like {str(record.evidence.get('shape', '')).replace('_', ' ')}s"
        )

        def edit(text: str) -> str:
            return classified_text(text, classes, comment=note, filename=str(path))

        def written(text: str) -> bool:
            return _classified_already(text, classes, str(path))

    else:
        expectation = dict(record.expectation)
        expectation["mode"] = "advisory"
        expectation["description"] = (
            f"{expectation.get('description') or ''} Accepted by {by} on {stamp}.".strip()
        )
        comment = (
            f"proposal {record.id[:8]} ({record.kind}), accepted by {by} on {stamp}: backtest failed on "
            f"{backtest.get('would_have_failed')} of {backtest.get('loads')} loads; "
            f"dry run {dry.get('outcome')}"
        )
        metrics = {record.requires["profile"]: record.requires["metrics"]} if record.requires else None

        def edit(text: str) -> str:
            return edited_text(
                text, [expectation], metrics, comments={expectation["id"]: comment}, filename=str(path)
            )

        def written(text: str) -> bool:
            return _written_already(text, record.expectation, str(path))

    # under the document's lock, as the web editor's saves: a save at the same moment is
    # neither lost nor overwritten (tests/web/test_concurrent_saves.py)
    with document_lock(path):
        return _accept_locked(store, record, path, root, edit, written, by, when)


def _accept_locked(
    store: Any,
    record: ProposalRecord,
    path: Path,
    root: Path,
    edit: Callable[[str], str],
    written: Callable[[str], bool],
    by: str,
    when: datetime,
) -> Accepted:
    from assay.platform.runs.faults import checkpoint

    before = read_text(path, "check document")
    if written(before):
        # a kill between the document's write and the decision's commit: the document holds the
        # proposal already; the decision is rolled forward, the document left as it is
        with store.transaction():
            store.decide_proposal(
                record.id,
                "accepted",
                by=by,
                at=when,
                document=str(path),
                detail={"diff": "", "rolled_forward": True},
            )
            _audit_accept(store, record, path, root, by, "")
        return Accepted(store.proposal(record.id), path, "")
    after = edit(before)
    diff = diff_text(before, after, str(path))
    with store.transaction():
        store.decide_proposal(
            record.id, "accepted", by=by, at=when, document=str(path), detail={"diff": diff}
        )
        _audit_accept(store, record, path, root, by, diff)
        write_document(path, after)
        checkpoint("after-document")  # the document written, the decision not committed yet
    return Accepted(store.proposal(record.id), path, diff)


def _audit_accept(store: Any, record: ProposalRecord, path: Path, root: Path, by: str, diff: str) -> None:
    try:
        document = str(path.resolve().relative_to(root.resolve()))
    except ValueError:  # a document outside the workspace: named in full
        document = str(path)
    store.audit(
        by, "proposal.accept", record.id, dataset=record.dataset, detail={"document": document, "diff": diff}
    )


def _written_already(text: str, expectation: dict[str, Any], filename: str) -> bool:
    """Whether the document ``text`` holds ``expectation`` already (its id, with the same rule or
    metric and condition): what an accept killed after writing the document left. The same id
    with another check is the user's own expectation: ``edited_text`` refuses it."""
    from assay.platform.checks.document import parse_document

    document = parse_document(text, filename=filename)
    found = next((e for e in document.expectations if e.id == expectation.get("id")), None)
    return found is not None and (found.rule, found.metric, found.expect) == (
        expectation.get("rule"),
        expectation.get("metric"),
        expectation.get("expect"),
    )


def _classified_already(text: str, classes: dict[str, list[str]], filename: str) -> bool:
    """Whether every column of ``classes`` is classified in the document ``text`` already (in any
    class): what an accept killed after writing the document left, or a person's own edit."""
    from assay.platform.checks.document import parse_document
    from assay.privacy import classes as classified

    known = classified(parse_document(text, filename=filename).dataset.classified)
    return all(c in known for columns in classes.values() for c in columns)


def reject(store: Any, proposal_id: str, *, by: str, why: str, at: datetime | None = None) -> ProposalRecord:
    """Reject an open proposal, saying why: it is not proposed again until its evidence changes.
    With its audit row (``proposal.reject``)."""
    if not why or not why.strip():
        raise ConfigError("say why the proposal is rejected: --why TEXT")
    with store.transaction():
        full = store.decide_proposal(
            proposal_id, "rejected", by=by, why=why.strip(), at=at or datetime.now(UTC)
        )
        found = store.proposal(full)
        store.audit(by, "proposal.reject", found.id, dataset=found.dataset, detail={"why": why.strip()})
    record: ProposalRecord = store.proposal(full)
    return record
