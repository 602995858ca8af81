"""The shop's files that the five-flows tests (tests/platform/test_five_flows.py) and the
OpenLineage events' tests (tests/lineage/test_events.py) both run their flows on: the CSV header,
the gate's rule file and the event contract of the orders placed."""

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
