"""Check documents (``kind: DatasetChecks``): what to measure, what makes it wrong, and their runs."""
