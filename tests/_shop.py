"""The shop's files that the five-flows tests (tests/platform/test_five_flows.py), the
OpenLineage events' tests (tests/lineage/test_events.py) and the Airflow operators' tests
(tests/airflow/) run their flows on: the CSV header, the gate's rule file, the orders' check
document and the event contract of the orders placed."""

HEADER = "shop,order_id,day,status,amount"
RULES_GATE = """rule_id,contributor_type,category,severity,rule,description
R01,all,validity,critical,amount >= 0,No negative amounts
"""
CONTRACT = """apiVersion: assay/v1
kind: EventContract
event:
  name: shop.order_placed
  source: {path: "../events/*.jsonl"}
  key: event_id
  event_time: at
  producer: {team: shop-data}
consumer: {team: finance}
window: {grain: day}
fields:
  amount: {present: true, range: [0, 1.0e9]}
severity: error
"""

CHECKS = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: shop.orders
  source: {path: "../data/*.csv"}
  owners: {team: shop-data}
# the drift monitor judges the check run's slice too (issue 30): the never-seen status would be a
# second incident, the one the profile flow's scenario is about; here only the negative amount
monitor: {not_categorical: [status]}
profiles:
  - id: daily
    slice: {column: day}
    metrics: [row_count, {min: [amount]}]
expectations:
  - {id: no-negative-amounts, metric: daily.min(amount), expect: ">= 0", severity: error}
"""
