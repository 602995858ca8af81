"""Runs: the run value (:mod:`.run`), recovery of killed runs (:mod:`.recover`) and the named
write boundaries where the crash suites kill a process (:mod:`.faults`)."""
