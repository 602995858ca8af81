"""A dataset's document found by its name (Workspace.document_for) when its file is named
otherwise: each document is parsed once per process and version of the file, not on every lookup,
and an edit, a removal or a new document is seen on the next lookup."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay import workspace as workspace_module
from assay.workspace import Workspace

DOCUMENT = "kind: DatasetChecks\ndataset:\n  name: {name}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Workspace:
    space = Workspace(tmp_path)
    space.checks.mkdir()
    for n in range(50):
        (space.checks / f"doc{n:02d}.yaml").write_text(DOCUMENT.format(name=f"bronze.t{n:02d}"))
    (space.checks / "notes.yaml").write_text("just: a plain file\n")
    (space.checks / ".hidden.yaml").write_text(DOCUMENT.format(name="bronze.hidden"))
    return space


def test_each_document_is_parsed_once_for_any_number_of_lookups(
    folder: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[Path] = []
    real = workspace_module._names
    monkeypatch.setattr(workspace_module, "_names", lambda path: parsed.append(path) or real(path))
    for n in range(50):
        assert folder.document_for(f"bronze.t{n:02d}") == folder.checks / f"doc{n:02d}.yaml"
    assert len(parsed) == 50  # the 50 check documents once each (the plain file is never parsed)
    assert folder.document_for("bronze.hidden") is None  # dot files are not documents, as with glob


def test_an_edited_removed_or_added_document_is_seen_on_the_next_lookup(folder: Workspace) -> None:
    assert folder.document_for("bronze.t07") == folder.checks / "doc07.yaml"
    edited = folder.checks / "doc07.yaml"
    before = edited.stat()
    edited.write_text(DOCUMENT.format(name="bronze.renamed"))  # one byte longer
    assert folder.document_for("bronze.t07") is None
    assert folder.document_for("bronze.renamed") == edited
    # an edit of the same size: the modification time tells it apart
    edited.write_text(DOCUMENT.format(name="bronze.renamet"))
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert folder.document_for("bronze.renamet") == edited
    edited.unlink()
    assert folder.document_for("bronze.renamet") is None
    (folder.checks / "doc00a.yaml").write_text(DOCUMENT.format(name="bronze.t01"))
    assert folder.document_for("bronze.t01") == folder.checks / "doc00a.yaml"  # first by name, as before
