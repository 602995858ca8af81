"""Which columns of a dataset are classified, for every flow: THE one answer (docs/privacy.md).

A dataset's settings live in one place, its document by the workspace's one rule
(:meth:`assay.workspace.Workspace.document_for`): a check document's ``dataset.classified``, or a
plain dataset file's ``classified:`` section, both read as :class:`assay.monitor.DatasetConfig`.
The check run, the gate, the profile, decisions, notifications and the web ask here, and mask
with :class:`assay.privacy.Masker`.
"""

from __future__ import annotations

from typing import Any

from assay.privacy import Masker, classes, masker
from assay.workspace import Workspace


def classified(workspace: Workspace, dataset: str) -> dict[str, str]:
    """Each classified column of ``dataset`` with its class (``{}``: none, or no document)."""
    from assay.platform.checks.settings import load_config

    path = workspace.document_for(dataset)
    if path is None:
        return {}
    return classes(load_config(path).classified)


def document_masker(document: Any, workspace: Workspace) -> Masker:
    """The masker of a check document's ``dataset.classified`` (a run of a document outside the
    workspace's folder classifies by the document it runs)."""
    return masker(classes(document.dataset.classified), workspace.root)


def masker_for(workspace: Workspace, dataset: str) -> Masker:
    """The masker of ``dataset``'s classified columns with the workspace's secret."""
    return masker(classified(workspace, dataset), workspace.root)


__all__ = ["classified", "document_masker", "masker_for"]
