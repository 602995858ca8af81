"""Failed attempts to present a secret (a bearer token, the login form's token, a login link),
counted per client address: :data:`FAILURES` failures within :data:`WINDOW` seconds lock the
address out until the oldest of them is that old, and every secret it sends meanwhile is refused
(HTTP 429 with ``Retry-After``) without being looked up, so a guess is never answered.

Why per address and not per user: a token or a login code names no user until it matches one,
so a failed attempt has no user to count against, and a lock per user name would let anyone
lock a known user out. A valid secret forgives no failure (else a client holding one could
interleave it with guesses without end). Why in memory: ``assay serve`` is one process, the secrets are 256
random bits (no guessing finishes, in any window), so the limit is there to stop a client
hammering the store, and a restart forgetting it costs nothing; keeping it in the store would
cost a write per refused request.

>>> now = [0.0]
>>> attempts = Attempts(failures=2, window=60, clock=lambda: now[0])
>>> attempts.failed("203.0.113.7"), attempts.retry_after("203.0.113.7")
(1, None)
>>> attempts.failed("203.0.113.7"), attempts.retry_after("203.0.113.7")
(2, 60)
>>> now[0] = 45.5; attempts.retry_after("203.0.113.7"), attempts.retry_after("198.51.100.1")
(15, None)
>>> now[0] = 60; attempts.retry_after("203.0.113.7") is None
True
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

FAILURES = 10
WINDOW = 300.0
ADDRESSES = 10_000
"""Addresses remembered at most: past it, the one whose failures began first is forgotten (a
client spraying addresses fills memory no further)."""


@dataclass
class Attempts:
    """The failed attempts of each client address within the last ``window`` seconds."""

    failures: int = FAILURES
    window: float = WINDOW
    clock: Callable[[], float] = time.monotonic
    _seen: dict[str, deque[float]] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def retry_after(self, address: str) -> int | None:
        """Seconds until ``address`` may try again (rounded up), or None when it may now."""
        with self._lock:
            times = self._recent(address)
            if times is None or len(times) < self.failures:
                return None
            return max(1, math.ceil(times[0] + self.window - self.clock()))

    def failed(self, address: str) -> int:
        """Count a failed attempt of ``address``; returns its failures within the window."""
        with self._lock:
            times = self._recent(address)
            if times is None:
                if len(self._seen) >= ADDRESSES:
                    self._seen.pop(next(iter(self._seen)))
                times = self._seen[address] = deque()
            times.append(self.clock())
            return len(times)

    def _recent(self, address: str) -> deque[float] | None:
        times = self._seen.get(address)
        if times is None:
            return None
        oldest = self.clock() - self.window
        while times and times[0] <= oldest:
            times.popleft()
        if not times:
            del self._seen[address]
            return None
        return times
