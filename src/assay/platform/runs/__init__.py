"""Runs: the run value (:mod:`.run`), what it leaves on disk (:mod:`.staging`), recovery of killed
runs (:mod:`.recover`), the named write boundaries where the crash suites kill a process
(:mod:`.faults`), THE driver that runs every flow through one outline (:mod:`.driver`), and the
flows on it (:mod:`.dqdl`, :mod:`.check`, :mod:`.event`)."""
