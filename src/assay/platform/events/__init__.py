"""Event contracts (``kind: EventContract``) and the Event Quality Score (docs/events.md)."""
