"""``write_text`` writes a file whole or not at all, through a ``.partial`` renamed into place; but
a path that is not a regular file (``--json /dev/stdout``, ``--junit /dev/null``, a named pipe a
CI step reads) is written as it is: renaming over it would replace a device or a pipe with a
file (as root, ``--json /dev/null`` replaced the machine's /dev/null), and a symbolic link is
followed, not replaced."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.lake.writers import write_text


def test_a_named_pipe_is_written_through_and_stays_a_pipe(tmp_path: Path) -> None:
    pipe = tmp_path / "report.pipe"
    os.mkfifo(pipe)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    write_text(pipe, '{"ok": true}\n')
    reader.join(timeout=60)  # a bound, should the pipe be replaced and the reader never see an end
    assert read == ['{"ok": true}\n']
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert not (tmp_path / "report.pipe.partial").exists()


def test_a_symbolic_link_is_followed_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "run.json"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new"
    assert not list(tmp_path.glob("*.partial")) and not list(target.parent.glob("*.partial"))


def test_a_regular_file_is_still_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    out.write_text("old", encoding="utf-8")
    seen: list[str] = []
    write_text(out, "new", before_rename=lambda: seen.append(out.read_text(encoding="utf-8")))
    assert seen == ["old"]  # until the rename, a reader sees the old file whole
    assert out.read_text(encoding="utf-8") == "new"


def test_a_folder_is_a_clear_mistake(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        write_text(tmp_path, "x")
