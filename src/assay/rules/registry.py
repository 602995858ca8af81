"""The rule kinds: one compiler per DQDL rule type, as a table (STYLE.md habit 2)."""

from __future__ import annotations

from dataclasses import replace

from assay.lang.dqdl import ast
from assay.lang.dqdl.catalog import lookup
from assay.rules import columns, custom, dataset, distribution, files, references, values
from assay.rules.plan import Anomalous, Context, Kind, LeafPlan, RuleError

KINDS: dict[str, Kind] = {
    "RowCount": dataset.row_count,
    "ColumnCount": dataset.column_count,
    "ColumnExists": dataset.column_exists,
    "ColumnNamesMatchPattern": dataset.column_names_match_pattern,
    "Completeness": columns.completeness,
    "IsComplete": columns.is_complete,
    "Uniqueness": columns.uniqueness,
    "IsUnique": columns.is_unique,
    "IsPrimaryKey": columns.is_primary_key,
    "UniqueValueRatio": columns.unique_value_ratio,
    "DistinctValuesCount": columns.distinct_values_count,
    "Entropy": columns.entropy,
    "Mean": columns.mean,
    "Sum": columns.total,
    "StandardDeviation": columns.standard_deviation,
    "Variance": columns.variance,
    "ColumnCorrelation": columns.column_correlation,
    "ZerosCount": columns.zeros_count,
    "Range": columns.value_range,
    "InterquartileRange": columns.interquartile_range,
    "Skewness": columns.skewness,
    "Kurtosis": columns.kurtosis,
    "DuplicateRowCount": columns.duplicate_row_count,
    "Distribution": distribution.distribution,
    "ColumnValues": values.column_values,
    "ColumnLength": values.column_length,
    "ColumnDataType": values.column_data_type,
    "DataFreshness": values.data_freshness,
    "CustomSql": custom.custom_sql,
    "RowCountMatch": references.row_count_match,
    "ReferentialIntegrity": references.referential_integrity,
    "DatasetMatch": references.dataset_match,
    "SchemaMatch": references.schema_match,
    "AggregateMatch": references.aggregate_match,
    "FileFreshness": files.file_freshness,
    "FileSize": files.file_size,
    "FileUniqueness": files.file_uniqueness,
    "FileMatch": files.file_match,
}

# The rule types whose metric DetectAnomalies can watch (Glue's list, DQDL.md §8).
ANOMALY_TYPES = (
    "RowCount",
    "Completeness",
    "Uniqueness",
    "Mean",
    "Sum",
    "StandardDeviation",
    "Entropy",
    "DistinctValuesCount",
    "UniqueValueRatio",
    "ColumnLength",
    "ColumnValues",
    "ColumnCorrelation",
    "CustomSql",
    "ColumnCount",
)


def compile_leaf(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """A simple rule's plan. Raises :class:`RuleError` when the rule cannot be evaluated."""
    if rule.type == "DetectAnomalies":
        return detect_anomalies(rule, ctx)
    kind = KINDS.get(rule.type)
    if kind is None:
        raise RuleError(f"{rule.type} cannot be evaluated")
    return kind(rule, ctx)


def detect_anomalies(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``DetectAnomalies "RowCount"``, ``DetectAnomalies of Completeness of "c"``: measure the
    named rule's metric and judge it against the band its own history predicts."""
    target = rule.params[0].text
    spec = lookup(target)
    if spec is None or target not in ANOMALY_TYPES:
        raise RuleError(f"DetectAnomalies cannot watch '{target}': use one of {', '.join(ANOMALY_TYPES)}")
    inner = ast.Rule(target, rule.params[1:], span=rule.span)
    if not spec.accepts(len(inner.params)):
        raise RuleError(
            f"DetectAnomalies of {target} needs {spec.min_params} parameter(s) after the rule name"
        )
    plan = KINDS[target](inner, ctx)
    if not plan.metrics:
        raise RuleError(f"{target} yields no metric to watch here")
    metric = plan.metrics[0]
    return replace(plan, rule=rule, verdict=Anomalous(metric.display, metric.stored), row=None)
