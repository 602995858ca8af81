"""Java regex syntax in rules: what RE2 can run is translated, what it cannot is refused by name."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from assay.dqdl import evaluate
from assay.lang import patterns

# (Java pattern, values it fully matches in Java, values it does not)
TRANSLATED = [
    (r"\p{L}+", ["Zoë", "Ålesund"], ["a1", ""]),
    (r"\p{Lu}\p{Ll}+", ["Émile", "Adelie"], ["émile", "ADELIE"]),
    (r"\p{Alpha}+", ["Gentoo"], ["Zoë"]),  # Java's POSIX classes are US-ASCII only
    (r"\p{Digit}{3}-\p{Upper}", ["123-A"], ["12-A", "١٢٣-A"]),
    (r"[\p{Punct}\s]+", ["!? .", "[]"], ["a"]),
    (r"\P{Alnum}+", ["--", "é"], ["a-"]),
    (r"\pL\p{gc=Nd}", ["a1"], ["1a"]),
    (r"(?<year>\d{4})-(?i:ab)", ["2024-AB", "2024-ab"], ["24-ab"]),
    (r"\Qa.b\E", ["a.b"], ["axb"]),
    (r"caf\u00e9|\x{263A}", ["café", "☺"], ["cafe"]),
    (r"a+?b*?", ["aab"], ["b"]),
    (r"\p{IsGreek}+ \p{sc=Latin}+", ["αβγ abc"], ["abc abc"]),
]


@pytest.mark.parametrize(("java", "matching", "other"), TRANSLATED)
def test_a_translated_pattern_matches_what_java_matches(
    java: str, matching: list[str], other: list[str]
) -> None:
    translated = patterns.to_re2(java)
    con = duckdb.connect()
    for value, expected in [(v, True) for v in matching] + [(v, False) for v in other]:
        (found,) = con.execute("select regexp_full_match(?, ?)", [value, translated]).fetchone() or (None,)
        assert found is expected, (java, translated, value)


REFUSED = [
    (r"(?=\d)\w+", "lookahead"),
    (r"\w+(?!x)", "negative lookahead"),
    (r"(?<=a)b", "lookbehind"),
    (r"(?<!a)b", "negative lookbehind"),
    (r"(?>ab|a)c", "atomic group"),
    (r"(a)\1", "backreference"),
    (r"(?<x>a)\k<x>", "named backreference"),
    (r"a*+b", "possessive quantifier"),
    (r"a++", "possessive quantifier"),
    (r"a{2,3}+", "possessive quantifier"),
    (r"[[:alpha:]]+", "POSIX bracket class '[:alpha:]'"),
    (r"[a-z&&[^aeiou]]", "intersection"),
    (r"[a-z[0-9]]", "nested character class"),
    (r"(?x) a b", "inline flag 'x'"),
    (r"(?U)\w", "inline flag 'U'"),
    (r"\p{InGreek}", "character property '\\p{InGreek}'"),
    (r"\p{IsLu}\p{javaLowerCase}*", "character property '\\p{javaLowerCase}'"),
    (r"a\Z", "anchor '\\Z'"),
]


@pytest.mark.parametrize(("java", "construct"), REFUSED)
def test_what_re2_cannot_run_is_refused_by_name(java: str, construct: str) -> None:
    with pytest.raises(patterns.PatternRefused) as caught:
        patterns.to_re2(java)
    assert isinstance(caught.value, patterns.ConfigError)
    assert construct in caught.value.message and java in caught.value.message


@pytest.mark.parametrize("java", ["[invalid(", "a{", "(ab", "*a"])
def test_an_invalid_pattern_is_reported_as_invalid(java: str) -> None:
    with pytest.raises(patterns.PatternRefused, match="Invalid regex pattern"):
        patterns.to_re2(java)


PENGUINS = pa.table({"species": ["Adelie", "Gentoo", "Chinstrap", "Adélie"], "island": ["Biscoe"] * 4})


def test_rules_run_translated_patterns_and_refuse_the_rest() -> None:
    result = evaluate(
        "Rules = [ "
        r'ColumnValues "species" matches "\p{Lu}\p{Ll}+", '
        r'ColumnValues "species" matches "\p{Alpha}+" with threshold >= 0.75, '
        r'ColumnValues "species" matches "(?=A)\w+", '
        r"""RowCount = 3 where "species rlike '^\\p{Alpha}+$'", """
        r'ColumnNamesMatchPattern "\p{Lower}+" '
        "]",
        PENGUINS,
    )
    outcomes = [(r.outcome, r.message or "") for r in result.rules]
    assert outcomes[0][0] == "Passed"  # \p{Ll} is Unicode: 'é' is a lowercase letter
    assert outcomes[1][0] == "Passed"  # \p{Alpha} is ASCII: 'Adélie' fails, 3 of 4 pass
    assert outcomes[2][0] == "Error" and "lookahead" in outcomes[2][1]
    assert outcomes[3][0] == "Passed", outcomes[3][1]
    assert outcomes[4][0] == "Passed", outcomes[4][1]


@pytest.mark.parametrize(
    ("java", "path", "kept"),
    [
        (r"^(?!.*\.tmp$).*", "landing/a.tmp", False),
        (r"^(?!.*\.tmp$).*", "landing/a.csv", True),
        (r"(\w)\1", "aa.csv", True),
        (r"(?<c>\w)\k<c>", "xx", True),
        (r"\p{Alpha}+\.csv", "data.csv", True),
    ],
)
def test_python_runs_what_name_and_path_patterns_use(java: str, path: str, kept: bool) -> None:
    assert bool(patterns.to_python(java).search(path)) is kept


def test_python_refuses_unicode_categories() -> None:
    with pytest.raises(patterns.PatternRefused, match="Unicode category"):
        patterns.to_python(r"\p{Lu}")
