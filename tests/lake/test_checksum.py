"""File checksums begun early (assay.lake.checksum): the command starts reading the input's
checksum before its imports, and the profile or the gate takes it if the file is unchanged."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import CancelledError
from datetime import date
from pathlib import Path

import pytest

from assay.lake import checksum
from assay.store import MetricStore


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_begun_checksum_is_handed_once_to_whoever_asks_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "load.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 300_000)  # several blocks
    begun = checksum.begin(path)
    assert begun is not None and checksum.begin(path) is begun  # begun once
    taken = checksum.later(str(path))
    assert taken is begun and taken.result() == _sha(path)
    again = checksum.later(path)  # handed out once: a new reading
    assert again is not None and again is not begun and again.result() == _sha(path)


def test_a_file_changed_since_its_checksum_began_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "load.csv"
    path.write_bytes(b"a\n1\n")
    begun = checksum.begin(path)
    assert begun is not None
    begun.result()
    path.write_bytes(b"a\n1\n2\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    taken = checksum.later(path)
    assert taken is not None and taken is not begun
    assert taken.result() == _sha(path) != begun.result()


def test_no_checksum_is_begun_for_what_is_no_regular_file(tmp_path: Path) -> None:
    assert checksum.begin(tmp_path / "missing.csv") is None
    assert checksum.begin(tmp_path) is None
    assert checksum.begin("spark:db.table") is None
    assert checksum.later(tmp_path) is None


def test_a_cancelled_reading_stops_at_its_next_block(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * (3 * checksum.BLOCK))
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError, match="no longer needed"):
        checksum.digest(path, stop=stop)
    assert checksum.digest(path) == _sha(path)


def test_the_profile_takes_the_checksum_its_command_began(tmp_path: Path) -> None:
    from assay.platform.flows import profile

    path = tmp_path / "load.csv"
    path.write_text("venue,qty\nXLON,1\nXPAR,2\n")
    begun = checksum.begin(path)
    with MetricStore.open(workspace=tmp_path) as store:
        result = profile(path, dataset="d", load_date=date(2026, 1, 1), store=store, workspace=tmp_path)
        run = store.runs(limit=1)[0]
    assert begun is not None and checksum.later(path) is not begun  # taken by the profile
    assert result.load_id is not None
    assert [dict(item) for item in run.inputs] == [{"path": str(path), "sha256": _sha(path)}]
