"""Reports for the tools around a run: a JUnit XML file that CI test-report viewers read
(:mod:`.junit`) and GitHub Actions annotations of a document's mistakes (:mod:`.github`).
Each renders data a command already has (its ``--json`` payload, a document's problems)."""
