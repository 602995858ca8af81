"""Parse errors a person can act on: reported where the mistake is, with a hint where one helps."""

from __future__ import annotations

import pytest

from assay.dqdl import DQDLSyntaxError, parse


def _error(text: str) -> DQDLSyntaxError:
    with pytest.raises(DQDLSyntaxError) as caught:
        parse(text)
    return caught.value


@pytest.mark.parametrize(
    ("text", "line", "column", "opened"),
    [
        # The rule list closes on the next line; the ')' is missing after "a", on line 2.
        ('Rules = [\n    (RowCount > 0) and (IsComplete "a"\n]', 2, 39, "2:24"),
        ("Rules = [ RowCount > avg(last(3) ]", 1, 33, "1:25"),
        ("Rules = [ RowCount > (1 + 2 ]", 1, 28, "1:22"),
        ('Rules = [ ColumnValues "d" > (now() - 1 days ]', 1, 45, "1:30"),
    ],
)
def test_a_missing_parenthesis_is_reported_where_it_is_missing(
    text: str, line: int, column: int, opened: str
) -> None:
    error = _error(text)
    assert (error.line, error.column) == (line, column)
    assert "missing ')'" in error.reason and f"'(' at {opened}" in error.reason
    caret_line = str(error).splitlines()[-1]
    assert caret_line.index("^") - 4 == column - 1  # the caret sits under the column


@pytest.mark.parametrize(
    ("written", "section"), [("rules", "Rules"), ("RULES", "Rules"), ("analyzers", "Analyzers")]
)
def test_a_section_name_in_the_wrong_case_gets_a_hint(written: str, section: str) -> None:
    error = _error(f"{written} = [ RowCount > 0 ]")
    assert "case-sensitive" in error.reason and f"'{section}'" in error.reason
    assert (error.line, error.column) == (1, 1)


def test_a_string_constant_may_still_be_named_rules() -> None:
    ruleset = parse('rules = "a"\nnames = ["x", "y"]\nRules = [ ColumnValues "c" = $rules ]')
    assert [c.name for c in ruleset.constants] == ["rules", "names"]
