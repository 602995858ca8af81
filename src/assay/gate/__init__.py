"""The ingestion gate: hybrid-baseline trend rules, severity routing, quarantine, commit."""
