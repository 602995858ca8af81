"""The bodies of ``assay check export-dqdl DOC [--out FILE]`` and ``assay check import-odcs
CONTRACT [--out FILE]``: read, convert, write, and return the exit code. A user's mistake is
raised as :class:`ConfigError` (the CLI's ``main`` prints it and exits 2).

>>> from pathlib import Path
>>> _ = Path("c.odcs.yaml").write_text('''
... apiVersion: v3.1.0
... kind: DataContract
... id: c
... servers: [{server: dev, type: local, path: t.csv, format: csv}]
... schema: [{name: t, quality: [{metric: rowCount, mustBeGreaterThan: 0}]}]
... ''')
>>> import_command(Path("c.odcs.yaml"), Path("t.yaml"))
wrote t.yaml: 1 expectation(s), 0 entries not imported
0
>>> export_command(Path("t.yaml"), None)
# DQDL ruleset exported from the assay check document of dataset c.t.
# source: t.csv
Rules = [
    # t-row-count
    RowCount > 0 labels=["expectation"="t-row-count", "severity"="error"]
]
0
"""

from __future__ import annotations

import sys
from pathlib import Path

from assay.lake.writers import write_text
from assay.platform.checks.document import load_document, parse_document, read_text
from assay.platform.checks.export import export_dqdl, export_entries
from assay.platform.checks.odcs import import_odcs


def export_command(doc: Path, out: Path | None) -> int:
    """Print (or write to ``out``) the check document ``doc`` as a DQDL ruleset; exit 0."""
    document = load_document(doc)
    text = export_dqdl(document)
    if out is None:
        sys.stdout.write(text)
        return 0
    write_text(out, text)
    entries = export_entries(document)
    written = sum(entry.rule is not None for entry in entries)
    print(f"wrote {out}: {written} rule(s), {len(entries) - written} expectation(s) as comments only")
    return 0


def import_command(contract: Path, out: Path | None) -> int:
    """Print (or write to ``out``) the ODCS contract ``contract`` as a check document; each entry
    that has no equivalent is named on stderr (and at the top of the document); exit 0."""
    result = import_odcs(read_text(contract, "contract file"), filename=str(contract))
    for item in result.unsupported:
        sys.stderr.write(f"{contract}: not imported: {item}\n")
    if out is None:
        sys.stdout.write(result.text)
        return 0
    write_text(out, result.text)
    count = len(parse_document(result.text).expectations)
    print(f"wrote {out}: {count} expectation(s), {len(result.unsupported)} entries not imported")
    return 0
