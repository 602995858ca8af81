"""Where users already work: assay's runs from an orchestrator.

:mod:`assay.integrations.airflow` (``assay[airflow]``) has Airflow 3 operators and a deferrable
sensor; :mod:`assay.integrations.dagster` (``assay[dagster]``) turns a check document into Dagster
asset checks. Each calls the same run functions as the ``assay`` command and hands back the same
JSON as its ``--json``; neither is imported by anything else in assay, so assay itself never needs
Airflow or Dagster installed.
"""
