"""Rules compiled into plans: metric requests, verdicts and row predicates; control-CSV rulesets."""
