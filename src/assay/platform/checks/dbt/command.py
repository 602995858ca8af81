"""The body of ``assay check import-dbt MANIFEST --source-template T [--out DIR] [--force]
[--json]``: read, convert, write each model's document inside ``DIR``, report, return the exit
code. Every test not converted is named on stderr. A user's mistake (a file that is not a
manifest, an existing document without ``--force``, a manifest none of whose tests converts) is
a :class:`ConfigError`: exit 2, and nothing is written."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.lake.writers import write_text
from assay.platform.checks.dbt.documents import (
    ImportResult,
    ModelDocument,
    SourceTemplate,
    describe,
    import_dbt,
)
from assay.platform.checks.dbt.manifest import load_manifest


def import_dbt_command(
    manifest: Path, source_template: str, out: Path | None, *, force: bool = False, json_out: bool = False
) -> int:
    """Convert ``manifest`` and write (or print) its documents; exit 0 when a test converted."""
    template = SourceTemplate.parse(source_template)
    result = import_dbt(load_manifest(manifest), template)
    for item in result.not_converted:
        model = f" (model {item.model})" if item.model else ""
        sys.stderr.write(f"{manifest}: not converted: {item.test}{model}: {item.reason}\n")
    if not result.documents:
        if json_out:
            sys.stdout.write(_report(manifest, out, result, {}))
        said = f"none of its {result.tests} tests could be converted" if result.tests else "it has no tests"
        raise ConfigError(f"{manifest}: {said}; no document was written")
    targets = _targets(out, result.documents, force) if out is not None else {}
    for doc in result.documents:
        if out is None and not json_out:
            sys.stdout.write(f"---\n# file: {doc.file}\n{doc.text}")
        elif out is not None:
            write_text(targets[doc.file], doc.text)
    if json_out:
        sys.stdout.write(_report(manifest, out, result, targets))
        return 0
    if out is not None:
        for doc in result.documents:
            print(f"wrote {targets[doc.file]}: {doc.model}, {len(doc.tests)} expectation(s)")
    converted = sum(len(doc.tests) for doc in result.documents)
    (print if out is not None else _note)(
        f"converted {converted} of {result.tests} tests into {len(result.documents)} document(s); "
        f"{len(result.not_converted)} not converted"
    )
    return 0


def _note(text: str) -> None:
    # with the documents on stdout, the summary goes to stderr so that stdout stays YAML
    sys.stderr.write(text + "\n")


def _targets(out: Path, documents: tuple[ModelDocument, ...], force: bool) -> dict[str, Path]:
    """Each document's path in ``out``: its file name is the model's (a plain name, checked when
    the document was made) and must resolve, symlinks followed, inside ``out``. An existing file
    is refused without ``force``, every one named, before anything is written."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file, not a folder")
    root = out.resolve()
    targets: dict[str, Path] = {}
    existing = []
    for doc in documents:
        target = out / doc.file
        if not target.resolve().is_relative_to(root) or target.resolve().parent != root:
            raise ConfigError(f"--out {out}: {doc.file} would be written outside the folder (a symlink?)")
        if target.exists() and not force:
            existing.append(str(target))
        targets[doc.file] = target
    if existing:
        raise ConfigError(
            f"--out {out}: {', '.join(existing)} already exist(s); nothing was written "
            "(--force replaces them)"
        )
    return targets


def _report(manifest: Path, out: Path | None, result: ImportResult, targets: dict[str, Path]) -> str:
    payload: dict[str, Any] = {
        "manifest": str(manifest),
        "out": None if out is None else str(out),
        "tests": result.tests,
        "documents": [
            {
                "model": doc.model,
                "unique_id": doc.unique_id,
                "dataset": doc.dataset,
                "file": str(targets[doc.file]) if doc.file in targets else doc.file,
                "expectations": len(doc.tests),
                "text": doc.text,
            }
            for doc in result.documents
        ],
        "converted": describe(result),
        "not_converted": [
            {"test": item.test, "model": item.model, "reason": item.reason} for item in result.not_converted
        ],
    }
    return json.dumps(payload, indent=2) + "\n"
