"""Measurement: metric requests as aggregate expressions, and the planner that shares one scan."""

from assay.measure.planner import Measurements, ScanPlan
from assay.measure.requests import Aggregate, Frequencies, FrequencyAggregate, Request, Scalar

__all__ = ["Aggregate", "Frequencies", "FrequencyAggregate", "Measurements", "Request", "Scalar", "ScanPlan"]
