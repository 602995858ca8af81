"""The control plane: runs and their lifecycle (:mod:`.run`), recovery of killed runs
(:mod:`.recover`) and the flows that every entry point calls (:mod:`.flows`)."""
