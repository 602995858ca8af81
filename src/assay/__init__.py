"""assay: a data-quality platform for tables that arrive in loads.

The public entry points live in submodules: :mod:`assay.dqdl` parses and evaluates
AWS Glue DQDL rulesets; :mod:`assay.cli` is the ``assay`` command.
"""

__version__ = "0.1.0"
