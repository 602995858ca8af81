"""``--fail-on``: one vocabulary for every command (README.md, "Exit codes"), the old words kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from _invoke import assay
from assay.errors import ConfigError
from assay.vocabulary import FAIL_ON_ALIASES, Severity, fail_on

COMMANDS = {
    "dqdl run": ["dqdl", "run", "rules.dqdl", "--data", "data.csv"],
    "gate": ["gate", "batch.csv", "--rules", "rules.csv", "--contributor", "c1"],
    "profile": ["profile", "data.csv", "--dataset", "d", "--load-date", "2024-01-01"],
    "check run": ["check", "run", "checks.yaml"],
}
"""Every command that takes --fail-on, with the arguments it needs to reach the option's check
(the files need not exist: the word is checked before anything is read)."""


@pytest.mark.parametrize(
    ("word", "level"),
    [
        ("critical", Severity.CRITICAL),
        ("error", Severity.ERROR),
        ("warning", Severity.WARNING),
        ("failed", Severity.WARNING),  # dqdl run: failed or in error
        ("hard", Severity.CRITICAL),  # profile: a hard alert
        ("soft", Severity.WARNING),  # profile: any alert
        (" Critical ", Severity.CRITICAL),
    ],
)
def test_each_word_and_each_old_spelling_names_one_level(word: str, level: Severity) -> None:
    assert fail_on(word) is level


def test_every_old_spelling_is_an_alias_and_none_shadows_a_level() -> None:
    assert set(FAIL_ON_ALIASES) == {"failed", "hard", "soft"}
    assert not set(FAIL_ON_ALIASES) & {s.value for s in Severity}


def test_a_bad_word_lists_the_words_accepted() -> None:
    with pytest.raises(ConfigError) as raised:
        fail_on("fatal")
    assert str(raised.value) == (
        "--fail-on: 'fatal' is not a level; use critical, error or warning "
        "(also accepted: failed = warning, hard = critical, soft = warning)"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_bad_word_the_same_way(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = assay(*COMMANDS[command], "--workspace", str(tmp_path / "ws"), "--fail-on", "fatal")
    err = capsys.readouterr().err
    assert code == 2
    assert "--fail-on: 'fatal' is not a level; use critical, error or warning" in err
    assert "Traceback" not in err
    assert not (tmp_path / "ws").exists()  # refused before anything was written


RULES = 'Rules = [ RowCount = 3, IsComplete "name", ColumnValues "amount" > 0 ]'


@pytest.mark.parametrize(
    ("data", "exits"),
    [
        # a rule failed: a DQDL failure is a warning (DQDL rules carry no severity)
        (
            "name,amount\na,1\nb,2\nc,-1\n",
            {"critical": 0, "error": 0, "warning": 1, "failed": 1, "hard": 0, "soft": 1},
        ),
        # a rule in Error (no such column): an error, which `error` (dqdl run's old word) catches
        (
            "name,other\na,1\nb,2\nc,3\n",
            {"critical": 0, "error": 1, "warning": 1, "failed": 1, "hard": 0, "soft": 1},
        ),
    ],
)
def test_dqdl_run_exits_by_level(
    data: str, exits: dict[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rules.dqdl").write_text(RULES)
    (tmp_path / "data.csv").write_text(data)
    args = ["dqdl", "run", str(tmp_path / "rules.dqdl"), "--data", str(tmp_path / "data.csv")]
    found = {word: assay(*args, "--fail-on", word) for word in exits}
    capsys.readouterr()
    assert found == exits
