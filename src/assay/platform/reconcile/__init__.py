"""``assay reconcile``: two tables compared row by row by key, on one engine or across engines
(docs/reconcile.md)."""

from assay.platform.reconcile.result import Result
from assay.platform.reconcile.run import reconcile
from assay.platform.reconcile.spec import Spec

__all__ = ["Result", "Spec", "reconcile"]
