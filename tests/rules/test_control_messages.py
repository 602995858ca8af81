"""The gate's control CSV: a row condition that does not parse is named in the user's words,
never in the parser's (a tester's ``gsp >>> 1`` printed sqlglot's class names and the terminal's
underline codes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.rules import control

HEADER = "rule_id,contributor_type,category,severity,rule,description\n"


@pytest.mark.parametrize(
    ("condition", "said"),
    [
        ("gsp >>> 1", "near '>'"),
        ("credit_limit = ", "near '='"),
        ("balance > (1", "')'"),
        ("a + * b > 1", "near 'b'"),
    ],
)
def test_a_condition_that_does_not_parse_says_where_in_plain_words(
    tmp_path: Path, condition: str, said: str
) -> None:
    path = tmp_path / "rules.csv"
    path.write_text(HEADER + f"R1,all,domain,critical,{condition},x\n")
    with pytest.raises(ConfigError) as raised:
        control.load(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:2: rule R1 is neither a DQDL rule nor a valid row condition")
    assert said in message
    assert "\x1b" not in message and "<class" not in message and "sqlglot" not in message
    assert not re.search(r"\b(BitwiseRightShift|EQ|Required keyword)\b", message), message
