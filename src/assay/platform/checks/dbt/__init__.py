"""A dbt project's ``target/manifest.json`` as assay check documents, one per model
(``assay check import-dbt``): :mod:`.manifest` reads the manifest within limits, :mod:`.tests`
converts each generic test (one converter per test name), :mod:`.documents` groups them into
documents and :mod:`.command` writes them. docs/dbt.md has the table and the decisions."""
