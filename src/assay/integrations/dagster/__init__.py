"""Dagster (``pip install 'assay[dagster]'``): a check document as asset checks, and the resource
that opens assay's workspace and store (docs/dagster.md).

>>> from assay.integrations.dagster import AssayResource, build_assay_asset_checks
"""

from assay.integrations.dagster.checks import build_assay_asset_checks
from assay.integrations.dagster.resource import AssayResource

__all__ = ["AssayResource", "build_assay_asset_checks"]
